"""The Spark harness against hand-computed outcomes: Spark Structured Streaming drops what its
rules say (docs/engines.md, "Spark Structured Streaming"), with the micro-batches cut as
planned.

Windows of 10 s, a trigger of 100 ms; times below are seconds after the captures' origin
(tests/engines/real/captures.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.engines.real.captures import T0_MS, Capture, Event, hand_captures
from tests.engines.real.orderdoc_side import assert_same, orderdoc_dropped, spark_flags
from tests.engines.real.spark_engine import SparkSettings, micro_batches, run_spark, runs

pytestmark = pytest.mark.slow

W = 10_000


def windows(*counts: tuple[int, int]) -> dict[int, int]:
    """{window start: count} from (start in seconds, count)."""
    return {T0_MS + start * 1000: n for start, n in counts}


def test_batches_are_cut_on_trigger_ticks_and_runs_on_gaps() -> None:
    capture = hand_captures()["out_of_order"]
    batches = micro_batches(capture, 100)
    # arrivals 8.1, 11.1, 11.2, 13.1, 13.2, 13.3, 25.1, 25.2: each on its own tick
    assert [len(members) for _, members in batches] == [1] * 8
    # consecutive ticks run back to back; a tick without data between starts a new run
    assert [len(run) for run in runs(batches, 100)] == [1, 2, 3, 2]
    # a 1 s trigger: arrivals up to and including a whole second go to that second's batch
    assert [m for _, m in micro_batches(capture, 1_000)] == [[0], [1, 2], [3, 4, 5], [6, 7]]


def test_late_rows_are_dropped_on_window_end_at_or_before_the_watermark(
    spark: object, tmp_path: Path
) -> None:
    # delay 1 s: watermark = max - 1 s. Every late_* arrives 200 ms after its x*, with an
    # empty trigger between, so a batch without data moves the watermark first. Window
    # [0, 10) is dropped once 10.000 <= the watermark: late_a meets 9.998, late_b 9.999
    # (kept), late_c exactly 10.000 (dropped), late_d 10.001, late_e 29.000 (dropped).
    capture, settings = hand_captures()["boundary"], SparkSettings(W, 1_000, 100)
    result = run_spark(spark, capture, settings, tmp_path / "spark")
    assert result.dropped == {"late_c", "late_d", "late_e"}
    assert result.counts == windows((0, 3), (10, 4), (30, 1))
    batches = result.details["batches"]
    # the windows' counts are one partial aggregate each: the counter counts one per drop here
    assert sum(dropped for _, dropped, _ in batches.values()) == 3  # type: ignore[attr-defined]
    # and orderdoc's replay --rules spark predicts the same, event for event
    assert_same(capture, result, orderdoc_dropped(capture, spark_flags(settings), tmp_path), W)


def test_the_late_filter_uses_the_previous_batch_watermark(spark: object, tmp_path: Path) -> None:
    # delay 2 s. p4 (13 s, batch at 13.1) moves the watermark to 11.000 and p5 (9.9 s) comes in
    # the very next batch (13.2): that batch runs with 11.000, past its window's end 10.000,
    # yet filters late rows with the watermark of the batch before, 9.000: p5 is kept. Also
    # p8 (19 s, batch 25.2) right after p7 (25 s): filtered with 11.000, kept.
    capture, settings = hand_captures()["out_of_order"], SparkSettings(W, 2_000, 100)
    result = run_spark(spark, capture, settings, tmp_path / "spark")
    assert result.dropped == frozenset()
    assert result.counts == windows((0, 3), (10, 4), (20, 1))
    marks = [mark for rows, _, mark in result.details["batches"].values() if rows]  # type: ignore[attr-defined]
    assert marks[4] == "2024-01-01T00:00:11.000Z"  # p5's batch ran with 11.000
    assert_same(capture, result, orderdoc_dropped(capture, spark_flags(settings), tmp_path), W)


def test_the_counter_counts_partial_aggregates_not_events(spark: object, tmp_path: Path) -> None:
    # delay 0, trigger 1 s: "b" (25 s, batch 26) moves the watermark to 25 s, a batch without
    # data runs at 27, and the batch at 28 holds three events of [0, 10) and one of [10, 20),
    # filtered with 25 s: four events dropped, but
    # numRowsDroppedByWatermark counts one row per window after the partial aggregation: 2
    def ev(id_: str, event_s: int, arrival_s: float) -> Event:
        return Event(id_, 0, T0_MS + event_s * 1000, T0_MS + round(arrival_s * 1000))

    capture = Capture(
        "together",
        (ev("a", 1, 1.5), ev("b", 25, 25.5), ev("c", 2, 27.2), ev("d", 3, 27.4),
         ev("e", 4, 27.6), ev("f", 12, 27.8)),
    )  # fmt: skip
    settings = SparkSettings(W, 0, 1_000)
    result = run_spark(spark, capture, settings, tmp_path / "spark")
    assert result.dropped == {"c", "d", "e", "f"}
    counter = [dropped for _, dropped, _ in result.details["batches"].values()]  # type: ignore[attr-defined]
    assert sum(counter) == 2
    assert_same(capture, result, orderdoc_dropped(capture, spark_flags(settings), tmp_path), W)
