"""Which column of a capture names its senders, and which columns are worth an OVER key: the
one rule behind explain's sender column (the devices its findings name, its OVER analysis),
the recommender's default OVER candidates and the app's device views (docs/explain.md, "How
the sender column is chosen").

1. **Never a sender** (:mod:`diagnostics.whatif.sender_names`): Capture's and ASA's system columns (``SequenceNumber``, ``Offset``,
   ``EnqueuedTimeUtc``, ``EventEnqueuedUtcTime``, ``PartitionId``, ``SystemProperties``,
   ``Properties``, ``Body``, ...), the time, arrival and partition columns, and columns that
   are not text or whole numbers.
2. **Values repeat**: at least 2 values and on average at least :data:`MIN_EVENTS_PER_SENDER`
   events per value. A column with about one value per event (an event id) is not a sender.
3. **Each sender's lateness is consistent within itself**: of the spread of the events'
   lateness within their partitions (arrival − application time, taken as ranks so that a
   far-off time weighs like any other; a partition's own network delay is shared by all its
   senders, so it is no sender's), the share that lies between the column's values, less
   what as many groups of random events would explain by chance, is at least
   :data:`MIN_CONSISTENCY` (a capture of more than :data:`MEASURED_EVENTS` events is read at
   an even stride for this and rule 4's spreads). A message
   counter (``msgSeq``) or a measurement repeats, but its values mix every sender's lateness.
4. Of the columns that qualify, the most consistent is the sender column; a column within
   :data:`NEAR` of it whose name says it names senders, then one with more values, is preferred:
   a sender is the finest grouping that shares one lateness (a gateway column groups senders).
5. When the lateness tells no column apart (no usable times, or every event equally late), a
   column whose name says it names senders (``deviceId``, ``DeviceName``, ``device_id``,
   ``hostname``, ``IoTHub.ConnectionDeviceId``, ...: one of its words, split at ``_``, ``-``,
   ``.``, spaces and case changes, is a sender word, alone or followed by ``id``, ``name`` or
   ``key``) and passes rule 2 is taken, and said to be chosen by its name.

The OVER candidates are the qualifying columns, best first (rule 5's when none qualifies).

A capture's cache keeps the column this rule chose for it (to name the senders of far-off
times): a change to the rule raises ``diagnostics.engine.summary.SENDER_RULE``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import numpy as np
import polars as pl

from diagnostics.engine.columns import EventColumns
from diagnostics.engine.policy import OrderingPolicy
from diagnostics.whatif.evaluate import Prepared, prepare
from diagnostics.whatif.sender_names import (
    exact,
    is_system,
    kind_ok,
    names_a_sender,
    squashed,
)
from diagnostics.words import listed, number

#: Rule 2: the fewest events per value, on average, of a sender column.
MIN_EVENTS_PER_SENDER = 2.0
#: Rule 3: the least share of the lateness's spread that lies between a sender column's values.
MIN_CONSISTENCY = 0.5
#: Rule 4: columns this close to the most consistent one count as explaining as much.
NEAR = 0.05
#: Rules 3 and 4 read at most about this many events: a larger capture's lateness is read at
#: an even stride (every k-th event in its order), which estimates the same shares and spreads
#: (rule 2 counts every event).
MEASURED_EVENTS = 400_000


def measured_stride(height: int) -> int:
    """Every how many events rules 3 and 4 read (1: all of them)."""
    return max(1, -(-height // MEASURED_EVENTS))


@dataclass(frozen=True)
class SenderColumn:
    """The evidence for one column: its values, events per value on average, the share of
    the lateness's spread between its values beyond chance (``None``: not measured), the
    typical spread of one value's lateness and the spread between values (p10-p90, seconds),
    and whether its name says it names senders."""

    column: str
    values: int
    per_value: float
    consistency: float | None
    within_s: float | None = None
    between_s: float | None = None
    named: bool = False

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "column": self.column,
            "values": self.values,
            "events_per_value": round(self.per_value, 1),
            "consistency": None if self.consistency is None else round(self.consistency, 3),
            "spread_within_seconds": self.within_s,
            "spread_between_seconds": self.between_s,
        }


@dataclass(frozen=True)
class SenderChoice:
    """The sender column (``None``: none found), why, the OVER candidates best first (the
    chosen column first), and the columns considered and left out, each with why."""

    column: str | None
    reason: str
    candidates: tuple[SenderColumn, ...] = ()
    left_out: tuple[tuple[str, str], ...] = ()

    @property
    def over_columns(self) -> tuple[str, ...]:
        """The OVER key candidates, best first."""
        return tuple(c.column for c in self.candidates)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "column": self.column,
            "reason": self.reason,
            "candidates": [c.to_dict() for c in self.candidates],
            "left_out": [{"column": c, "why": why} for c, why in self.left_out],
        }


def _ranks(lateness: pl.Series | None, height: int) -> pl.Series | None:
    """The lateness as ranks (ties averaged), null where unknown; ``None`` when it cannot
    tell senders apart (no values, or all equal)."""
    if lateness is None or lateness.len() != height:
        return None
    values = lateness.cast(pl.Float64).fill_nan(None)
    if values.drop_nulls().n_unique() < 2:
        return None
    return values.rank("average")


def _within(frame: pl.DataFrame, by: list[str]) -> tuple[float, int]:
    """(sum of squares of ``r`` around its group means, number of groups) by ``by``."""
    sums = frame.group_by(by).agg(
        ((pl.col("r") - pl.col("r").mean()) ** 2).sum().alias("ss"), pl.len().alias("n")
    )
    return float(sums["ss"].sum()), sums.height


def consistency(
    keys: pl.Series, ranks: pl.Series, partition: pl.Series | None = None
) -> float | None:
    """Rule 3's measure: the share of the variance of ``ranks`` within partitions that lies
    between the values of ``keys`` (in each partition), adjusted for the share as many random
    groups would have (1 − within mean square / the partitions' within mean square);
    ``None`` when it cannot be measured (fewer than 2 values or no spread)."""
    part = pl.Series(np.zeros(keys.len(), dtype=np.int64)) if partition is None else partition
    frame = pl.DataFrame({"k": keys, "r": ranks, "p": part}).drop_nulls()
    n = frame.height
    base, parts = _within(frame, ["p"])
    inner, groups = _within(frame, ["p", "k"])
    if n - groups < 1 or base <= 0:
        return None
    if groups == parts:  # one value per partition: nothing beyond the partition's own
        return 0.0
    return 1.0 - (inner / (n - groups)) / (base / (n - parts))


def spreads(keys: pl.Series, lateness: pl.Series) -> tuple[float | None, float | None]:
    """(typical p10-p90 spread of one value's lateness, p10-p90 spread of the values' median
    lateness), in seconds rounded to the millisecond."""
    frame = pl.DataFrame({"k": keys, "l": lateness}).drop_nulls()
    if frame.is_empty():
        return None, None
    per = frame.group_by("k").agg(
        (pl.col("l").quantile(0.9) - pl.col("l").quantile(0.1)).alias("within"),
        pl.col("l").median().alias("mid"),
    )
    within = per["within"].median()
    between = per["mid"].quantile(0.9) - per["mid"].quantile(0.1)  # type: ignore[operator]
    return (
        None if within is None else round(float(within), 3),  # type: ignore[arg-type]
        round(float(between), 3),
    )


class LeftOut(StrEnum):
    """Why a column is not a sender (rules 1-3)."""

    SYSTEM = "a system column"
    ONE_PER_EVENT = "about one value per event"
    MIXED = "its values mix senders' lateness"


def choose_senders(
    frame: pl.DataFrame,
    lateness: pl.Series | None = None,
    exclude: Iterable[str] = (),
    partition: pl.Series | None = None,
) -> SenderChoice:
    """The sender column of ``frame`` by the module's rule. ``lateness``: each row's arrival −
    application time in seconds (null where the time is not valid), aligned with ``frame``;
    ``exclude``: the time, arrival and partition columns; ``partition``: each row's
    partition (the lateness is compared within partitions)."""
    skip = {squashed(c) for c in exclude if c}
    n = frame.height
    step = measured_stride(n)
    sample = frame.gather_every(step) if step > 1 else frame
    if lateness is not None and lateness.len() == n and step > 1:
        lateness = lateness.gather_every(step)
    if partition is not None and partition.len() == n and step > 1:
        partition = partition.gather_every(step)
    ranks = _ranks(lateness, sample.height)
    system: list[str] = []
    ids: list[str] = []
    measured: list[SenderColumn] = []
    for name, dtype in frame.schema.items():
        if squashed(name) in skip or not kind_ok(dtype):
            continue
        if is_system(name):
            system.append(name)
            continue
        nulls = frame[name].null_count()
        values = frame[name].n_unique() - (1 if nulls else 0)  # the values but null
        per_value = (n - nulls) / max(values, 1)
        if values < 2:
            continue
        if per_value < MIN_EVENTS_PER_SENDER:
            ids.append(name)
            continue
        score = None if ranks is None else consistency(sample[name], ranks, partition)
        measured.append(SenderColumn(name, values, per_value, score, named=names_a_sender(name)))
    qualified = [
        c for c in measured if c.consistency is not None and c.consistency >= MIN_CONSISTENCY
    ]
    mixed = sorted(
        (c for c in measured if c not in qualified and c.consistency is not None),
        key=lambda c: (-(c.consistency or 0.0), c.column),
    )
    left = (
        *((c.column, LeftOut.MIXED, c.consistency) for c in mixed),
        *((name, LeftOut.ONE_PER_EVENT, None) for name in ids),
        *((name, LeftOut.SYSTEM, None) for name in system),
    )
    if qualified:
        return _by_evidence(sample, lateness, qualified, left)
    return _by_name(measured, left, measured_any=any(c.consistency is not None for c in measured))


def _left_words(left: Sequence[tuple[str, LeftOut, float | None]], chosen: str | None) -> str:
    """``; not senders: gatewayId and msgSeq (their values mix senders' lateness: 30%, 0%
    consistent), SequenceNumber and Offset (system columns)``."""
    parts = []
    mixed = [(c, v) for c, why, v in left if why is LeftOut.MIXED and c != chosen]
    if mixed:
        shares = ", ".join(f"{max(v or 0.0, 0.0):.0%}" for _, v in mixed)
        parts.append(
            f"{listed([c for c, _ in mixed])} (their values mix senders' lateness: {shares} "
            "consistent)"
        )
    ids = [c for c, why, _ in left if why is LeftOut.ONE_PER_EVENT]
    if ids:
        parts.append(f"{listed(ids)} (about one value per event)")
    system = [c for c, why, _ in left if why is LeftOut.SYSTEM]
    if system:
        parts.append(f"{listed(system)} (system columns)")
    return f"; not senders: {'; '.join(parts)}" if parts else ""


def _by_evidence(
    frame: pl.DataFrame,
    lateness: pl.Series | None,
    qualified: list[SenderColumn],
    left: Sequence[tuple[str, LeftOut, float | None]],
) -> SenderChoice:
    best = max(c.consistency or 0.0 for c in qualified)
    near = [c for c in qualified if (c.consistency or 0.0) >= best - NEAR]
    chosen = min(near, key=lambda c: (not c.named, -c.values, c.column))
    others = sorted(
        (c for c in qualified if c is not chosen),
        key=lambda c: (-(c.consistency or 0.0), c.column),
    )
    assert lateness is not None
    within, between = spreads(frame[chosen.column], lateness)
    chosen = dataclasses.replace(chosen, within_s=within, between_s=between)
    spread = (
        f" (one value's lateness spreads {within:g} s, p10-p90; their medians {between:g} s)"
        if within is not None and between is not None
        else ""
    )
    also = [f"{c.column} ({c.consistency:.0%})" for c in others]
    reason = (
        f"chosen on evidence: its {number(chosen.values)} values repeat, "
        f"{chosen.per_value:,.0f} events each on average, and each value's lateness is "
        f"consistent within itself: {chosen.consistency:.0%} of the lateness's spread lies "
        f"between the values{spread}"
        + (f"; also consistent: {listed(also)}" if also else "")
        + _left_words(left, chosen.column)
    )
    return SenderChoice(chosen.column, reason, (chosen, *others), _pairs(left))


def _by_name(
    measured: list[SenderColumn],
    left: Sequence[tuple[str, LeftOut, float | None]],
    *,
    measured_any: bool,
) -> SenderChoice:
    named = sorted(
        (c for c in measured if c.named),
        key=lambda c: (not exact(c.column), c.values, c.column),
    )
    if not named:
        why = (
            "no column's values each have a consistent lateness, and none is named like a sender"
            if measured_any
            else "no column is named like a sender"
        )
        return SenderChoice(None, why + _left_words(left, None), (), _pairs(left))
    chosen = named[0]
    basis = (
        "no column's values each have a consistent lateness"
        if measured_any
        else "the lateness cannot tell senders apart"
    )
    reason = (
        f"chosen by its name: {basis}; its {number(chosen.values)} values repeat, "
        f"{chosen.per_value:,.0f} events each on average" + _left_words(left, chosen.column)
    )
    kept = [item for item in left if item[0] != chosen.column]
    return SenderChoice(chosen.column, reason, tuple(named), _pairs(kept))


def _pairs(left: Sequence[tuple[str, LeftOut, float | None]]) -> tuple[tuple[str, str], ...]:
    return tuple((column, why.value) for column, why, _ in left)


def lateness_seconds(arrival: pl.Series, application: pl.Series) -> pl.Series:
    """Arrival − application time in seconds (null where either is null): what rule 3 reads."""
    return ((arrival.dt.epoch("ns") - application.dt.epoch("ns")) / 1e9).alias("lateness")


def sender_choice(
    events: pl.DataFrame,
    policy: OrderingPolicy,
    columns: EventColumns | None,
    prepared: Prepared | None = None,
) -> SenderChoice:
    """The capture's sender column by the one rule (:func:`~diagnostics.whatif.senders.
    choose_senders`), on each event's lateness; ``prepared``: the capture already prepared
    (any OVER key set), to read its parsed times."""
    known = columns or EventColumns()
    exclude = (policy.timestamp_by or "", known.arrival, known.partition or "")
    if policy.timestamp_by is None:
        return choose_senders(events, None, exclude)
    if prepared is None:
        prepared = prepare(events, policy.timestamp_by, (), columns=known)
    late_ns = pl.col(known.parsed_arrival).dt.epoch("ns") - pl.col(policy.timestamp_by).dt.epoch(
        "ns"
    )
    part = known.partition
    has_part = part is not None and part in prepared.frame.columns
    frame = prepared.frame.select(
        pl.col(known.row),
        (late_ns / 1e9).alias("lateness"),
        (pl.col(part) if has_part and part else pl.lit(0)).alias("partition"),
    ).sort(known.row)
    return choose_senders(events, frame["lateness"], exclude, frame["partition"])
