"""``orderdoc watch az://...`` over append blobs (Azurite, Spark): lines appended to the
hour's blob, a new hour's blob, a kill -9 in the middle of a pass and a restart; the
watcher's tables equal one aggregate of the same files in a local folder, its mirror holds
the blobs' bytes, and appended blocks were read by range."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from diagnostics.logs import aggregate as reference
from diagnostics.logs.inputs import expand_inputs
from tests.storage.azurite import Azurite
from tests.storage.conftest import container_name
from tests.storage.tables import assert_tables_equal_local
from tests.watch.test_end_to_end import RULE, SPARK, crash_at, line
from tests.watch.test_kills import passes, run_once

pytestmark = [pytest.mark.spark, pytest.mark.slow, pytest.mark.timeout(900)]

JOB = "resourceId=/SUBSCRIPTIONS/0/RESOURCEGROUPS/RG/PROVIDERS/MICROSOFT.STREAMANALYTICS/STREAMINGJOBS/ORDERS-JOB"
H10 = f"{JOB}/y=2024/m=03/d=05/h=10/m=00/PT1H.json"
H11 = f"{JOB}/y=2024/m=03/d=05/h=11/m=00/PT1H.json"


def test_watch_over_append_blobs_equals_the_local_folder(
    azurite_server: Azurite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from azure.storage.blob import ContainerClient

    name = container_name("watch")
    client = ContainerClient.from_connection_string(azurite_server.connection_string, name)
    client.create_container()
    logs, state = tmp_path / "logs", tmp_path / "state"

    def append(blob: str, data: bytes) -> None:
        """``data`` appended to the blob (created as an append blob) and to the local copy."""
        remote = client.get_blob_client(blob)
        if not remote.exists():
            remote.create_append_blob()
        remote.append_block(data)
        local = logs / blob
        local.parent.mkdir(parents=True, exist_ok=True)
        with local.open("ab") as out:
            out.write(data)

    for variable in [v for v in os.environ if v.startswith("AZURE_STORAGE_")]:
        monkeypatch.delenv(variable)
    monkeypatch.setenv("AZURE_STORAGE_CONNECTION_STRING", azurite_server.connection_string)
    log = tmp_path / "watch.log"
    args = ["watch", f"az://{name}/resourceId=/", "--state", str(state), "--rules", str(RULE),
            "--evaluate-at", "data-end", *SPARK]  # fmt: skip

    append(H10, line(1, "LateInputEvent", 4) + line(2, "EarlyInputEvent", 3))
    run_once(args, log)
    assert passes(state) == 1

    append(H10, line(15, "LateInputEvent", 2))  # an append to the hour's blob
    append(H11, line(61, "LateInputEvent", 1))  # the next hour's blob
    crash_at("planned", [*args, "--once"], log)  # kill -9 once the pass is planned
    assert passes(state) == 1
    append(H10, line(40, "OutOfOrderEvent", 5))
    run_once(args, log)  # the interrupted pass redone, then the new bytes
    assert passes(state) >= 2

    text = log.read_text()
    assert "Traceback" not in text
    assert "1 appended to" in text  # appended blocks read by range
    assert f"az://{name}/resourceId=" in text  # messages name the URL
    mirror = state / "storage" / "devstoreaccount1" / name
    for blob in (H10, H11):
        assert (mirror / blob).read_bytes() == (logs / blob).read_bytes()

    files = expand_inputs([str(logs)])
    expected = reference.aggregate_files(files.logs, files.metrics)
    summary = json.loads((state / "agg" / "summary.json").read_text())
    ignore = {"files_read": 0, "files_skipped": []}
    assert summary | ignore == expected.summary | ignore
    assert_tables_equal_local(state / "agg", [logs])
