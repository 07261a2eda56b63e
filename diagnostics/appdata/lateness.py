"""Lateness data: how late events arrive, against the configured late-arrival tolerance.

Two sources, same output shape (``group``, ``lateness_seconds``, ``weight``):

* an aggregate folder: one value per diagnostic record (the lateness of its example event,
  arrival − application time), weighted by the record's ``event_count``; groups are
  partitions (devices are not in the logs);
* a replayed capture: one value per event (arrival − application time), weight 1; groups
  are partitions or devices.

Lateness is positive for late events and negative for events from the future (early).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl

from diagnostics.aggregates import TableName
from diagnostics.appdata.store import Aggregate, collect, scan
from diagnostics.captures.far_off import far_off_mask
from diagnostics.engine.columns import OUTCOME_COLUMNS, EventColumns
from diagnostics.whatif.sender_names import sender_names
from diagnostics.whatif.senders import choose_senders, lateness_seconds
from diagnostics.words import plural

OTHER = "other"
SCHEMA = {"group": pl.String, "lateness_seconds": pl.Float64, "weight": pl.Int64}


def from_aggregate(
    agg: Aggregate, kinds: tuple[str, ...] | None = None, job: str | None = None
) -> pl.DataFrame:
    """Per-record example lateness by partition (``group`` = ``partition N`` or ``unknown``),
    of ``job``'s records when given."""
    frame = scan(agg, TableName.DATA_ERRORS)
    if frame is None:
        return pl.DataFrame(schema=SCHEMA)
    if job is not None:
        frame = frame.filter(pl.col("job") == job)
    if kinds:
        frame = frame.filter(pl.col("kind").is_in(kinds))
    return collect(
        frame.filter(pl.col("lateness_seconds").is_not_null()).select(
            pl.when(pl.col("partition_id").is_null())
            .then(pl.lit("unknown"))
            .otherwise(pl.lit("partition ") + pl.col("partition_id").cast(pl.String))
            .alias("group"),
            pl.col("lateness_seconds").cast(pl.Float64),
            pl.col("event_count").fill_null(1).cast(pl.Int64).alias("weight"),
        ),
        agg,
        TableName.DATA_ERRORS,
    )


def device_column(outcomes: pl.DataFrame, over: tuple[str, ...] = ()) -> str | None:
    """The column naming devices: the first OVER key, else the sender column the explainer
    and the recommender choose (:func:`diagnostics.whatif.senders.choose_senders`, on the
    replay's lateness), else the first column named like a sender."""
    for name in over:
        if name in outcomes.columns:
            return name
    lateness = None
    if {"arrival", "application_time"} <= set(outcomes.columns):
        lateness = lateness_seconds(outcomes["arrival"], outcomes["application_time"])
    engine = (*OUTCOME_COLUMNS, EventColumns().arrival, EventColumns().partition or "")
    part = outcomes["partition"] if "partition" in outcomes.columns else None
    chosen = choose_senders(outcomes, lateness, engine, part).column
    if chosen is not None:
        return chosen
    found = sender_names(outcomes.columns, engine)
    return found[0] if found else None


def from_outcomes(outcomes: pl.DataFrame, by: str) -> pl.DataFrame:
    """Per-event lateness of a replay, grouped ``by`` ``"partition"`` or a device column."""
    if by == "partition":
        group = pl.lit("partition ") + pl.col("partition").cast(pl.String)
    else:
        group = pl.col(by).cast(pl.String).fill_null("(none)")
    return outcomes.filter(pl.col("application_time").is_not_null()).select(
        group.alias("group"),
        ((pl.col("arrival") - pl.col("application_time")).dt.total_microseconds() / 1e6).alias(
            "lateness_seconds"
        ),
        pl.lit(1, dtype=pl.Int64).alias("weight"),
    )


@dataclass(frozen=True, slots=True)
class Bulk:
    """Where a chart of lateness values looks: from ``low`` to ``high`` seconds, the values
    that are not far off the rest (the rule of ``diagnostics.captures.far_off``); ``outside``
    events (weight) lie beyond, their application times far off the others."""

    low: float
    high: float
    outside: int

    def note(self) -> str:
        """What the chart says of the events it leaves out."""
        return (
            f"{plural(self.outside, 'event')} outside the chart: an application time far off "
            "the others (named on the Overview)"
        )


def bulk(frame: pl.DataFrame) -> Bulk | None:
    """The :class:`Bulk` of a lateness frame (``lateness_seconds``, ``weight``) when some
    values are far off the rest; ``None`` when none is (the chart shows every value)."""
    if frame.is_empty():
        return None
    seconds = frame["lateness_seconds"].to_numpy()
    far, _, _ = far_off_mask(np.round(seconds * 1e9).astype(np.int64))
    if not far.any():
        return None
    kept = seconds[~far]
    outside = int(frame["weight"].to_numpy()[far].sum())
    return Bulk(float(kept.min()), float(kept.max()), outside)


