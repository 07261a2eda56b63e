"""Which compared windows sit at an edge of the data, where the difference between as
emitted and on time is not the ordering's alone (docs/impact.md, "Interior and edge windows").

A window is an edge window, the first of these that applies:

* **far-off times**: it lies more than a day beyond the rest of the data (a window of an
  event stamped 2099 beside a capture of 2024: ``diagnostics.captures.far_off``);
* **capture start** / **capture end**: it begins before the capture's data begins or ends
  after it ends. The data's span is from the later of the first arrival and the first
  application time to the earlier of the last ones (events that are valid, not early, not
  far off): before it, events that belong in a window were sent before the capture began;
  after it, its last events land in windows the on-time side has nothing for. When the
  arrivals and the application times do not overlap at all (history replayed through a
  live job), every window is the ordering's doing and none is a capture edge;
* **silent partition**: it overlaps a stretch of 5 minutes or more in which a partition its
  events come from sent nothing (ASA's InputPartitionNotProgressing interval): the events
  cut off by the silence belong on one side only;
* **early events**: an event that moved into or out of it was dropped as early
  (EarlyInputEvent): on time it counts at its sender's clock, which is wrong, so the window
  measures the clock as much as the ordering.

Every other window is interior: what the ordering did to it is what the tolerances decide.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum

import numpy as np
import polars as pl

from diagnostics.captures.far_off import FAR_GAP_NS, far_off_mask
from diagnostics.durations import MINUTE
from diagnostics.errors import InputError
from diagnostics.impact.aggregate import column_expr
from diagnostics.impact.compare import Cause, keys_text
from diagnostics.impact.model import AggregateStep
from diagnostics.timestamps import iso

#: A partition sending nothing for this long is silent (ASA's notice interval).
SILENT_NS = 5 * MINUTE
#: The column impact.parquet names a window's edge in (null: interior).
EDGE = "edge"


class Edge(StrEnum):
    """Why a window is reported apart from the interior ones."""

    FAR_OFF = "far-off times"
    CAPTURE_START = "capture start"
    CAPTURE_END = "capture end"
    SILENT_PARTITION = "silent partition"
    EARLY_EVENTS = "early events"


@dataclass(frozen=True, slots=True)
class Span:
    """The data's span in ns (see the module; ``start`` > ``end`` when arrivals and
    application times do not overlap), the first and last time of either (``first``,
    ``last``: beyond them by a day a window is far off) and each partition's silent
    stretches."""

    start: int
    end: int
    first: int = 0
    last: int = 0
    silences: dict[int, list[tuple[int, int]]] = field(default_factory=dict)

    @property
    def overlaps(self) -> bool:
        """Whether arrivals and application times overlap (else no capture edge)."""
        return self.start <= self.end

    def describe(self, edge: Edge) -> str:
        """What the windows of ``edge`` are, in a few words."""
        if edge is Edge.CAPTURE_START:
            return f"they begin before the capture's data does ({_minute(self.start)})"
        if edge is Edge.CAPTURE_END:
            return f"they end after the capture's data does ({_minute(self.end)})"
        if edge is Edge.SILENT_PARTITION:
            stretches = [
                f"partition {p} {_minute(a)} .. {_minute(b)}"
                for p, spans in sorted(self.silences.items())
                for a, b in spans
            ]
            shown = ", ".join(stretches[:3]) + (" ..." if len(stretches) > 3 else "")
            return f"they overlap a partition's silence ({shown})"
        if edge is Edge.EARLY_EVENTS:
            return (
                "events dropped as early (EarlyInputEvent) moved into or out of them: on time "
                "they count at their senders' clocks, which are ahead"
            )
        return "they lie far off the rest of the data in time (an application time far off)"


def _minute(ns: int) -> str:
    """``2024-06-03T08:39:59Z``: ``ns`` to the second."""
    return f"{str(iso(ns))[:19]}Z"


def _bulk(values: np.ndarray) -> np.ndarray:
    """``values`` without those far off the rest."""
    if values.size == 0:
        return values
    far, _, _ = far_off_mask(values)
    return values[~far]


def _silences(partition: np.ndarray, arrival: np.ndarray, start: int, end: int) -> dict:
    """Per partition, its stretches of :data:`SILENT_NS` or more without an arrival, between
    the capture's first and last arrival (``start``, ``end``)."""
    found: dict[int, list[tuple[int, int]]] = {}
    order = np.lexsort((arrival, partition))
    partition, arrival = partition[order], arrival[order]
    for p in np.unique(partition):
        times = arrival[partition == p]
        edges = np.r_[start, times[(times >= start) & (times <= end)], end]
        gaps = np.flatnonzero(np.diff(edges) >= SILENT_NS)
        if gaps.size:
            found[int(p)] = [(int(edges[i]), int(edges[i + 1])) for i in gaps]
    return found


