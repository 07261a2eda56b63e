"""Fixtures shared by every test folder, and how the test sets are chosen.

**Test sets.** ``make test`` runs every test except those marked ``slow``; CI (``CI=true``,
``.ci/run``) and ``make test-all`` run them all (scripts/run-tests.sh decides). Mark a test
``@pytest.mark.slow`` when it is an end-to-end case that takes many seconds on its own
(starts JVMs in subprocesses, servers, a browser, a cluster) and a faster test covers the same
code in-process; never to hide a failure. ``--durations`` in scripts/run-tests.sh lists the
slowest tests of each run.

**Workers.** scripts/run-tests.sh runs the tests on two pytest-xdist workers
(``ORDERDOC_TEST_WORKERS``, 0 for one process). Tests must not depend on each other or on
their order; ports come from ``free_port()``-style helpers, files go under ``tmp_path``. Each test
file runs whole on one worker (module fixtures are built once) and the Spark folders
(:data:`SPARK_FOLDERS`) all on the same worker, so one JVM serves them; a session fixture is
built once per worker that needs it.

**Shared, session-scoped fixtures** (build once, never modify: copy to ``tmp_path`` first):

* ``spark``: the one local Spark session of the run (``local[2]``, 2 shuffle partitions, no
  UI); Spark tests in any folder ask for it instead of building their own (a command run
  in-process, e.g. ``main(["aggregate", ...])``, uses it too: it reuses an active session).
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

#: The shared session's settings: small and quiet, as Spark's own test suites run.
SPARK_TEST_CONF = (
    ("spark.sql.shuffle.partitions", "2"),
    ("spark.ui.enabled", "false"),
    ("spark.driver.memory", "1g"),
)


@pytest.fixture(scope="session")
def spark() -> Iterator[object]:
    """The shared local[2] session; skipped tests would hide a broken set-up, so Java is required."""
    from diagnostics.spark.session import SparkTarget, build_session, java_problem

    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    problem = java_problem()
    assert problem is None, problem
    session = build_session(SparkTarget(master="local[2]", conf=SPARK_TEST_CONF))
    yield session
    session.stop()


#: Folders whose tests use Spark. Under pytest-xdist each runs whole on one worker, so one JVM
#: serves them (a Spark test elsewhere still works: its worker starts a session of its own).
SPARK_FOLDERS = ("tests/spark/", "tests/watch/", "tests/engines/real/")


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object:
    """With ``--dist loadfile``: each test file goes whole to one worker, and the files of
    :data:`SPARK_FOLDERS` all go to the same one (the largest unit, so it is handed out first)."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class SparkTogether(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            path = nodeid.split("::", 1)[0]
            return "spark" if path.startswith(SPARK_FOLDERS) else path

    return SparkTogether(config, log)  # type: ignore[arg-type]
