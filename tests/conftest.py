"""Fixtures shared by every test folder, and how the test sets are chosen and scheduled.

**Test sets.** ``make test`` runs every test except those marked ``slow``; CI (``CI=true``,
``.ci/run``) and ``make test-all`` run them all (scripts/run-tests.sh decides). Mark a test
``@pytest.mark.slow`` when it is an end-to-end case that takes many seconds on its own
(starts JVMs in subprocesses, servers, a browser, a cluster) and a faster test covers the same
code in-process; never to hide a failure. ``--durations`` in scripts/run-tests.sh lists the
slowest tests of each run; ``ORDERDOC_TEST_TIMES=<file>`` records every test's wall and CPU
time (tests/timing.py, summed up by scripts/test_times.py).

**Workers.** scripts/run-tests.sh runs the tests on two pytest-xdist workers
(``ORDERDOC_TEST_WORKERS``, 0 for one process). Tests must not depend on each other or on
their order; ports come from ``free_port()``-style helpers, files go under ``tmp_path``. Each
test file runs whole on one worker (module fixtures are built once). The files are handed out
heaviest first (:func:`file_weight`: files with ``slow`` tests, then files whose tests use
Spark, by how many), each to the next worker that runs short of work, so the long ones start
at once and the short ones fill the gaps at the end. Either worker may get Spark tests; each
then builds its own ``spark`` session (one JVM per worker), and the Spark work is split in
two instead of lining up on one worker.

**Shared, session-scoped fixtures** (build once, never modify: copy to ``tmp_path`` first):

* ``spark``: the worker's local Spark session (``local[2]``, 2 shuffle partitions, no UI,
  interpreted expressions, no adaptive re-planning);
  Spark tests in any folder ask for it instead of building their own (a command run
  in-process, e.g. ``main(["aggregate", ...])``, uses it too: it reuses an active session).

**Spark's generated code.** The shared session evaluates its queries interpreted, without
generated Java code (whole-stage code generation off, and Spark's own test setting
``spark.sql.codegen.factoryMode=NO_CODEGEN``, with which Spark's suites check that both paths
compute the same). A test's query runs on a few rows, where compiling the generated code per
query costs more than it saves: measured, the in-process Spark replay, explain and what-if
tests took 88 s instead of 110 (docs/performance.md, "Test suite time"). The commands the
tests run as processes (but the watcher's passes of tests/watch), and the Connect server and
standalone cluster of tests/spark, keep Spark's defaults, so the generated path is still run
end to end.

**Adaptive query execution off.** The shared session also plans each query once
(``spark.sql.adaptive.enabled=false``): on a few rows, re-planning after every shuffle
costs more than it saves. Measured, six rounds of the three Spark replay examples of
tests/spark/test_replay_spark.py took 161 and 167 CPU-s instead of 183 and 178 (about 8 %
less). orderdoc sets no shuffle count that relies on it (its stages size their own), and the
commands the tests run as processes, the Connect server and the cluster keep Spark's default.

**JVM options.** Every JVM the tests start (the session's, and those of the commands, servers
and clusters they run as processes) is told to compile with the JIT's first tier only and to
use the serial collector (:data:`TEST_JVM_OPTIONS`, through the environment variables Spark's
launcher reads). The tests' JVMs live for seconds on a few rows, where the optimising compiler
costs far more CPU than it saves: measured, it halves the CPU time of a session's start and of
a first ``aggregate``. The code cache keeps the size it has with every tier (240 MB; with the
first tier alone the JVM reserves 48 MB): a worker's session filled 48 MB after about 80 s of
Spark replays, and from then on the JVM flushed compiled methods and compiled them again
(27,813 methods flushed in 85 sweeps over eight rounds of the replay examples, which cost
131 CPU-s in the JVM after the first round instead of 99 with the larger cache, one run each).
Only how the JVM compiles changes, not what Spark computes. When
scripts/run-tests.sh has made the class archive of tests/jvm_archive.py (the full set), the
Spark JVMs also map their classes from it (JDK class-data sharing). A variable set by the user
is kept.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from tests import jvm_archive

#: The shared session's settings: small and quiet, as Spark's own test suites run.
SPARK_TEST_CONF = (
    ("spark.sql.shuffle.partitions", "2"),
    ("spark.ui.enabled", "false"),
    ("spark.driver.memory", "1g"),
    # interpreted, not compiled: see "Spark's generated code" above
    ("spark.sql.codegen.wholeStage", "false"),
    ("spark.sql.codegen.factoryMode", "NO_CODEGEN"),
    # planned once, not again after each shuffle: see "Adaptive query execution off" above
    ("spark.sql.adaptive.enabled", "false"),
)

#: Options for the JVMs of the tests: C1 only, serial GC, and the code cache the JVM gives
#: full tiers (240 MB): with C1 alone it gets 48 MB, which a worker's session fills within
#: minutes, after which the JVM keeps throwing compiled methods away and compiling them again.
TEST_JVM_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC -XX:ReservedCodeCacheSize=240m"

#: Spark's launcher adds SPARK_SUBMIT_OPTS to a driver's JVM (the in-process session, a command
#: run as a process, the Spark Connect server) and SPARK_DAEMON_JAVA_OPTS to a standalone
#: master's and worker's; executors take ``spark.executor.extraJavaOptions``
#: (tests/spark/servers.py). Set here, at import, so child processes inherit them.
#: With the class archive scripts/run-tests.sh has made (tests/jvm_archive.py), they map Spark's
#: classes from it instead of loading them one by one.
_ARCHIVE_OPTIONS = jvm_archive.options()
for _variable in ("SPARK_SUBMIT_OPTS", "SPARK_DAEMON_JAVA_OPTS"):
    os.environ.setdefault(_variable, f"{TEST_JVM_OPTIONS} {_ARCHIVE_OPTIONS}".strip())


@pytest.fixture(autouse=True)
def _capture_cache(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every test's capture cache (diagnostics/captures/capture_cache.py) is a folder of its
    own under pytest's temporary folder, never the user's ``~/.cache`` (the commands a test
    runs as processes inherit it)."""
    monkeypatch.setenv("ORDERDOC_CACHE", str(tmp_path_factory.mktemp("capture-cache")))


