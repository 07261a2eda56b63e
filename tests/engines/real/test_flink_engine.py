"""The Flink harness against hand-computed outcomes: Flink's window operator drops what its
rules say (docs/engines.md, "Flink"), at the millisecond boundary; and Flink 2.1 and 2.2 differ
where every split is idle at once (FLINK-38454). The cases of one release run in one JVM.

Windows of 10 s; times below are seconds after the captures' origin (tests/engines/real/captures.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.engines.real.captures import T0_MS, EngineResult, hand_captures
from tests.engines.real.flink_engine import (
    DEFAULT_RELEASE,
    FLINK_JARS,
    FlinkSettings,
    flink_problem,
    run_flink,
)

pytestmark = [pytest.mark.slow, pytest.mark.flink]

W = 10_000
CASES = {
    "boundary_per_event": ("boundary", FlinkSettings(W, out_of_orderness_ms=1_000)),
    "boundary_ticks": ("boundary", FlinkSettings(W, out_of_orderness_ms=1_000, tick_ms=200)),
    "out_of_order": ("out_of_order", FlinkSettings(W, out_of_orderness_ms=2_000)),
    "out_of_order_lateness": (
        "out_of_order",
        FlinkSettings(W, out_of_orderness_ms=2_000, allowed_lateness_ms=1_001),
    ),
    "idle_held": ("idle_split", FlinkSettings(W, tick_ms=200)),
    "idle_released": ("idle_split", FlinkSettings(W, tick_ms=200, idleness_ms=5_000)),
    "on_time": ("on_time", FlinkSettings(W, tick_ms=200)),
    "all_idle": ("all_idle", FlinkSettings(W, idleness_ms=1_000, tick_ms=200)),
}
#: The cases run on every release (the others on the default one, 2.2.0)
EVERY_RELEASE = ("all_idle",)


@pytest.fixture(scope="module")
def flink(tmp_path_factory: pytest.TempPathFactory) -> dict[str, EngineResult]:
    problem = flink_problem()
    if problem:
        pytest.skip(problem)
    captures = hand_captures()
    names = list(CASES)
    cases = [(captures[CASES[n][0]], CASES[n][1]) for n in names]
    results = run_flink(cases, Path(tmp_path_factory.mktemp("flink")))
    return dict(zip(names, results, strict=True))


@pytest.fixture(scope="module", params=[r for r in FLINK_JARS if r != DEFAULT_RELEASE])
def other_release(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> tuple[str, dict[str, EngineResult]]:
    """The cases of :data:`EVERY_RELEASE` on another release than the default one."""
    release = request.param
    problem = flink_problem(release)
    if problem:
        pytest.skip(problem)
    captures = hand_captures()
    cases = [(captures[CASES[n][0]], CASES[n][1]) for n in EVERY_RELEASE]
    results = run_flink(cases, Path(tmp_path_factory.mktemp("flink")), release=release)
    return release, dict(zip(EVERY_RELEASE, results, strict=True))


def windows(*counts: tuple[int, int]) -> dict[int, int]:
    """{window start: count} from (start in seconds, count)."""
    return {T0_MS + start * 1000: n for start, n in counts}


@pytest.mark.parametrize("case", ["boundary_per_event", "boundary_ticks"])
def test_a_window_is_late_from_watermark_end_minus_1ms(
    flink: dict[str, EngineResult], case: str
) -> None:
    # out-of-orderness 1 s: watermark = max - 1 s - 1 ms. Window [0, 10) has maxTimestamp
    # 9.999 and is late once the watermark is >= 9.999, i.e. once max >= 11.000.
    # late_a meets 9.997 (x1 10.998), late_b 9.998 (x2 10.999): kept; late_c meets exactly
    # 9.999 (x3 11.000): dropped; late_d 10.000: dropped; late_e 28.999: dropped. The same
    # with 200 ms ticks, each late_* arriving 200 ms after the x* before it.
    result = flink[case]
    assert result.dropped == {"late_c", "late_d", "late_e"}
    assert result.counts == windows((0, 3), (10, 4), (30, 1))


def test_out_of_orderness_and_allowed_lateness(flink: dict[str, EngineResult]) -> None:
    # bound 2 s: p3 (9.5) meets 8.999 (p2 11) and is kept; p5 (9.9) meets 10.999 (p4 13)
    # >= 9.999: dropped; p8 (19) meets 22.999 (p7 25) >= 19.999: dropped.
    assert flink["out_of_order"].dropped == {"p5", "p8"}
    assert flink["out_of_order"].counts == windows((0, 2), (10, 3), (20, 1))
    # allowed lateness 1.001 s: [0, 10) is late from 9.999 + 1.001 = 11.000 > 10.999, so p5
    # is kept and fires the window a second time; [10, 20) from 21.000 <= 22.999: p8 dropped
    lateness = flink["out_of_order_lateness"]
    assert lateness.dropped == {"p8"}
    assert lateness.counts == windows((0, 3), (10, 3), (20, 1))
    starts = [start for start, _, _ in lateness.details["firings"]]  # type: ignore[union-attr]
    assert starts.count(T0_MS) == 2


def test_a_silent_split_holds_the_watermark_until_idle(flink: dict[str, EngineResult]) -> None:
    # split 1's last event (3 s) at 3.1: its watermark stays 2.999 and, without idleness,
    # holds the combined one there: nothing is late
    assert flink["idle_held"].dropped == frozenset()
    assert flink["idle_held"].counts == windows((0, 4), (10, 2), (20, 1), (30, 1), (40, 1), (60, 1))
    # idleness 5 s, ticks of 200 ms: tick 3.2 saw s1b, the timer starts on tick 3.4 and split 1
    # is idle from tick 8.6 (> 5 s later); the combined watermark is split 0's: s0d (4 s) meets
    # 24.999, s0f (14 s) 39.999, s0h (35 s) 60.999: all dropped
    released = flink["idle_released"]
    assert released.dropped == {"s0d", "s0f", "s0h"}
    assert released.counts == windows((0, 3), (10, 1), (20, 1), (40, 1), (60, 1))


def test_in_order_events_are_all_counted(flink: dict[str, EngineResult]) -> None:
    capture = hand_captures()["on_time"]
    assert flink["on_time"].dropped == frozenset()
    assert flink["on_time"].counts == capture.window_counts(W) == windows((0, 2), (10, 1), (20, 1))


def test_flink_2_2_flushes_the_maximum_when_every_split_is_idle(
    flink: dict[str, EngineResult],
) -> None:
    # FLINK-38454 (2.2.0): a (20 s, split 0) and b (5 s, split 1) arrive at 1 s; with idleness
    # 1 s both splits are idle from tick 2.4 and the combined watermark becomes the maximum,
    # 19.999: window [0, 10) fires with b alone and c (6 s, arriving at 10 s) is dropped
    result = flink["all_idle"]
    assert result.dropped == {"c"}
    assert result.counts == windows((0, 1), (20, 1))
    first = result.details["firings"][0]  # type: ignore[index]
    assert first == (T0_MS, T0_MS + W, 1)


def test_flink_2_1_keeps_the_watermark_while_every_split_is_idle(
    other_release: tuple[str, dict[str, EngineResult]],
) -> None:
    # before 2.2, all splits idle leaves the combined watermark at the minimum (4.999): c is
    # kept and [0, 10) counts b and c
    release, results = other_release
    assert release.startswith("2.1.")
    assert results["all_idle"].dropped == frozenset()
    assert results["all_idle"].counts == windows((0, 2), (20, 1))
