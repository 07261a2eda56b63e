"""What the logs or a capture say about one diagnostic kind (:class:`KindStats`): how many
events, in which partitions and minutes, how late; and how a table of data-error records
becomes one per kind (:func:`kind_stats`).

Invariants: ``lateness`` is in seconds (arrival − application, so early events are
negative), with a weight per value (the events it stands for).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import polars as pl

from diagnostics.captures.far_off import SHOWN, far_off_mask
from diagnostics.scalars import as_float
from diagnostics.timestamps import iso


@dataclass(frozen=True)
class KindStats:
    """One diagnostic kind: how many events, where, when (``per_minute``: ``minutes`` with
    any, ``peak`` events in one minute, ``mean`` over those minutes) and how late."""

    events: int
    records: int = 0
    partitions: dict[int, int] = field(default_factory=dict)
    lateness: np.ndarray = field(default_factory=lambda: np.zeros(0))
    weights: np.ndarray = field(default_factory=lambda: np.zeros(0))
    exact: bool = False
    keys: dict[str, int] = field(default_factory=dict)
    per_minute: dict[str, float] = field(default_factory=dict)
    by_minute: dict[int, int] = field(default_factory=dict)
    #: records that named no count (each counted as one event: ``events`` is then a minimum)
    unknown_counts: int = 0
    #: events per input or output name (``Source``)
    sources: dict[str, int] = field(default_factory=dict)
    #: events per column the records' messages name (data errors of a payload or an output)
    columns: dict[str, int] = field(default_factory=dict)
    #: the events of this kind whose application time is far off the others (a capture's;
    #: ``diagnostics.captures.far_off``): left out of ``lateness``, named apart
    far_off: dict[str, object] | None = None
    #: invalid timestamps of a capture by what the column holds (``explain.invalid_times``)
    breakdown: dict[str, object] | None = None

    @property
    def events_text(self) -> str:
        """``"1,234"``, or ``"at least 1,234"`` when some records named no count."""
        return f"at least {self.events:,}" if self.unknown_counts else f"{self.events:,}"

    def quantile(self, q: float) -> float | None:
        """Weighted quantile of ``lateness`` (``None`` without values)."""
        return weighted_quantile(self.lateness, self.weights, q)

    def covered(self, limit: float) -> float | None:
        """Weighted share of ``lateness`` values ≤ ``limit`` (``None`` without values)."""
        if not self.lateness.size:
            return None
        total = float(self.weights.sum())
        return float(self.weights[self.lateness <= limit].sum()) / total if total else None


def weighted_quantile(values: np.ndarray, weights: np.ndarray, q: float) -> float | None:
    """The smallest value whose cumulative weight reaches ``q`` of the total."""
    if not values.size:
        return None
    order = np.argsort(values, kind="stable")
    cum = np.cumsum(weights[order])
    idx = int(np.searchsorted(cum, q * cum[-1], side="left"))
    return float(values[order][min(idx, values.size - 1)])


def kind_stats(errors: pl.DataFrame) -> dict[str, KindStats]:
    """One :class:`KindStats` per kind of the data-error records (``kind``, ``event_count``,
    ``partition_id``, ``lateness_seconds``, times and the optional ``source``, ``column_name``
    and ``count_known`` columns), in the records' order of kinds."""
    kinds: dict[str, KindStats] = {}
    for (kind,), part in errors.group_by("kind", maintain_order=True):
        per_part = (
            part.filter(pl.col("partition_id").is_not_null())
            .group_by("partition_id")
            .agg(pl.col("event_count").sum())
            .sort("partition_id")
        )
        late = part.filter(pl.col("lateness_seconds").is_not_null())
        late, far_off = _far_examples(late)
        minutes = part.group_by(
            pl.coalesce("from_time", "record_time").dt.truncate("1m").alias("m")
        ).agg(pl.col("event_count").fill_null(1).sum())
        known = (
            part["count_known"].fill_null(True)
            if "count_known" in part.columns
            else pl.Series([True] * part.height)
        )
        named = part.filter(pl.col("source").is_not_null()) if "source" in part.columns else None
        sources = (
            named.group_by("source").agg(pl.col("event_count").fill_null(1).sum()).sort("source")
            if named is not None
            else None
        )
        columns: dict[str, int] = {}
        if "column_name" in part.columns:
            per_column = (
                part.filter(pl.col("column_name").is_not_null())
                .group_by("column_name")
                .agg(pl.col("event_count").fill_null(1).sum())
                .sort("column_name")
            )
            columns = dict(zip(per_column["column_name"], per_column["event_count"], strict=True))
        kinds[str(kind)] = KindStats(
            columns=columns,
            unknown_counts=int((~known).sum()),
            sources=dict(zip(sources["source"], sources["event_count"], strict=True))
            if sources is not None
            else {},
            events=int(part["event_count"].fill_null(1).sum()),
            records=part.height,
            partitions=dict(zip(per_part["partition_id"], per_part["event_count"], strict=True)),
            lateness=late["lateness_seconds"].to_numpy().astype(np.float64),
            weights=late["event_count"].fill_null(1).to_numpy().astype(np.float64),
            exact=False,
            per_minute=minute_rates(minutes["event_count"]),
            by_minute=_by_minute(minutes["m"], minutes["event_count"]),
            far_off=far_off,
        )
    return kinds


def _far_examples(late: pl.DataFrame) -> tuple[pl.DataFrame, dict[str, object] | None]:
    """The records whose example event's application time is far off the others' (the rule
    of ``diagnostics.captures.far_off``, as for a capture's events) left out of ``late``,
    and what to say of them: how many records, their log lines and example times."""
    column = "example_application_time"
    if column not in late.columns or late.is_empty():
        return late, None
    times = late[column]
    known = times.is_not_null().to_numpy()
    if not known.any():
        return late, None
    far, low, high = far_off_mask(times.drop_nulls().dt.epoch("ns").to_numpy())
    mask = np.zeros(late.height, dtype=bool)
    mask[np.flatnonzero(known)[far]] = True
    if not mask.any():
        return late, None
    apart = late.filter(pl.Series(mask))
    lines = apart["source_line"].to_list() if "source_line" in apart.columns else []
    return late.filter(pl.Series(~mask)), {
        "events": apart.height,
        "counted_as": "log records (each with one example event)",
        "rows": [int(n) for n in lines[:SHOWN] if n is not None],
        "rows_are": "log lines",
        "values": [f"{str(iso(int(t)))[:23]}Z" for t in apart[column].dt.epoch("ns").head(SHOWN)],
        "devices": [],
        "device_column": None,
        "from": f"{str(iso(low))[:19]}Z",
        "to": f"{str(iso(high))[:19]}Z",
    }


def _by_minute(minutes: pl.Series, counts: pl.Series) -> dict[int, int]:
    """Events per minute, keyed by the minute's epoch seconds."""
    keys = minutes.dt.epoch("s").to_list()
    return {int(k): int(n) for k, n in zip(keys, counts.to_list(), strict=True) if k is not None}


def minute_rates(counts: pl.Series) -> dict[str, float]:
    """``minutes`` with events, ``peak`` and ``mean`` events per such minute."""
    if counts.is_empty():
        return {}
    return {
        "minutes": float(counts.len()),
        "peak": as_float(counts.max()),
        "mean": round(as_float(counts.mean()), 2),
    }
