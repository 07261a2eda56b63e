"""Every capture command reads a storage URL as it reads the local file or folder (Azurite):
the replay of a Capture container equals the local replay, its second read downloads and
decodes nothing (staging by ETag, the capture cache keyed by blob and ETag), and whatif, cti,
translate, explain and impact print what they print for the local capture."""

from __future__ import annotations

import json
import re
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from tests.captures.helpers import run_cli
from tests.storage.azurite import Azurite, upload_folder
from tests.storage.conftest import SAMPLES, container_name

CAPTURE = SAMPLES / "captures" / "eventhubs-capture"
SCENARIO = SAMPLES / "scenarios" / "late_senders"
JOBS = SAMPLES / "jobs"


def replay(capture: str, out: Path) -> tuple[dict, pl.DataFrame, str]:
    code, stdout, stderr = run_cli(
        "replay", capture, "--out", str(out), "--timestamp-by", "event_time", "--json"
    )
    assert code == 0, stderr
    return json.loads(stdout), pl.read_parquet(out / "outcomes.parquet"), stderr


def _without_source(summary: dict) -> dict:
    return summary | {"input": summary["input"] | {"source": None}}


def test_replay_of_a_capture_container_equals_the_local_replay(
    storage: Azurite, tmp_path: Path
) -> None:
    name = container_name("capture")
    blobs = upload_folder(storage.connection_string, name, CAPTURE)
    assert len(blobs) == 26
    local_summary, local_rows, _ = replay(str(CAPTURE), tmp_path / "local")
    url = f"az://{name}/"
    summary, rows, told = replay(url, tmp_path / "remote")
    assert f"az://{name}/: 26 blobs, 26 downloaded" in told
    assert "capture cache: 0 of 26 Capture files read" in told
    assert summary["input"]["source"] == f"az://{name}"  # the URL, not the staging folder
    assert _without_source(summary) == _without_source(local_summary)
    assert rows.height == local_rows.height == 400
    assert_frame_equal(rows, local_rows)

    # again: nothing downloaded (same ETags), nothing decoded (the capture cache)
    _, again, told = replay(url, tmp_path / "again")
    assert f"az://{name}/: 26 blobs, 0 downloaded (0.0 MB), 26 unchanged" in told
    assert "capture cache: 26 of 26 Capture files read" in told
    assert_frame_equal(again, local_rows)

    # one blob rewritten: only it is downloaded and decoded again
    first = blobs[0]
    data = (CAPTURE / first).read_bytes()
    from azure.storage.blob import ContainerClient

    client = ContainerClient.from_connection_string(storage.connection_string, name)
    client.upload_blob(first, data, overwrite=True)  # same bytes, a new ETag
    _, _, told = replay(url, tmp_path / "changed")
    assert f"az://{name}/: 26 blobs, 1 downloaded" in told
    assert "capture cache: 25 of 26 Capture files read" in told

    # a partition's folder, by the https form of the URL
    https = f"https://devstoreaccount1.blob.core.windows.net/{name}/orderdoc/late-senders/3/"
    part, part_rows, _ = replay(https, tmp_path / "partition")
    assert part["input"]["source"] == https.rstrip("/")
    assert set(part_rows["PartitionId"].unique()) == {3}


def _normal(text: str, *names: str) -> str:
    for name in names:
        text = text.replace(name, "INPUT")
    return re.sub(r"\d+\.\d+ s\)", "N s)", text)


CAPTURE_COMMANDS = {
    "whatif": ["whatif", "{capture}", "--timestamp-by", "event_time"],
    "cti": ["cti", "{capture}", "--out", "{out}", "--cti-every", "100", "--start-col", "event_time"],
    "translate": ["translate", "--job-definition", "{job}", "--parameters", "{parameters}",
                  "--to", "spark", "--events", "{capture}", "--window", "1m"],
    "explain": ["explain", "--events", "{capture}", "--timestamp-by", "event_time"],
    "impact": ["impact", "{capture}", "--job-definition", "{job}", "--parameters",
               "{parameters}", "--out", "{out}"],
}  # fmt: skip


@pytest.fixture(scope="module")
def scenario_container(azurite_server: Azurite) -> str:
    """The late_senders capture and its job definition in a container of their own."""
    name = container_name("scenario")
    upload_folder(azurite_server.connection_string, name, SCENARIO, "capture/")
    upload_folder(azurite_server.connection_string, name, JOBS, "jobs/")
    return name


@pytest.mark.parametrize("command", sorted(CAPTURE_COMMANDS))
def test_capture_commands_read_a_url_as_the_local_file(
    command: str, storage: Azurite, scenario_container: str, tmp_path: Path
) -> None:
    url = f"az://{scenario_container}"
    given = {
        "remote": {
            "capture": f"{url}/capture/capture.csv",
            "job": f"{url}/jobs/late_senders.arm.json",
            "parameters": f"{url}/jobs/late_senders.parameters.json",
        },
        "local": {
            "capture": str(SCENARIO / "capture.csv"),
            "job": str(JOBS / "late_senders.arm.json"),
            "parameters": str(JOBS / "late_senders.parameters.json"),
        },
    }
    printed = {}
    for where, names in given.items():
        argv = [a.format(**names, out=str(tmp_path / "out")) for a in CAPTURE_COMMANDS[command]]
        code, stdout, stderr = run_cli(*argv)
        assert code == 0, stderr
        assert "staging" not in stdout
        assert "view-" not in stdout
        printed[where] = _normal(stdout, *names.values())
        if where == "remote":
            assert f"{url}/capture/capture.csv: 1 blob, " in stderr
    assert printed["remote"] == printed["local"]
