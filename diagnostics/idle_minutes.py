"""How long partitions were idle: the union of their idle episodes, per partition.

Two episodes of one partition may overlap (two inputs reading it, or logs exported twice with
different notice times): the minutes are the time covered, never the sum of the episodes'
lengths. Episodes without a start or an end count nothing.

Invariant: a partition's idle minutes are at most the span from its first start to its last
end, and at least its longest episode.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime


def idle_minutes(
    episodes: Iterable[tuple[int | None, datetime | None, datetime | None]],
) -> dict[int | None, float]:
    """Per partition, the minutes covered by its episodes ``(partition, start, end)``."""
    by_partition: dict[int | None, list[tuple[datetime, datetime]]] = {}
    for partition, start, end in episodes:
        if start is not None and end is not None and end >= start:
            by_partition.setdefault(partition, []).append((start, end))
    covered: dict[int | None, float] = {}
    for partition, spans in by_partition.items():
        spans.sort()
        total = 0.0
        run_start, run_end = spans[0]
        for start, end in spans[1:]:
            if start > run_end:
                total += (run_end - run_start).total_seconds()
                run_start, run_end = start, end
            else:
                run_end = max(run_end, end)
        total += (run_end - run_start).total_seconds()
        covered[partition] = total / 60
    return covered