@pytest.fixture(scope="session")
def spark() -> Iterator[object]:
    """The worker's local[2] session; skipped tests would hide a broken set-up, so Java is
    required."""
    from diagnostics.spark.session import SparkTarget, build_session, java_problem

    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    problem = java_problem()
    assert problem is None, problem
    session = build_session(SparkTarget(master="local[2]", conf=SPARK_TEST_CONF))
    yield session
    session.stop()


def uses_spark(item: pytest.Item) -> bool:
    """True for a test that asks for the ``spark`` session or is marked ``spark``."""
    return (
        "spark" in getattr(item, "fixturenames", ()) or item.get_closest_marker("spark") is not None
    )


def file_weight(items: list[pytest.Item]) -> tuple[int, int, int]:
    """How heavy a test file is, for handing out the heaviest first: its ``slow`` tests, its
    Spark tests, its tests (the first difference decides). A file marked ``flink`` counts as
    one without ``slow`` tests: it goes after the other slow files, by when apache-flink,
    installed in the background as the tests start (scripts/run-tests.sh), is there."""
    slow = sum(
        item.get_closest_marker("slow") is not None and item.get_closest_marker("flink") is None
        for item in items
    )
    return slow, sum(uses_spark(item) for item in items), len(items)


def file_of(item: pytest.Item) -> str:
    return item.nodeid.split("::", 1)[0]


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """On pytest-xdist workers, order the files heaviest first (:func:`file_weight`; ties keep
    their order). Every worker collects the same list, and the scheduler below hands out the
    files in this order. Tests within a file keep their order."""
    if "PYTEST_XDIST_WORKER" not in os.environ:
        return
    by_file: dict[str, list[pytest.Item]] = {}
    for item in items:
        by_file.setdefault(file_of(item), []).append(item)
    order = sorted(by_file, key=lambda name: tuple(-w for w in file_weight(by_file[name])))
    items[:] = [item for name in order for item in by_file[name]]


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object:
    """With ``--dist loadfile``: each test file goes whole to one worker, in the order the
    workers collected them (heaviest first), not xdist's default of most tests first."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class HeaviestFirst(LoadFileScheduling):
        ordered = False

        def _assign_work_unit(self, node):  # type: ignore[no-untyped-def]
            if not self.ordered:
                rank = {
                    file: i
                    for i, file in enumerate(dict.fromkeys(map(self._split_scope, self.collection)))
                }
                queue = sorted(self.workqueue.items(), key=lambda unit: rank[unit[0]])
                self.workqueue.clear()
                self.workqueue.update(queue)
                self.ordered = True
            super()._assign_work_unit(node)

    return HeaviestFirst(config, log)  # type: ignore[arg-type]
