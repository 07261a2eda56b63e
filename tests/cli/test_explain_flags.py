"""``orderdoc explain``: capture flags without a capture are a one-line error, not ignored."""

from __future__ import annotations

from pathlib import Path

import pytest

from diagnostics.cli import main


@pytest.mark.parametrize(
    "flag",
    [["--arrival-col", "t"], ["--partition-col", "p"], ["--capture-path-format", "{PartitionId}"]],
    ids=lambda f: f[0],
)
def test_capture_flags_need_a_capture(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flag: list[str]
) -> None:
    assert main(["explain", str(tmp_path), *flag]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        f"orderdoc explain: error: {flag[0]}: read the capture, so they need --events CAPTURE"
    ]
