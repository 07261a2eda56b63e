"""``orderdoc watch``: bad input is one line and exit code 2, before Spark starts."""

from __future__ import annotations

from pathlib import Path

import pytest

from diagnostics.cli import main


def _state(tmp: Path, kind: str) -> Path:
    state = tmp / "state"
    state.mkdir()
    if kind == "manifest":
        (state / "manifest.json").write_text("{not json", encoding="utf-8")
    elif kind == "plan":
        (state / "plan.json").write_text('{"number": "x"}', encoding="utf-8")
    elif kind == "alerts":
        (state / "alerts").mkdir()
        (state / "alerts" / "alerts.db").write_bytes(b"garbage" * 200)
    return state


@pytest.mark.parametrize(
    ("extra", "state_kind", "message"),
    [
        (
            ["--webhook", "ftp://host/x"],
            "",
            "webhook URL 'ftp://host/x' is not an http(s) URL with a host",
        ),
        (["--interval", "0s"], "", "argument --interval: '0s' must be more than 0"),
        (
            ["--remote", "sc://127.0.0.1:1"],
            "",
            "Spark Connect server 'sc://127.0.0.1:1' cannot be reached (Connection refused)",
        ),
        ([], "manifest", "manifest.json: corrupt watcher state"),
        ([], "plan", "plan.json: corrupt watcher state"),
        ([], "alerts", "alerts.db: cannot open the alert store (file is not a database)"),
        (["--metrics-port", "70000"], "", "argument --metrics-port: '70000' is not a port"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys, extra, state_kind, message) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    state = _state(tmp_path, state_kind) if state_kind else tmp_path / "state"
    try:
        code = main(["watch", str(logs), "--state", str(state), *extra])
    except SystemExit as exc:  # argparse's own errors
        code = int(exc.code or 0)
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert message in err
    assert "\n" not in err


def test_missing_folder_and_state_inside_the_logs(tmp_path, capsys) -> None:
    assert main(["watch", str(tmp_path / "nope"), "--state", str(tmp_path / "s")]) == 2
    assert capsys.readouterr().err.strip().endswith("/nope': no such folder")
    logs = tmp_path / "logs"
    logs.mkdir()
    assert main(["watch", str(logs), "--state", str(logs / "state")]) == 2
    assert "is inside LOG_DIR" in capsys.readouterr().err
