"""The measured difference between a capture replayed under ASA's rules and under another
engine's: the events one keeps that the other drops, and when the window holding each event
is emitted under each.

ASA's replay releases events; a window of ASA's query is emitted when the governing watermark
reaches its end (docs/semantics.md, "Watermarks, merge and output release"). orderdoc takes
the first release of an event whose System.Timestamp is at or past that end, on the same
timeline group (all partitions, or each partition with PARTITION BY / each substream with
OVER): the watermark had reached the end by then, so this is the emission time at the
latest (it is exact when events are dense).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from diagnostics.engine.summary import delay_percentiles
from diagnostics.engines.windows import tumbling_end
from diagnostics.timestamps import from_ns


@dataclass(frozen=True, slots=True)
class Difference:
    """Per-event comparison of two replays of the same capture (same ``event_id``s).

    ``asa_only``: events ASA keeps (accepted or adjusted) that the engine drops, of which
    ``asa_only_adjusted`` ASA adjusted; ``engine_only``: events the engine keeps that ASA
    drops; ``asa_delay`` and ``engine_delay``: each one's emission delay (from an event's
    arrival until the window holding it is emitted) percentiles; ``delay_change``: the
    engine's emission time minus ASA's, in seconds, at the median and the 95th percentile,
    over the events both emit (positive: the engine is later).
    """

    events: int
    asa_dropped: int
    engine_dropped: int
    asa_only: int
    asa_only_adjusted: int
    engine_only: int
    asa_delay: dict[str, float | None]
    engine_delay: dict[str, float | None]
    delay_change: dict[str, float | None]

    def to_dict(self) -> dict[str, Any]:
        """The difference as JSON-ready data."""
        return {
            "events": self.events,
            "asa_dropped": self.asa_dropped,
            "engine_dropped": self.engine_dropped,
            "asa_keeps_engine_drops": self.asa_only,
            "asa_keeps_engine_drops_adjusted": self.asa_only_adjusted,
            "engine_keeps_asa_drops": self.engine_only,
            "asa_emission_delay_seconds": self.asa_delay,
            "engine_emission_delay_seconds": self.engine_delay,
            "emission_change_seconds": self.delay_change,
        }


def asa_window_emission(asa: pl.DataFrame, window_ns: int, per_timeline: bool) -> pl.Series:
    """When ASA emits the tumbling window of ``window_ns`` holding each kept event (its
    System.Timestamp's window), at the latest (see the module text); null when not emitted
    within the capture or dropped."""
    n = asa.height
    sys_ns = asa["system_timestamp"].dt.epoch("ns")
    rel_ns = asa["release_time"].dt.epoch("ns")
    kept = sys_ns.is_not_null().to_numpy()
    released = rel_ns.is_not_null().to_numpy()
    group = (
        asa["timeline"].fill_null(-1).to_numpy() if per_timeline else np.zeros(n, dtype=np.int64)
    )
    sys_v = sys_ns.fill_null(0).to_numpy()
    rel_v = rel_ns.fill_null(0).to_numpy()
    out = np.zeros(n, dtype=np.int64)
    found = np.zeros(n, dtype=bool)
    for g in np.unique(group):
        mine = group == g
        have = mine & released
        order = np.argsort(sys_v[have], kind="stable")
        stamps = sys_v[have][order]
        latest = np.minimum.accumulate(rel_v[have][order][::-1])[::-1]
        want = np.flatnonzero(mine & kept)
        end = tumbling_end(sys_v[want], window_ns)
        k = np.searchsorted(stamps, end, side="left")
        ok = k < len(stamps)
        out[want[ok]] = latest[k[ok]]
        found[want[ok]] = True
    return from_ns(pl.Series("release_time", out).set(pl.Series(~found), None))


def compare(
    asa: pl.DataFrame, engine: pl.DataFrame, window_ns: int, *, per_timeline: bool = False
) -> Difference:
    """Compare two outcome frames of the same capture, row by row (input order); the delay
    is that of the tumbling window of ``window_ns`` holding each event (``per_timeline``:
    ASA's job has PARTITION BY or OVER)."""
    emitted = asa_window_emission(asa, window_ns, per_timeline)
    asa = asa.with_columns(emitted)
    a = asa.select("event_id", "dropped", "status", "release_time", "arrival")
    e = engine.select("event_id", "dropped", "release_time")
    both = a.join(e, on="event_id", suffix="_e").sort("event_id")
    asa_only = both.filter(~pl.col("dropped") & pl.col("dropped_e"))
    change = (
        both.filter(pl.col("release_time").is_not_null() & pl.col("release_time_e").is_not_null())
        .select(
            (
                (pl.col("release_time_e") - pl.col("release_time")).dt.total_milliseconds() / 1000
            ).alias("d")
        )
        .get_column("d")
    )
    return Difference(
        events=both.height,
        asa_dropped=int(both["dropped"].sum()),
        engine_dropped=int(both["dropped_e"].sum()),
        asa_only=asa_only.height,
        asa_only_adjusted=int((asa_only["status"] == "adjusted").sum()),
        engine_only=int((both["dropped"] & ~both["dropped_e"]).sum()),
        asa_delay=delay_percentiles(asa),
        engine_delay=delay_percentiles(engine),
        delay_change={
            "p50": _quantile(change, 0.5),
            "p95": _quantile(change, 0.95),
        },
    )


def _quantile(values: pl.Series, q: float) -> float | None:
    if values.is_empty():
        return None
    found = values.quantile(q, interpolation="higher")
    return None if found is None else round(float(found), 3)
