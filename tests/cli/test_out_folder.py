"""An output folder that cannot be made is one line and exit code 2 before any work starts: a
file where a parent folder would be, an empty path, a file given to --write-fix or --state."""

from __future__ import annotations

from pathlib import Path

import pytest

from diagnostics.cli import main

ROOT = Path(__file__).resolve().parents[2]
CAPTURE = str(ROOT / "sample_logs" / "scenarios" / "late_senders" / "capture.csv")
JOB = str(ROOT / "sample_logs" / "jobs" / "late_senders.arm.json")

COMMANDS = {
    "replay": ["replay", CAPTURE, "--timestamp-by", "event_time", "--out"],
    "cti": ["cti", CAPTURE, "--cti-every", "10", "--out"],
    "whatif": ["whatif", CAPTURE, "--timestamp-by", "event_time", "--out"],
    "impact": ["impact", CAPTURE, "--job-definition", JOB, "--out"],
    "demo": ["demo", "--out"],
    "aggregate": ["aggregate", str(ROOT / "sample_logs"), "--out"],
    "explain": ["explain", "--events", CAPTURE, "--job-definition", JOB, "--write-fix"],
    "watch": ["watch", str(ROOT / "sample_logs"), "--once", "--state"],
}


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.err.strip()


@pytest.mark.parametrize("command", COMMANDS)
def test_a_file_where_a_parent_folder_would_be(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocking = tmp_path / "afile"
    blocking.write_text("", encoding="utf-8")
    argv = COMMANDS[command]
    code, err = run([*argv, str(blocking / "sub")], capsys)
    assert code == 2
    assert err == (
        f"orderdoc {command}: error: {argv[-1]} {blocking / 'sub'}: {blocking} is a file, "
        "so no folder can be made inside it"
    )
    assert blocking.read_text(encoding="utf-8") == ""


@pytest.mark.parametrize("command", ["replay", "whatif", "demo", "explain"])
def test_an_empty_or_file_output_path(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = COMMANDS[command]
    code, err = run([*argv, ""], capsys)
    assert code == 2
    assert (
        err == f"orderdoc {command}: error: {argv[-1]}: the output folder is empty; name a folder"
    )
    afile = tmp_path / "afile"
    afile.write_text("", encoding="utf-8")
    code, err = run([*argv, str(afile)], capsys)
    assert code == 2
    assert err == f"orderdoc {command}: error: {argv[-1]} {afile}: exists and is not a folder"
    assert "\n" not in err


@pytest.mark.parametrize("command", ["aggregate", "watch"])
def test_an_empty_path_is_not_the_current_folder(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A flag read as a path refuses an empty value (``Path("")`` is the current folder)."""
    argv = COMMANDS[command]
    with pytest.raises(SystemExit) as exited:
        main([*argv, ""])
    assert exited.value.code == 2
    err = capsys.readouterr().err.strip()
    assert err == (
        f"orderdoc {command}: error: argument {argv[-1]}: the path is empty; name a folder "
        "(see --help)"
    )
