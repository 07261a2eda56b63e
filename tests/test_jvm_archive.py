"""tests/jvm_archive.py: a second build waits for the one under way and does not repeat it
(the Makefile starts one early, scripts/run-tests.sh another)."""

from __future__ import annotations

import fcntl
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: build() with the expensive part replaced: says "wrote" and makes the file.
CHILD = """
import sys
from pathlib import Path
from tests import jvm_archive
def write(archive):
    print("wrote")
    archive.write_bytes(b"x")
    return 0
jvm_archive._write = write
sys.exit(jvm_archive.build(Path(sys.argv[1])))
"""


@pytest.mark.parametrize("made_meanwhile", [True, False])
def test_a_second_build_waits_for_the_first(tmp_path: Path, made_meanwhile: bool) -> None:
    archive = tmp_path / "classes.jsa"
    with (tmp_path / ".classes.jsa.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # a build under way
        child = subprocess.Popen(
            [sys.executable, "-c", CHILD, str(archive)], cwd=ROOT, stdout=subprocess.PIPE,
            text=True,
        )  # fmt: skip
        time.sleep(1.0)
        assert child.poll() is None, "the second build did not wait"
        if made_meanwhile:
            archive.write_bytes(b"made by the first")
    out, _ = child.communicate(timeout=60)
    assert child.returncode == 0
    assert ("wrote" in out) is not made_meanwhile
    assert archive.is_file()
