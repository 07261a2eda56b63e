"""The Spark replay's checks of S1's narrow columns before S3 (docs/spark-replay.md, S1): the
error the local replay stops at, the partitions present, arrivals far off the others, a
partition that was not declared, and the summary's warning when most application times are
invalid.

The first three come from one grouped query (:func:`narrow_facts`, O(days) rows to the
driver) instead of a query each: on a small capture each Spark query costs more than its
rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import polars as pl

from diagnostics.captures.far_off import FAR_GAP_NS, far_runs
from diagnostics.engine.columns import EventColumns
from diagnostics.engine.engine import OrderingEngine
from diagnostics.engine.policy import OrderingPolicy
from diagnostics.engine.replay import partitions_in
from diagnostics.engine.summary import invalid_time_line
from diagnostics.errors import InputError
from diagnostics.spark.replay_splits import ReplayPlan, read_slice
from diagnostics.timestamps import EARLIEST, LATEST

if TYPE_CHECKING:
    from pyspark.sql import DataFrame


@dataclass(frozen=True, slots=True)
class NarrowFacts:
    """What the checks need of S1's rows.

    ``error``: the first arrival error in input order (its message); ``bad_in_input`` and
    ``bad_in_arrival``: the first value that is not a partition number, in input order and
    in arrival order (``(eid, value)``); ``parts``: the partitions present, sorted; ``days``:
    per day of arrival that holds events (in order), its first and last arrival and its
    event count."""

    error: str | None
    bad_in_input: tuple[int, str] | None
    bad_in_arrival: tuple[int, str] | None
    parts: tuple[int, ...]
    days: tuple[tuple[int, int, int], ...]


def narrow_facts(narrow: DataFrame) -> NarrowFacts:
    """:class:`NarrowFacts` of S1's rows, from one query grouped by day of arrival (a row
    with an arrival error has no arrival: its group is the null day)."""
    from pyspark.sql import functions as F

    error, bad = F.col("error"), F.col("bad_partition")
    day = F.when(error.isNull(), F.floor(F.col("arr") / F.lit(FAR_GAP_NS)))
    rows = (
        narrow.groupBy(day.alias("day"))
        .agg(
            F.min(F.when(error.isNotNull(), F.struct("eid", "error"))).alias("first_error"),
            F.min(F.when(bad.isNotNull(), F.struct("eid", "bad_partition"))).alias("bad_eid"),
            F.min(F.when(bad.isNotNull(), F.struct("arr", "eid", "bad_partition"))).alias(
                "bad_arr"
            ),
            F.collect_set("part").alias("parts"),
            F.min("arr").alias("lo"),
            F.max("arr").alias("hi"),
            F.count(F.lit(1)).alias("n"),
        )
        .collect()
    )

    def first(name: str, order: Sequence[str]) -> tuple | None:
        found = [row[name] for row in rows if row[name] is not None]
        return min((tuple(v[k] for k in order) for v in found), default=None)

    err = first("first_error", ("eid", "error"))
    by_eid = first("bad_eid", ("eid", "bad_partition"))
    by_arr = first("bad_arr", ("arr", "eid", "bad_partition"))
    days = sorted(
        (int(row["day"]), int(row["lo"]), int(row["hi"]), int(row["n"]))
        for row in rows
        if row["day"] is not None
    )
    return NarrowFacts(
        error=None if err is None else str(err[1]),
        bad_in_input=None if by_eid is None else (int(by_eid[0]), str(by_eid[1])),
        bad_in_arrival=None if by_arr is None else (int(by_arr[1]), str(by_arr[2])),
        parts=tuple(sorted({int(p) for row in rows for p in row["parts"]})),
        days=tuple((lo, hi, n) for _day, lo, hi, n in days),
    )


def first_error(facts: NarrowFacts, columns: EventColumns, declared: bool) -> str | None:
    """The error the local replay stops at, if any: the first bad arrival (input order), else
    the first value that is not a partition number (input order; arrival order when the
    partitions are declared, as the engine meets them)."""
    if facts.error is not None:
        return facts.error
    bad = facts.bad_in_arrival if declared else facts.bad_in_input
    if bad is None:
        return None
    eid, value = bad
    one = pl.DataFrame({columns.partition or "": [value]})
    try:
        partitions_in(one, columns, first_row=eid)
    except InputError as exc:
        return str(exc)
    return None


def far_off(facts: NarrowFacts) -> bool:
    """Whether some arrival is far off the others (``diagnostics.captures.far_off``: in a
    small run more than a day from the largest, or at a bound of the times a replay holds),
    from per-day minima, maxima and counts: a gap between two arrivals longer than a day is
    a gap between two days' extremes."""
    days = facts.days
    if not days:
        return False
    if days[0][0] <= EARLIEST or days[-1][1] >= LATEST:
        return True
    runs, count = [], 0
    for i, (lo, _hi, n) in enumerate(days):
        if i and lo - days[i - 1][1] > FAR_GAP_NS:
            runs.append(count)
            count = 0
        count += n
    return bool(far_runs([*runs, count]).any())


def undeclared(narrow: DataFrame, columns: EventColumns, partitions: Sequence[int]) -> str | None:
    """The engine's error for the first event (arrival order) of a partition that is not
    among the declared ones, if any."""
    from pyspark.sql import functions as F

    row = (
        narrow.filter(~F.col("part").isin(list(partitions)))
        .orderBy("arr", "eid")
        .limit(1)
        .collect()
    )
    if not row:
        return None
    name = columns.partition or "partition"
    one = pl.DataFrame(
        {
            name: [int(row[0]["part"])],
            columns.row: [int(row[0]["eid"])],
            columns.parsed_arrival: pl.Series([int(row[0]["arr"])])
            .cast(pl.Datetime("ns"))
            .dt.replace_time_zone("UTC"),
        }
    )
    engine = OrderingEngine(OrderingPolicy(), tuple(partitions), columns)
    try:
        engine.process(one)
    except InputError as exc:
        return str(exc)
    return None


def invalid_warning(
    narrow: DataFrame, plan: ReplayPlan, policy: OrderingPolicy, bad: int, total: int
) -> list[str]:
    """The summary's warning when most application times are invalid, as the local replay
    words it (its example value read back from the capture)."""
    from pyspark.sql import functions as F

    if policy.timestamp_by is None or bad * 2 <= total:
        return []
    row = (
        narrow.filter(F.col("app").isNull() & F.col("app_given"))
        .orderBy("eid")
        .select("eid", "split")
        .limit(1)
        .collect()
    )
    first = None
    if row:
        events, applied, _ = read_slice(plan, int(row[0]["split"]))
        offset = plan.slices[int(row[0]["split"])].offset
        first = events[applied.timestamp_by or ""][int(row[0]["eid"]) - offset]
    line = invalid_time_line(bad, total, policy.timestamp_by, first)
    return [] if line is None else [line]
