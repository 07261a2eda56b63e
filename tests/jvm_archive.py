"""A class-data sharing archive for the tests' Spark JVMs (JDK's CDS; tests/conftest.py).

Every Spark JVM the tests start (the workers' sessions, and the drivers of the commands they
run as processes) loads and verifies the same few thousand classes from Spark's jars before
it does anything. With an archive of those classes, made once per run by a JVM that started
a session and ran ``orderdoc aggregate`` on the samples, the JVMs map the classes instead:
measured, a session's start took 7.5 CPU-s instead of 11.6 and a first ``aggregate`` 24.1
instead of 28.5 (docs/performance.md, "Test suite time"). Only how the JVM loads its classes
changes; the classes and what Spark computes are the same.

``python -m tests.jvm_archive`` (scripts/run-tests.sh, in the background beside the lint)
writes :data:`ARCHIVE` when it is missing. tests/conftest.py gives the JVMs
``-XX:SharedArchiveFile`` only when the file is there, so a plain ``pytest`` without it runs
as before. The cluster tests' servers, executors and drivers use it too (their JVM options
reach the executors without a configuration folder of their own, tests/spark/servers.py,
which would come first on their class path). The JVM checks the archive itself: one made by
another Java, or for another class path, is not used, and the JVM then loads its classes as
usual; the JVM's notes about that are turned off (:data:`QUIET`) because the tests read what
commands print. The file lives in the venv and `make install` removes it when it
reinstalls, so a new pyspark gets a new one (after a Java upgrade, delete it by hand: the
JVMs would not use it).
"""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: The archive, next to the pyspark it was made for.
ARCHIVE = Path(sys.prefix) / "spark-test-classes.jsa"
#: Seconds the archiving workload may take (about 70 alone on 2 cores).
TIMEOUT = 600
#: The JVM's notes on an archive it cannot use (it prints them on standard output).
QUIET = "-Xlog:cds=off -Xlog:cds+dynamic=off"
#: What the archiving JVM runs: a session of the tests' kind and a first ``aggregate``.
WORKLOAD = """
import sys
from diagnostics.cli import main
from diagnostics.spark.session import SparkTarget, build_session
from tests.conftest import SPARK_TEST_CONF
session = build_session(SparkTarget(master="local[2]", conf=SPARK_TEST_CONF))
code = main(["aggregate", "sample_logs/asa", "--out", sys.argv[1]])
jvm = session.sparkContext._gateway.proc
session.stop()
jvm.stdin.close()  # the JVM exits when its standard input closes, and writes the archive then
jvm.wait(timeout=600)
sys.exit(code)
"""


def options(archive: Path = ARCHIVE) -> str:
    """The JVM options that use ``archive``, or "" when it does not exist."""
    return f"-XX:SharedArchiveFile={archive} {QUIET}" if archive.is_file() else ""


def build(archive: Path = ARCHIVE) -> int:
    """Write ``archive`` unless it exists: 0 when it is there afterwards, 1 otherwise (with the
    workload's output on stderr). A build under way in another process (the Makefile starts
    one early, scripts/run-tests.sh another) is waited for under a lock, not repeated."""
    if archive.is_file():
        return 0
    archive.parent.mkdir(parents=True, exist_ok=True)
    with archive.with_name(f".{archive.name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return 0 if archive.is_file() else _write(archive)


def _write(archive: Path) -> int:
    from tests.conftest import TEST_JVM_OPTIONS

    partial = archive.with_name(f".{archive.name}.{os.getpid()}")
    with tempfile.TemporaryDirectory(prefix="orderdoc-cds-") as tmp:
        env = {
            **os.environ,
            "SPARK_LOCAL_IP": "127.0.0.1",
            "SPARK_SUBMIT_OPTS": f"{TEST_JVM_OPTIONS} -XX:ArchiveClassesAtExit={partial} {QUIET}",
        }
        try:
            done = subprocess.run(
                [sys.executable, "-c", WORKLOAD, str(Path(tmp) / "agg")],
                cwd=ROOT,
                env=env,
                capture_output=True,
                text=True,
                check=False,
                timeout=TIMEOUT,
            )
        except subprocess.TimeoutExpired:
            sys.stderr.write(f"jvm_archive: no class archive written (not done in {TIMEOUT} s)\n")
            return 1
        if done.returncode != 0 or not partial.is_file():
            sys.stderr.write(done.stdout[-2000:] + done.stderr[-3000:])
            sys.stderr.write(f"jvm_archive: no class archive written ({done.returncode})\n")
            return 1
        # renamed when whole, so a JVM never reads half a file
        os.replace(partial, archive)
    return 0


if __name__ == "__main__":
    sys.exit(build())
