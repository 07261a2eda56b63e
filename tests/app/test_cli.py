"""``orderdoc app``: the streamlit command it runs, and one-line errors for bad input."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from diagnostics.cli import main
from diagnostics.cli.app import STREAMLIT_FLAGS, command
from diagnostics.resources import app_file


def _args(**values) -> argparse.Namespace:
    base = {"agg_dir": None, "port": 8501, "host": "127.0.0.1", "rules": None}
    return argparse.Namespace(**{**base, **values})


def test_command_binds_to_localhost_and_passes_the_folder(agg_asa):
    argv, env = command(_args(agg_dir=agg_asa, port=9123))
    assert argv[1:4] == ["-m", "streamlit", "run"]
    assert argv[4] == str(app_file())
    assert "--server.address=127.0.0.1" in argv
    assert "--server.port=9123" in argv
    assert set(STREAMLIT_FLAGS) <= set(argv)
    assert "--browser.gatherUsageStats=false" in argv
    assert "--server.fileWatcherType=none" in argv
    assert argv[-3:] == ["--", "--agg-dir", str(agg_asa.resolve())]
    assert env["STREAMLIT_BROWSER_GATHER_USAGE_STATS"] == "false"


def test_command_without_a_folder_and_with_rules(tmp_path):
    rules = tmp_path / "r.yaml"
    rules.write_text("rules: []\n")
    argv, env = command(_args(host="0.0.0.0", rules=[rules]))
    assert "--server.address=0.0.0.0" in argv
    assert "--" not in argv
    assert env["ORDERDOC_RULES"] == str(rules.resolve())


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["app", "{tmp}/missing"],
            "orderdoc app: error: {tmp}/missing: no such aggregate folder (expected the output of 'orderdoc aggregate')\n",
        ),
        (["app", "{tmp}"], "orderdoc app: error: {tmp}: not an aggregate folder"),
        (
            ["app", "--port", "70000"],
            "orderdoc app: error: argument --port: '70000' is not a TCP port",
        ),
        (
            ["app", "--rules", "{tmp}/nope"],
            "orderdoc app: error: --rules: {tmp}/nope: no such file or folder\n",
        ),
    ],
)
def test_bad_input_is_one_line_and_exit_2(argv, message, tmp_path: Path, capsys):
    args = [a.format(tmp=tmp_path) for a in argv]
    try:
        code = main(args)
    except SystemExit as exc:  # argparse errors
        code = exc.code
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith(message.format(tmp=tmp_path))
    assert err.count("\n") == 1
    assert "Traceback" not in err
