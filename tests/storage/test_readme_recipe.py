"""README's "From a storage account" recipe, run as written against Azurite with its
connection string: the bundled samples uploaded as ASA and Capture write them (the logs as
append blobs under ``resourceId=/.../y=/m=/d=/h=/``, one hour outside ``--since/--until``),
each command of the recipe run in order; the aggregate equals that of the local folder (the
hour outside the range not read), the replay equals the local replay, the watcher's tables
equal one aggregate of every uploaded log."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from diagnostics.logs import aggregate as reference
from diagnostics.logs.inputs import expand_inputs
from tests.storage.azurite import Azurite, upload_folder
from tests.storage.conftest import ROOT, SAMPLES
from tests.storage.tables import assert_tables_equal_local

pytestmark = [pytest.mark.spark, pytest.mark.slow, pytest.mark.timeout(900)]

JOB = "resourceId=/SUBSCRIPTIONS/00000000-0000-0000-0000-000000000000/RESOURCEGROUPS/RG-ORDERS/PROVIDERS/MICROSOFT.STREAMANALYTICS/STREAMINGJOBS/ORDERS-JOB"
IN_RANGE = f"{JOB}/y=2024/m=03/d=05/h=10/m=00/"
OUTSIDE = f"{JOB}/y=2024/m=03/d=04/h=23/m=00/"
SPARK_CONF = ["--master", "local[2]", "--conf", "spark.sql.shuffle.partitions=2",
              "--conf", "spark.ui.enabled=false", "--conf", "spark.driver.memory=1g"]  # fmt: skip


def recipe() -> list[str]:
    """The lines of the bash block of README's "From a storage account"."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("### From a storage account", 1)[1]
    block = re.search(r"```bash\n(.*?)```", section, flags=re.S)
    assert block is not None
    lines = block.group(1).replace("\\\n", " ").splitlines()
    return [line for line in lines if line.strip() and not line.lstrip().startswith("#")]


def test_the_recipe_names_every_step() -> None:
    lines = recipe()
    assert lines[0].startswith("export AZURE_STORAGE_CONNECTION_STRING=")
    assert [shlex.split(line)[1] for line in lines[1:]] == [
        "aggregate",
        "explain",
        "replay",
        "watch",
    ]


def test_the_readme_storage_recipe_runs_against_azurite(
    azurite_server: Azurite, tmp_path: Path
) -> None:
    connection = azurite_server.connection_string
    asa = SAMPLES / "asa"
    upload_folder(connection, "insights-logs-execution", asa, IN_RANGE, append=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "PT1H.json").write_bytes((asa / "PT1H.json").read_bytes())
    upload_folder(connection, "insights-logs-execution", outside, OUTSIDE, append=True)
    upload_folder(connection, "capture", SAMPLES / "captures" / "eventhubs-capture")

    env = {k: v for k, v in os.environ.items() if not k.startswith("AZURE_STORAGE_")}
    env |= {"SPARK_LOCAL_IP": "127.0.0.1", "PYTHONPATH": str(ROOT)}
    log = tmp_path / "recipe.log"
    for line in recipe():
        words = shlex.split(line)
        if words[0] == "export":
            name, _, _value = words[1].partition("=")
            env[name] = connection  # the recipe's placeholder: Azurite's connection string
            continue
        assert words[0] == "orderdoc", line
        spark = SPARK_CONF if words[1] in ("aggregate", "watch") else []
        with log.open("ab") as out:
            out.write(f"$ {line}\n".encode())
            out.flush()
            done = subprocess.run(
                [sys.executable, "-m", "diagnostics", *words[1:], *spark],
                cwd=tmp_path, env=env, stdout=out, stderr=subprocess.STDOUT, timeout=400,
                check=False,
            )  # fmt: skip
        assert done.returncode == 0, log.read_text()[-4000:]
    text = log.read_text()
    assert "Traceback" not in text
    assert connection.split("AccountKey=")[1].split(";")[0] not in text  # no secret printed

    # aggregate: the local folder's, the hour outside --since/--until not read
    files = expand_inputs([str(asa)])
    expected = reference.aggregate_files(files.logs, files.metrics).summary
    summary = json.loads((tmp_path / "storage" / "agg" / "summary.json").read_text())
    ignore = {"files_skipped": []}
    assert summary | ignore == expected | ignore
    # source_file: the blob's name under the hour folder, the file's under sample_logs/asa
    roots = r"^.*?(?:/h=10/m=00/|/sample_logs/asa/)"
    assert_tables_equal_local(tmp_path / "storage" / "agg", [asa], roots)
    assert "explain" in text
    assert "LateInputEvent" in text

    # replay: the local replay's outcomes
    local = tmp_path / "local-replay"
    subprocess.run(
        [sys.executable, "-m", "diagnostics", "replay",
         str(SAMPLES / "captures" / "eventhubs-capture" / "orderdoc" / "late-senders"),
         "--out", str(local), "--timestamp-by", "event_time"],
        cwd=ROOT, env=env, check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    assert_frame_equal(
        pl.read_parquet(tmp_path / "storage" / "replay" / "outcomes.parquet"),
        pl.read_parquet(local / "outcomes.parquet"),
    )

    # watch: every uploaded log (no time range), as one aggregate of them
    every = expand_inputs([str(asa), str(outside)])
    watched = reference.aggregate_files(every.logs, every.metrics).summary
    state = json.loads((tmp_path / "storage" / "watch" / "agg" / "summary.json").read_text())
    keys = ("records_total", "records_parsed", "records_quarantined", "events_by_kind", "jobs")
    assert {k: state[k] for k in keys} == {k: watched[k] for k in keys}
