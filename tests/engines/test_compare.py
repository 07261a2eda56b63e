"""The measured difference between ASA's replay and an engine's: events one keeps that the
other drops, and the window emission times compared event by event."""

from __future__ import annotations

import polars as pl

from diagnostics.durations import SECOND
from diagnostics.engine.policy import Action, OrderingPolicy
from diagnostics.engine.replay import replay
from diagnostics.engines import FlinkRules, replay_rules
from diagnostics.engines.compare import asa_window_emission, compare

DAY = "2024-01-01T"
CAPTURE = pl.DataFrame(
    {
        "ts": [f"{DAY}00:00:{s}Z" for s in ("01", "08", "12", "09", "21")],
        "arrival_time": [f"{DAY}00:00:{s}Z" for s in ("01", "08", "12", "13", "21")],
    }
)


def test_asa_emits_a_window_when_an_event_past_its_end_is_released() -> None:
    policy = OrderingPolicy(timestamp_by="ts", late_arrival_ns=0)
    out = replay(CAPTURE, policy).outcomes
    emitted = asa_window_emission(out, 10 * SECOND, per_timeline=False)
    released = out["release_time"].to_list()
    # events of [0 s, 10 s): emitted when the 12 s event is released; [10 s, 20 s): at 21 s.
    assert emitted.to_list()[:2] == [released[2], released[2]]
    assert emitted[2] == released[4]
    assert emitted[4] is None  # [20 s, 30 s) is not closed by the end of the capture


def test_compare_counts_the_events_asa_keeps_and_flink_drops() -> None:
    policy = OrderingPolicy(timestamp_by="ts", late_arrival_ns=5 * SECOND, action=Action.ADJUST)
    asa = replay(CAPTURE, policy).outcomes
    flink = replay_rules(CAPTURE, FlinkRules("ts", 10 * SECOND)).outcomes
    diff = compare(asa, flink, 10 * SECOND)
    # the 09 s event arriving at 13 s: ASA adjusts it (out of order), Flink's window closed.
    assert asa.filter(pl.col("status") == "adjusted")["event_id"].to_list() == [3]
    assert flink.filter(pl.col("dropped"))["event_id"].to_list() == [3]
    assert (diff.asa_only, diff.asa_only_adjusted, diff.engine_only) == (1, 1, 0)
    assert (diff.asa_dropped, diff.engine_dropped, diff.events) == (0, 1, 5)
    assert diff.delay_change["p50"] is not None