def in_bulk(frame: pl.DataFrame, span: Bulk | None) -> pl.DataFrame:
    """The rows of a lateness frame within ``span`` (all of them without one)."""
    if span is None:
        return frame
    return frame.filter(pl.col("lateness_seconds").is_between(span.low, span.high))


def top_groups(frame: pl.DataFrame, max_groups: int) -> pl.DataFrame:
    """Keep the ``max_groups`` groups with most weight; fold the rest into ``other``."""
    ranked = (
        frame.group_by("group")
        .agg(pl.col("weight").sum())
        .sort(["weight", "group"], descending=[True, False])
    )
    keep = ranked["group"].head(max_groups).to_list()
    return frame.with_columns(
        pl.when(pl.col("group").is_in(keep)).then(pl.col("group")).otherwise(pl.lit(OTHER))
    )


def ecdf(frame: pl.DataFrame, max_groups: int = 8, points: int = 200) -> pl.DataFrame:
    """Weighted ECDF per group, at most ``points`` steps each: ``group``, ``lateness_seconds``,
    ``share`` (fraction of the group's weight at or below the value); sorted by group, value.
    Every group is carried on at share 1 to the largest value of all groups, so that lines
    are comparable over the whole axis.

    Invariant: per group ``lateness_seconds`` is increasing, ``share`` non-decreasing and its
    last value is 1.
    """
    out = []
    points = max(points, 2)
    folded = top_groups(frame, max_groups)
    top = folded["lateness_seconds"].max() if folded.height else None
    for (name,), part in folded.group_by("group", maintain_order=False):
        # each group's values sorted on their own (ties in any order: a tie's share is read
        # at its last event, after all of them); one event a row needs no weights moved
        values = part["lateness_seconds"].to_numpy()
        weights = part["weight"].to_numpy().astype(np.float64)
        if bool((weights == 1).all()):
            values = np.sort(values)
        else:
            order = np.argsort(values)
            values, weights = values[order], weights[order]
        share = np.cumsum(weights) / weights.sum()
        # the last index of each distinct value, then thin to at most ``points``
        last = np.r_[np.flatnonzero(values[1:] != values[:-1]), len(values) - 1]
        extend = top is not None and values[-1] < top
        room = points - 1 if extend else points
        if len(last) > room:
            last = last[np.unique(np.linspace(0, len(last) - 1, room).round().astype(int))]
        xs, ys = values[last], share[last]
        if extend:
            xs, ys = np.r_[xs, top], np.r_[ys, 1.0]
        out.append(pl.DataFrame({"group": str(name), "lateness_seconds": xs, "share": ys}))
    if not out:
        return pl.DataFrame(
            schema={"group": pl.String, "lateness_seconds": pl.Float64, "share": pl.Float64}
        )
    return pl.concat(out).sort("group", "lateness_seconds")


def by_group(frame: pl.DataFrame, tolerance_s: float, max_groups: int = 8) -> pl.DataFrame:
    """Per group: ``events`` (weight), ``beyond_tolerance`` (weight later than the tolerance),
    ``share_beyond``, ``p50_s``, ``p95_s``, ``max_s`` (weighted by repetition); most events first.
    """
    folded = top_groups(frame, max_groups)
    rows = []
    for (name,), part in folded.group_by("group"):
        values = part["lateness_seconds"].to_numpy()
        weights = part["weight"].to_numpy()
        order = np.argsort(values, kind="stable")
        values, weights = values[order], weights[order]
        cum = np.cumsum(weights)
        total = int(cum[-1])

        def quantile(q: float, values: np.ndarray = values, cum: np.ndarray = cum) -> float:
            return float(values[int(np.searchsorted(cum, q * cum[-1], side="left"))])

        beyond = int(weights[values > tolerance_s].sum())
        rows.append(
            {
                "group": str(name),
                "events": total,
                "beyond_tolerance": beyond,
                "share_beyond": beyond / total if total else 0.0,
                "p50_s": quantile(0.5),
                "p95_s": quantile(0.95),
                "max_s": float(values[-1]),
            }
        )
    schema = {
        "group": pl.String,
        "events": pl.Int64,
        "beyond_tolerance": pl.Int64,
        "share_beyond": pl.Float64,
        "p50_s": pl.Float64,
        "p95_s": pl.Float64,
        "max_s": pl.Float64,
    }
    return pl.DataFrame(rows, schema=schema).sort(["events", "group"], descending=[True, False])