def data_span(outcomes: pl.DataFrame) -> Span | None:
    """The :class:`Span` of a replay's outcomes (``None`` without a valid event, or without
    arrival times: then no window is at an edge)."""
    if "arrival" not in outcomes.columns:
        return None
    valid = outcomes.filter(pl.col("application_time").is_not_null() & ~pl.col("early"))
    if valid.is_empty():
        return None
    app = _bulk(valid["application_time"].dt.epoch("ns").to_numpy())
    arrival_all = outcomes["arrival"].dt.epoch("ns").to_numpy()
    arrival = _bulk(arrival_all)
    if app.size == 0 or arrival.size == 0:
        return None
    first, last = int(arrival.min()), int(arrival.max())
    start, end = max(first, int(app.min())), min(last, int(app.max()))
    outer = (min(first, int(app.min())), max(last, int(app.max())))
    if "partition" not in outcomes.columns:
        return Span(start, end, *outer)
    partition = outcomes["partition"].to_numpy()
    return Span(start, end, *outer, _silences(partition, arrival_all, first, last))


def _key_partitions(outcomes: pl.DataFrame, step: AggregateStep) -> pl.DataFrame:
    """Per group keys of ``step`` (as impact.parquet writes them), the partitions its events
    come from (``keys``, ``partitions``: a list)."""
    schema = outcomes.schema
    try:
        named = [
            column_expr(key, schema, step.name).alias(f"__k{i}") for i, key in enumerate(step.keys)
        ]
    except InputError:
        return pl.DataFrame(schema={"keys": pl.String, "partitions": pl.List(pl.Int64)})
    return (
        outcomes.lazy()
        .select(*named, "partition")
        .select(keys_text(step).alias("keys"), "partition")
        .group_by("keys")
        .agg(pl.col("partition").unique().alias("partitions"))
        .collect()
    )


def window_edges(
    outcomes: pl.DataFrame,
    table: pl.DataFrame,
    moves: pl.DataFrame,
    steps: Sequence[AggregateStep],
) -> tuple[pl.DataFrame, Span | None]:
    """The edge of each compared window (``step``, ``window_end``, ``keys``, :data:`EDGE`:
    an :class:`Edge` value, null when interior) and the data's span."""
    windows = table.select("step", "window_start", "window_end", "keys").unique(
        ["step", "window_end", "keys"], maintain_order=True
    )
    span = data_span(outcomes)
    if span is None or windows.is_empty():
        return windows.select(
            "step", "window_end", "keys", pl.lit(None, dtype=pl.String).alias(EDGE)
        ), span
    end = pl.col("window_end").dt.epoch("ns")
    begin = pl.coalesce(pl.col("window_start"), pl.col("window_end")).dt.epoch("ns")
    early = (
        moves.filter(pl.col("cause") == Cause.EARLY.value)
        .select("step", "window_end", "keys")
        .unique()
        .with_columns(pl.lit(True).alias("__early"))
    )
    silent = _silent_windows(outcomes, windows, steps, span)
    marked = (
        windows.join(early, on=["step", "window_end", "keys"], how="left", nulls_equal=True)
        .join(silent, on=["step", "window_end", "keys"], how="left", nulls_equal=True)
        .with_columns(
            pl.when((end > span.last + FAR_GAP_NS) | (begin < span.first - FAR_GAP_NS))
            .then(pl.lit(Edge.FAR_OFF.value))
            .when(pl.lit(span.overlaps) & (begin < span.start))
            .then(pl.lit(Edge.CAPTURE_START.value))
            .when(pl.lit(span.overlaps) & (end > span.end))
            .then(pl.lit(Edge.CAPTURE_END.value))
            .when(pl.col("__silent").fill_null(False))
            .then(pl.lit(Edge.SILENT_PARTITION.value))
            .when(pl.col("__early").fill_null(False))
            .then(pl.lit(Edge.EARLY_EVENTS.value))
            .otherwise(pl.lit(None, dtype=pl.String))
            .alias(EDGE)
        )
    )
    return marked.select("step", "window_end", "keys", EDGE), span


def _silent_windows(
    outcomes: pl.DataFrame,
    windows: pl.DataFrame,
    steps: Sequence[AggregateStep],
    span: Span,
) -> pl.DataFrame:
    """The windows (``step``, ``window_end``, ``keys``, ``__silent``) that overlap a silence
    of a partition their keys' events come from."""
    empty = pl.DataFrame(
        schema={
            "step": pl.String,
            "window_end": windows.schema["window_end"],
            "keys": pl.String,
            "__silent": pl.Boolean,
        }
    )
    if not span.silences:
        return empty
    stretches = pl.DataFrame(
        [(p, a, b) for p, spans in span.silences.items() for a, b in spans],
        schema={"partition": pl.Int64, "__a": pl.Int64, "__b": pl.Int64},
        orient="row",
    )
    found = []
    for step in steps:
        mine = windows.filter(pl.col("step") == step.name)
        if mine.is_empty():
            continue
        parts = _key_partitions(outcomes, step)
        hit = (
            mine.join(parts, on="keys", how="inner", nulls_equal=True)
            .explode("partitions")
            .rename({"partitions": "partition"})
            .join(stretches, on="partition", how="inner")
            .filter(
                (pl.coalesce("window_start", "window_end").dt.epoch("ns") < pl.col("__b"))
                & (pl.col("window_end").dt.epoch("ns") > pl.col("__a"))
            )
            .select("step", "window_end", "keys")
            .unique()
            .with_columns(pl.lit(True).alias("__silent"))
        )
        found.append(hit)
    return pl.concat(found) if found else empty
