"""orderdoc's ``replay --rules flink|spark`` against the real engines, event for event: the
events each engine dropped as late equal the events orderdoc's replay marks dropped, and each
window's count equals the capture's events of that window that orderdoc keeps
(docs/engines.md, "Checked against the real engines").

The captures: the hand-made ones (tests/engines/real/captures.py) and seeded random ones of
200 events on two splits, one of them with a split going silent half way. Processing time is
the capture's arrival time in both (see the harness modules for how each engine is made to
follow it).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.engines.real.captures import Capture, EngineResult, hand_captures, random_capture
from tests.engines.real.flink_engine import FlinkSettings, flink_problem, run_flink
from tests.engines.real.orderdoc_side import assert_same, flink_flags, orderdoc_dropped, spark_flags
from tests.engines.real.spark_engine import SparkSettings, run_spark

pytestmark = [pytest.mark.slow, pytest.mark.flink]

W = 10_000
HAND = hand_captures()
RANDOM = random_capture(1)
RANDOM_DENSE = random_capture(2, gaps_ms=(20, 400))
RANDOM_QUIET = random_capture(3, quiet_from=100)

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
}

#: (the boundary and previous-batch cases are compared in test_spark_engine.py, with their run)
SPARK_CASES: dict[str, tuple[Capture, SparkSettings]] = {
    "idle_split": (HAND["idle_split"], SparkSettings(W, 0, trigger_ms=1_000)),
    # arrivals 20-400 ms apart on a 2 s trigger: batches back to back and with gaps
    "random_dense": (RANDOM_DENSE, SparkSettings(W, 1_500, trigger_ms=2_000)),
}


@pytest.fixture(scope="module")
def flink(tmp_path_factory: pytest.TempPathFactory) -> dict[str, EngineResult]:
    problem = flink_problem()
    if problem:
        pytest.skip(problem)
    names = list(FLINK_CASES)
    results = run_flink([FLINK_CASES[n] for n in names], tmp_path_factory.mktemp("flink"))
    return dict(zip(names, results, strict=True))


@pytest.mark.parametrize("case", list(FLINK_CASES))
def test_flink_drops_what_orderdoc_predicts(
    flink: dict[str, EngineResult], case: str, tmp_path: Path
) -> None:
    capture, settings = FLINK_CASES[case]
    predicted = orderdoc_dropped(capture, flink_flags(settings), tmp_path)
    assert_same(capture, flink[case], predicted, W)


def test_the_random_flink_captures_drop_and_keep_late_events(
    flink: dict[str, EngineResult],
) -> None:
    # the comparison means something: each random case drops some events and not all the
    # events behind the maximum; idleness drops more than a silent split held back
    for case in ("random", "random_lateness_1ms", "random_dense", "random_quiet_idle"):
        assert 5 <= len(flink[case].dropped) <= 100, case
    assert flink["random_quiet_held"].dropped < flink["random_quiet_idle"].dropped


@pytest.mark.parametrize("case", list(SPARK_CASES))
def test_spark_drops_what_orderdoc_predicts(spark: object, case: str, tmp_path: Path) -> None:
    capture, settings = SPARK_CASES[case]
    engine = run_spark(spark, capture, settings, tmp_path / "spark")
    predicted = orderdoc_dropped(capture, spark_flags(settings), tmp_path / "orderdoc")
    assert_same(capture, engine, predicted, W)
    if case.startswith("random"):
        assert 5 <= len(engine.dropped) <= 100
