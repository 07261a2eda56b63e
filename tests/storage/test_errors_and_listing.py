"""What goes wrong with a storage account is one line naming the URL, exit 2, no secret:
bad credentials, a missing container, a failed read (a SAS that may list but not read), an
empty folder. ``--since``/``--until`` list only the hour folders of ASA's layout they need
(Azurite)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from diagnostics.storage.client import Container
from diagnostics.storage.listing import select_blobs
from diagnostics.storage.urls import parse_url
from tests.captures.helpers import run_cli
from tests.storage.azurite import KEY, Azurite, upload_folder
from tests.storage.conftest import SAMPLES, container_name

JOB = "resourceId=/SUBSCRIPTIONS/0/RESOURCEGROUPS/RG/PROVIDERS/MICROSOFT.STREAMANALYTICS/STREAMINGJOBS/ORDERS"
WRONG_KEY = "V3JvbmdLZXlXcm9uZ0tleVdyb25nS2V5V3JvbmdLZXlXcm9uZ0tleVdyb25nS2V5V3JvbmdLZXk="


@pytest.fixture(scope="module")
def capture_container(azurite_server: Azurite) -> str:
    name = container_name("errors")
    upload_folder(
        azurite_server.connection_string, name, SAMPLES / "captures" / "eventhubs-capture"
    )
    return name


def one_line_error(*argv: str) -> str:
    """The error line of a command that fails with exit 2 (progress lines may precede it:
    "downloading N blobs"; nothing follows it)."""
    code, stdout, stderr = run_cli(*argv)
    assert code == 2, stderr
    assert stdout == ""
    lines = [line for line in stderr.splitlines() if line.strip()]
    errors = [line for line in lines if "error:" in line]
    assert len(errors) == 1, stderr
    assert lines[-1] == errors[0], stderr
    assert "Traceback" not in stderr
    return errors[0]


def replay_argv(url: str, tmp_path: Path) -> list[str]:
    return ["replay", url, "--out", str(tmp_path / "out"), "--timestamp-by", "event_time"]


def test_bad_credentials_are_one_line_without_the_key(
    storage: Azurite, capture_container: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(
        "AZURE_STORAGE_CONNECTION_STRING", storage.connection_string.replace(KEY, WRONG_KEY)
    )
    line = one_line_error(*replay_argv(f"az://{capture_container}/", tmp_path))
    assert line.startswith(f"orderdoc replay: error: az://{capture_container}/: access refused")
    assert "account 'devstoreaccount1' (account key from AZURE_STORAGE_CONNECTION_STRING)" in line
    assert WRONG_KEY not in line
    assert WRONG_KEY[:12] not in line


def test_a_missing_container_is_one_line(storage: Azurite, tmp_path: Path) -> None:
    line = one_line_error(*replay_argv("az://no-such-container/hub/", tmp_path))
    assert line == (
        "orderdoc replay: error: az://no-such-container/hub/: not found (no such container)"
    )


def test_a_failed_read_is_one_line_without_the_token(
    storage: Azurite, capture_container: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from azure.storage.blob import ContainerSasPermissions, generate_container_sas

    token = generate_container_sas(
        "devstoreaccount1",
        capture_container,
        account_key=KEY,
        permission=ContainerSasPermissions(list=True),  # may list, may not read
        expiry=datetime.now(UTC) + timedelta(hours=1),
    )
    monkeypatch.delenv("AZURE_STORAGE_CONNECTION_STRING")
    monkeypatch.setenv("AZURE_STORAGE_ACCOUNT", "devstoreaccount1")
    monkeypatch.setenv("AZURE_STORAGE_SAS_TOKEN", token)
    monkeypatch.setenv("AZURE_STORAGE_BLOB_ENDPOINT", storage.endpoint)
    line = one_line_error(*replay_argv(f"az://{capture_container}/", tmp_path))
    # the listing worked; the first read was refused
    assert line.startswith(f"orderdoc replay: error: az://{capture_container}/orderdoc/")
    assert (
        ".avro: access refused: account 'devstoreaccount1' (SAS token from AZURE_STORAGE_SAS_TOKEN)"
        in line
    )
    signature = token.split("sig=")[1].split("&")[0]
    assert signature not in line
    assert token not in line


def test_an_empty_folder_and_a_bad_url_are_one_line(
    storage: Azurite, capture_container: str, tmp_path: Path
) -> None:
    line = one_line_error(*replay_argv(f"az://{capture_container}/nothing/here/", tmp_path))
    assert line.endswith(
        f"az://{capture_container}/nothing/here: no blobs there (a container or folder with nothing in it)"
    )
    line = one_line_error(*replay_argv("az://Bad_Name/x", tmp_path))
    assert "is not a container name" in line


def test_since_until_list_only_the_hours_needed(storage: Azurite, tmp_path: Path) -> None:
    name = container_name("hours")
    logs = tmp_path / "logs"
    start = datetime(2024, 3, 5, 0, tzinfo=UTC)
    for hour in range(48):  # two days of hourly blobs
        at = start + timedelta(hours=hour)
        path = logs / f"{JOB}/y={at:%Y}/m={at:%m}/d={at:%d}/h={at:%H}/m=00/PT1H.json"
        path.parent.mkdir(parents=True)
        path.write_text(f'{{"time": "{at.isoformat()}"}}\n')
    (logs / "README.txt").write_text("outside the layout")
    upload_folder(storage.connection_string, name, logs)
    container = Container.open(parse_url(f"az://{name}/"))
    listed: list[str] = []
    since, until = datetime(2024, 3, 5, 22, 30, tzinfo=UTC), datetime(2024, 3, 6, 1, tzinfo=UTC)
    found = select_blobs(container, "", since, until, listed=listed.append)
    assert [b.name.split("/y=")[1] for b in found if "/y=" in b.name] == [
        "2024/m=03/d=05/h=22/m=00/PT1H.json",
        "2024/m=03/d=05/h=23/m=00/PT1H.json",
        "2024/m=03/d=06/h=00/m=00/PT1H.json",
    ]
    assert [b.name for b in found if "/y=" not in b.name] == ["README.txt"]
    # the folders above y= one level at a time, then one listing per hour of the range
    assert listed[0] == ""
    assert listed[-1].endswith("STREAMINGJOBS/ORDERS/")
    assert len(listed) == JOB.count("/") + 2
    everything = select_blobs(container, "")
    assert len(everything) == 49


def test_since_after_until_is_refused(tmp_path: Path) -> None:
    line = one_line_error(
        "aggregate", "az://logs/", "--out", str(tmp_path / "agg"),
        "--since", "2024-03-06", "--until", "2024-03-05",
    )  # fmt: skip
    assert line == (
        "orderdoc aggregate: error: --since 2024-03-06T00:00Z is not before --until 2024-03-05T00:00Z"
    )


def test_aggregate_and_watch_say_it_in_one_line_before_spark_starts(
    storage: Azurite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    line = one_line_error("aggregate", "az://no-such-logs/", "--out", str(tmp_path / "agg"))
    assert line == "orderdoc aggregate: error: az://no-such-logs/: not found (no such container)"
    line = one_line_error(
        "watch", "az://no-such-logs/resourceId=/", "--state", str(tmp_path / "st")
    )
    assert line == (
        "orderdoc watch: error: az://no-such-logs/resourceId=/: not found (no such container)"
    )
    monkeypatch.setenv(
        "AZURE_STORAGE_CONNECTION_STRING", storage.connection_string.replace(KEY, WRONG_KEY)
    )
    line = one_line_error(
        "watch", "az://insights-logs-execution/", "--state", str(tmp_path / "st2")
    )
    assert "access refused" in line
    assert WRONG_KEY not in line
