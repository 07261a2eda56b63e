"""An aggregate folder and a capture in a storage account, opened where a local one is: the
app's Load page (the aggregate folder's URL, a Capture container's URL replayed) and
``orderdoc explain AGG_URL``, which prints what it prints for the local folder (Azurite)."""

from __future__ import annotations

from pathlib import Path

from tests.app.conftest import agg_asa, app_env, metrics, open_app
from tests.captures.helpers import run_cli
from tests.storage.azurite import Azurite, upload_folder
from tests.storage.conftest import SAMPLES, container_name

__all__ = ["agg_asa", "app_env", "open_app"]  # the app tests' fixtures
#: sample_logs/captures: the late_senders events replayed under ASA's default policy
LATE_IN_CAPTURE_SAMPLE = 87


def test_explain_reads_an_aggregate_folder_url(storage: Azurite, agg_asa: Path) -> None:
    name = container_name("aggs")
    upload_folder(storage.connection_string, name, agg_asa, "asa/")
    code, local, err = run_cli("explain", str(agg_asa))
    assert code == 0, err
    code, remote, err = run_cli("explain", f"az://{name}/asa")
    assert code == 0, err
    assert f"az://{name}/asa: " in err  # what was staged, on stderr
    assert remote.replace(f"az://{name}/asa", "AGG") == local.replace(str(agg_asa), "AGG")
    assert "LateInputEvent" in remote


def test_the_load_page_opens_urls(storage: Azurite, agg_asa: Path, open_app) -> None:  # type: ignore[no-untyped-def]
    name = container_name("app")
    upload_folder(storage.connection_string, name, agg_asa, "agg/")
    upload_folder(
        storage.connection_string, name, SAMPLES / "captures" / "eventhubs-capture", "capture/"
    )

    at = open_app("Load")
    at.text_input(key="agg_path").set_value(f"az://{name}/agg").run()
    at.button(key="open_folder").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.success[0].value.startswith("Opened ")

    at = open_app("Load")
    at.text_input(key="capture_path").set_value(f"az://{name}/capture/").run()
    at.button(key="replay_path").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.success[0].value.startswith("Loaded capture ")
    at.sidebar.radio(key="page").set_value("Overview").run()
    assert metrics(at)["Late events"] == str(LATE_IN_CAPTURE_SAMPLE)

    at = open_app("Load")
    at.text_input(key="capture_path").set_value("az://no-such-capture/").run()
    at.button(key="replay_path").click().run()
    assert not at.exception
    assert at.error[0].value == "az://no-such-capture/: not found (no such container)"


def test_orderdoc_app_opens_an_aggregate_folder_url(storage: Azurite, agg_asa: Path) -> None:
    import argparse

    from diagnostics.cli.app import command
    from diagnostics.cli.storage_args import staged_inputs

    name = container_name("appcmd")
    upload_folder(storage.connection_string, name, agg_asa, "asa/")
    args = argparse.Namespace(
        agg_dir=f"az://{name}/asa", port=8501, host="127.0.0.1", rules=None, watch=None
    )
    with staged_inputs(args, "app"):
        argv, _env = command(args)
    staged = Path(argv[-1])
    assert argv[-2] == "--agg-dir"
    assert (staged / "summary.json").read_bytes() == (agg_asa / "summary.json").read_bytes()
    assert "storage" in staged.parts  # the staged copy under the cache, kept for the app
