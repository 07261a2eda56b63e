"""The replay summary (``orderdoc replay``'s printed report): counts in the singular or
plural as they fall."""

from __future__ import annotations

from diagnostics.engine.policy import OrderingPolicy
from diagnostics.engine.replay import replay
from diagnostics.engine.summary import format_summary, summarize

from .conftest import capture


def _partitions_line(rows: list[tuple], partitions: list[int]) -> str:
    events = capture(rows, ("ts", "arrival_time", "partition_id"))
    result = replay(events, OrderingPolicy(timestamp_by="ts"), partitions=partitions)
    text = format_summary(summarize(result))
    (line,) = [line for line in text.splitlines() if line.startswith("partitions")]
    return line


def test_one_timeline_is_singular_and_several_are_plural() -> None:
    assert _partitions_line([("12:00", "12:00:01", 0)], [0]) == "partitions  1 (1 timeline)"
    both = [("12:00", "12:00:01", 0), ("12:00", "12:00:01", 1)]
    assert _partitions_line(both, [0, 1]) == "partitions  2 (2 timelines)"
