"""With a capture, the one recommendation as explain carries it: what it says beside the
setting when the fix does not write it into the live job."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from diagnostics.durations import SECOND
from diagnostics.engine.policy import OrderingPolicy
from diagnostics.explain import Cause, explain
from diagnostics.explain.recommended import BACKFILL_ONLY


def test_an_unlimited_recommendation_for_old_data_says_it_is_for_a_backfill_job() -> None:
    """Historical replay with a capture: the recommendation keeps every event with an
    unlimited late tolerance, which the fix does not write into the live job: it says so."""
    capture = Path(__file__).resolve().parents[2] / "sample_logs" / "scenarios"
    events = pl.read_csv(capture / "historical_replay" / "capture.csv")
    policy = OrderingPolicy(timestamp_by="event_time", late_arrival_ns=5 * SECOND)
    report = explain(None, events=events, policy=policy, partitions=[0, 1, 2, 3])
    assert report.recommended is not None
    assert report.recommended.late_seconds is None
    assert any(f.cause is Cause.HISTORICAL_REPLAY for f in report.findings)
    assert BACKFILL_ONLY in report.recommended.notes
