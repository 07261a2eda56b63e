"""orderdoc's ``replay --rules flink|spark`` against the real engines, event for event: the
events each engine dropped as late equal the events orderdoc's replay marks dropped, and each
window's count equals the capture's events of that window that orderdoc keeps
(docs/engines.md, "Checked against the real engines").

The captures: the hand-made ones (tests/engines/real/captures.py), seeded random ones of
200 events on two splits, one of them with a split going silent half way, and two where every
split goes idle at once (bursts with common pauses; a lagging split catching up on a backlog
after both paused). Every Flink case runs on each Flink release the tests install (2.2.0 and
2.1.3), each compared with orderdoc's model of that release (``--flink-version``): they differ
when every split is idle. Processing time is the capture's arrival time in both (see the
harness modules for how each engine is made to follow it).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.engines.real.captures import (
    Capture,
    EngineResult,
    backlog_capture,
    hand_captures,
    paused_capture,
    random_capture,
)
from tests.engines.real.flink_engine import FLINK_JARS, FlinkSettings, flink_problem, run_flink
from tests.engines.real.orderdoc_side import assert_same, flink_flags, orderdoc_dropped, spark_flags
from tests.engines.real.spark_engine import SparkSettings, run_spark

pytestmark = [pytest.mark.slow, pytest.mark.flink]

W = 10_000
HAND = hand_captures()
RANDOM = random_capture(1)
RANDOM_DENSE = random_capture(2, gaps_ms=(20, 400))
RANDOM_QUIET = random_capture(3, quiet_from=100)
PAUSED = paused_capture(5, lag_ms=12_000)
BACKLOG = backlog_capture(6)

#: name: (capture, the Flink job's settings); ``tick_ms`` is orderdoc's --watermark-interval
FLINK_CASES: dict[str, tuple[Capture, FlinkSettings]] = {
    "boundary_200ms": (HAND["boundary"], FlinkSettings(W, 1_000, tick_ms=200)),
    "boundary_1ms": (HAND["boundary"], FlinkSettings(W, 1_000, tick_ms=1)),
    "out_of_order": (HAND["out_of_order"], FlinkSettings(W, 2_000, tick_ms=1)),
    "allowed_lateness": (HAND["out_of_order"], FlinkSettings(W, 2_000, 1_001, tick_ms=1)),
    "idle_held": (HAND["idle_split"], FlinkSettings(W, tick_ms=200)),
    "idle_released": (HAND["idle_split"], FlinkSettings(W, idleness_ms=5_000, tick_ms=200)),
    "on_time": (HAND["on_time"], FlinkSettings(W, tick_ms=200)),
    "random": (RANDOM, FlinkSettings(W, 1_000, tick_ms=200)),
    "random_lateness_1ms": (RANDOM, FlinkSettings(W, 500, 2_000, tick_ms=1)),
    "random_dense": (RANDOM_DENSE, FlinkSettings(W, 1_500, tick_ms=200)),
    "random_quiet_held": (RANDOM_QUIET, FlinkSettings(W, 1_000, tick_ms=200)),
    "random_quiet_idle": (RANDOM_QUIET, FlinkSettings(W, 1_000, idleness_ms=3_000, tick_ms=200)),
    # every split idle at once
    "all_idle": (HAND["all_idle"], FlinkSettings(W, idleness_ms=1_000, tick_ms=200)),
    "paused": (PAUSED, FlinkSettings(W, 500, idleness_ms=2_000, tick_ms=200)),
    "backlog": (BACKLOG, FlinkSettings(W, 1_000, idleness_ms=2_000, tick_ms=200)),
}

#: (the boundary and previous-batch cases are compared in test_spark_engine.py, with their run)
SPARK_CASES: dict[str, tuple[Capture, SparkSettings]] = {
    "idle_split": (HAND["idle_split"], SparkSettings(W, 0, trigger_ms=1_000)),
    # arrivals 20-400 ms apart on a 2 s trigger: batches back to back and with gaps
    "random_dense": (RANDOM_DENSE, SparkSettings(W, 1_500, trigger_ms=2_000)),
}


@pytest.fixture(scope="module")
def flink(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, EngineResult] | str]:
    """Each Flink release's results by case, or why the release cannot run here."""
    names = list(FLINK_CASES)
    runs: dict[str, dict[str, EngineResult] | str] = {}
    for release in FLINK_JARS:
        problem = flink_problem(release)
        if problem:
            runs[release] = problem
            continue
        workdir = tmp_path_factory.mktemp(f"flink-{release}")
        results = run_flink([FLINK_CASES[n] for n in names], workdir, release=release)
        runs[release] = dict(zip(names, results, strict=True))
    return runs


def release_results(
    flink: dict[str, dict[str, EngineResult] | str], release: str
) -> dict[str, EngineResult]:
    results = flink[release]
    if isinstance(results, str):
        pytest.skip(results)
    return results


@pytest.mark.parametrize("release", list(FLINK_JARS))
@pytest.mark.parametrize("case", list(FLINK_CASES))
def test_flink_drops_what_orderdoc_predicts(
    flink: dict[str, dict[str, EngineResult] | str], case: str, release: str, tmp_path: Path
) -> None:
    engine = release_results(flink, release)[case]
    capture, settings = FLINK_CASES[case]
    flags = [*flink_flags(settings), "--flink-version", FLINK_JARS[release].value]
    predicted = orderdoc_dropped(capture, flags, tmp_path)
    assert_same(capture, engine, predicted, W)


@pytest.mark.parametrize("release", list(FLINK_JARS))
def test_the_random_flink_captures_drop_and_keep_late_events(
    flink: dict[str, dict[str, EngineResult] | str], release: str
) -> None:
    # the comparison means something: each random case drops some events and not all the
    # events behind the maximum; idleness drops more than a silent split held back
    results = release_results(flink, release)
    for case in ("random", "random_lateness_1ms", "random_dense", "random_quiet_idle", "paused"):
        assert 5 <= len(results[case].dropped) <= 100, case
    assert results["random_quiet_held"].dropped < results["random_quiet_idle"].dropped


def test_flink_2_2_drops_more_once_every_split_was_idle(
    flink: dict[str, dict[str, EngineResult] | str],
) -> None:
    # the releases differ where the captures have every split idle at once: 2.2 drops what
    # 2.1 drops and more (the maximum after the pause passes the lagging split's windows)
    old, new = (release_results(flink, r) for r in ("2.1.3", "2.2.0"))
    for case in ("all_idle", "paused", "backlog"):
        assert old[case].dropped < new[case].dropped, case
    assert len(new["backlog"].dropped - old["backlog"].dropped) >= 20
    for case in ("random", "random_dense", "random_quiet_idle", "idle_released"):
        assert old[case].dropped == new[case].dropped, case


@pytest.mark.parametrize("case", list(SPARK_CASES))
def test_spark_drops_what_orderdoc_predicts(spark: object, case: str, tmp_path: Path) -> None:
    capture, settings = SPARK_CASES[case]
    engine = run_spark(spark, capture, settings, tmp_path / "spark")
    predicted = orderdoc_dropped(capture, spark_flags(settings), tmp_path / "orderdoc")
    assert_same(capture, engine, predicted, W)
    if case.startswith("random"):
        assert 5 <= len(engine.dropped) <= 100
