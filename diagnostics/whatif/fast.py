"""A vectorised evaluator of one ordering policy, for sweeps: what the engine would count
(adjusted, dropped) and when it would release each event, without building outcome frames.

It computes exactly the rules of spec §3-§4 (and is tested against the engine, event by
event): with events in timeline and arrival order, the largest accepted time M before each
event is a running maximum of the late-adjusted times of the events that are not dropped
(an out-of-order adjustment never exceeds M, so it never moves it). A timeline's watermark
max(M(τ) − ooo, τ − late) only grows, so the earliest τ at which it reaches t is the
smaller of the first arrival whose M reaches t + ooo (a binary search) and t + late; under
the merge the governing watermark is the minimum over partitions, so an event is released
at the largest of those per-partition moments (and never before its arrival). A partition
that has not started yet is at τ − 5 s − late (spec §4).

What a sweep shares between settings (:class:`Prepared`): the parsing of both times, the
partition and key resolution, and the sort into timeline/arrival order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl

from diagnostics.engine.columns import EventColumns
from diagnostics.engine.policy import UNSTARTED_ESTIMATE_NS, Action, OrderingPolicy
from diagnostics.engine.replay import partitions_in
from diagnostics.errors import InputError, PolicyError
from diagnostics.timestamps import to_utc

_MIN = np.iinfo(np.int64).min
_INF = np.iinfo(np.int64).max


@dataclass(frozen=True)
class Prepared:
    """A capture parsed and sorted once for one ``TIMESTAMP BY`` column and OVER key set.

    Arrays are in feed order: by timeline, then arrival, then input position. ``timeline``
    is -1 for an event whose OVER key is missing; ``app`` is ``_MIN`` where the timestamp is
    invalid (``valid`` False).
    """

    arrival: np.ndarray
    app: np.ndarray
    valid: np.ndarray
    key_ok: np.ndarray
    partition: np.ndarray
    timeline: np.ndarray
    starts: np.ndarray
    partitions: tuple[int, ...]
    over: tuple[str, ...]

    @property
    def size(self) -> int:
        """Number of events."""
        return int(self.arrival.size)


def prepare(
    events: pl.DataFrame,
    timestamp_by: str,
    over: tuple[str, ...] = (),
    *,
    columns: EventColumns | None = None,
    partitions: Sequence[int] | None = None,
) -> Prepared:
    """Parse and sort ``events`` once (errors name the column and row, like the engine's)."""
    columns = columns or EventColumns()
    for name, flag in ((columns.arrival, "arrival column"), (timestamp_by, "--timestamp-by")):
        if name not in events.columns:
            msg = f"{flag} '{name}' is missing (columns: {', '.join(events.columns)})"
            raise InputError(msg)
    for name in over:
        if name not in events.columns:
            msg = f"OVER column '{name}' is missing (columns: {', '.join(events.columns)})"
            raise InputError(msg)
    parts = tuple(partitions) if partitions is not None else partitions_in(events, columns)
    arrival = to_utc(events[columns.arrival])
    if arrival.null_count():
        i = int(arrival.is_null().arg_true()[0])
        msg = f"arrival column '{columns.arrival}', row {i + 1}: '{events[columns.arrival][i]}' is not a timestamp"
        raise InputError(msg)
    app = to_utc(events[timestamp_by]).dt.epoch("ns")
    if columns.partition and columns.partition in events.columns:
        raw = events[columns.partition].cast(pl.Int64, strict=False)
        index = {p: i for i, p in enumerate(parts)}
        pidx = raw.replace_strict(index, default=None, return_dtype=pl.Int64)
        if pidx.null_count():
            i = int(pidx.is_null().arg_true()[0])
            msg = f"partition column '{columns.partition}', row {i + 1}: '{events[columns.partition][i]}' is not among the partitions {parts}"
            raise InputError(msg)
    else:
        pidx = pl.Series(np.zeros(events.height, dtype=np.int64))
    frame = pl.DataFrame(
        {
            "a": arrival.dt.epoch("ns"),
            "t": app,
            "p": pidx,
            "i": pl.int_range(events.height, dtype=pl.Int64, eager=True),
        }
    )
    if over:
        keys = events.select(pl.col(c).cast(pl.String) for c in over)
        ok = keys.select(pl.all_horizontal(pl.all().is_not_null())).to_series()
        tl = (
            pl.concat([frame.select("p"), keys], how="horizontal")
            .select(pl.struct(pl.all()).rank("dense").cast(pl.Int64))
            .to_series()
        )
        frame = frame.with_columns(pl.when(ok).then(tl).otherwise(-1).alias("g"), ok.alias("k"))
    else:
        frame = frame.with_columns(pl.col("p").alias("g"), pl.lit(True).alias("k"))
    frame = frame.sort("g", "a", "i")
    g = frame["g"].to_numpy()
    starts = (
        np.flatnonzero(np.concatenate([[True], g[1:] != g[:-1]]))
        if g.size
        else np.zeros(0, np.int64)
    )
    t = frame["t"]
    return Prepared(
        arrival=frame["a"].to_numpy(),
        app=t.fill_null(_MIN).to_numpy(),
        valid=t.is_not_null().to_numpy(),
        key_ok=frame["k"].to_numpy(),
        partition=frame["p"].to_numpy(),
        timeline=g,
        starts=starts,
        partitions=parts,
        over=over,
    )


def _segmented_cummax(values: np.ndarray, seg: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Running maximum restarting at each segment start (``_MIN`` stays where nothing yet)."""
    if not values.size:
        return values
    real = values[values != _MIN]
    lo = int(real.min()) - 1 if real.size else 0
    span = (int(real.max()) - lo + 1) if real.size else 1
    segid = np.cumsum(np.isin(np.arange(values.size), starts)) - 1
    if span * (int(segid.max()) + 1) < 2**62:
        shifted = np.where(values == _MIN, lo, values) - lo + segid * span
        acc = np.maximum.accumulate(shifted) - segid * span + lo
        return np.where(acc <= lo, _MIN, acc)
    frame = pl.DataFrame({"v": values, "s": segid})
    return frame.select(pl.col("v").cum_max().over("s")).to_series().to_numpy()


@dataclass(frozen=True)
class Evaluation:
    """One policy's effect: counts and per-event release (ns, ``-1`` if never / dropped)."""

    events: int
    adjusted: int
    dropped: int
    late: int
    out_of_order: int
    early: int
    release: np.ndarray
    arrival: np.ndarray
    dropped_mask: np.ndarray

    def delays(self) -> np.ndarray:
        """Output delay (s) of every released event."""
        ok = self.release >= 0
        return (self.release[ok] - self.arrival[ok]) / 1e9


def evaluate(prepared: Prepared, policy: OrderingPolicy) -> Evaluation:
    """Counts and releases of ``policy`` on ``prepared`` (its timestamp and OVER columns)."""
    if tuple(policy.over) != prepared.over:
        msg = f"policy OVER {policy.over} does not match the prepared OVER {prepared.over}"
        raise PolicyError(msg)
    if policy.over and not policy.partition_by and len(prepared.partitions) > 1:
        msg = "TIMESTAMP BY ... OVER on a multi-partition input needs PARTITION BY PartitionId"
        raise PolicyError(msg)
    a, t = prepared.arrival, prepared.app
    late_ns, ooo_ns = policy.late_arrival_ns, policy.effective_ooo_ns
    drop = policy.action is Action.DROP
    valid = prepared.valid & prepared.key_ok
    window = policy.early_window_ns
    early = valid & (t - a > window) if window is not None else np.zeros(a.size, bool)
    ok = valid & ~early
    late = ok & (t < a - late_ns) if late_ns is not None else np.zeros(a.size, bool)
    t1 = np.where(late, a - (late_ns or 0), t)
    include = ok & ~(late & drop)
    m = _segmented_cummax(np.where(include, t1, _MIN), prepared.timeline, prepared.starts)
    prev = np.empty_like(m)
    if m.size:
        prev[1:] = m[:-1]
        prev[prepared.starts] = _MIN
    ooo = include & (prev != _MIN) & (t1 < prev - ooo_ns)
    sys = np.where(ooo, prev - ooo_ns, t1)
    dropped = ~valid | early | (late & drop) | (ooo & drop)
    adjusted = ~dropped & (late | ooo)
    release = _release(prepared, policy, m, sys, ~dropped)
    return Evaluation(
        events=int(a.size),
        adjusted=int(adjusted.sum()),
        dropped=int(dropped.sum()),
        late=int(late.sum()),
        out_of_order=int(ooo.sum()),
        early=int(early.sum()),
        release=release,
        arrival=a,
        dropped_mask=dropped,
    )


def _reach(m: np.ndarray, a: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """Per target, the first arrival whose running maximum ``m`` (sorted) reaches it."""
    if not m.size:
        return np.full(targets.size, _INF)
    idx = np.searchsorted(m, targets, side="left")
    out = np.full(targets.size, _INF)
    hit = idx < m.size
    out[hit] = a[idx[hit]]
    return out


def _release(
    prep: Prepared, policy: OrderingPolicy, m: np.ndarray, sys: np.ndarray, kept: np.ndarray
) -> np.ndarray:
    late_ns, ooo_ns = policy.late_arrival_ns, policy.effective_ooo_ns
    a = prep.arrival
    target = np.where(kept, sys + ooo_ns, _MIN)
    due = np.full(a.size, _MIN)  # the governing watermark reaches sys at max over groups of this
    bounds = list(prep.starts) + [a.size]
    own = bool(prep.over) or policy.partition_by
    for s, e in zip(bounds[:-1], bounds[1:], strict=False):
        seg_m, seg_a = m[s:e], a[s:e]
        if own:
            rows = slice(s, e)
            reach = _reach(seg_m, seg_a, target[rows])
            if late_ns is not None:
                reach = np.minimum(reach, sys[rows] + late_ns)
            due[rows] = reach
        else:
            reach = _reach(seg_m, seg_a, target)
            if late_ns is not None:
                # a partition starts with its first event that is not dropped
                kept_arrivals = seg_a[kept[s:e]]
                first = int(kept_arrivals[0]) if kept_arrivals.size else _INF
                timed = np.where(
                    sys + late_ns + UNSTARTED_ESTIMATE_NS < first,
                    sys + late_ns + UNSTARTED_ESTIMATE_NS,
                    np.maximum(first, sys + late_ns),
                )
                reach = np.minimum(reach, timed)
            due = np.maximum(due, reach)
    if not own:
        seen = {int(p) for p in np.unique(prep.partition[kept])}
        if len(seen) < len(prep.partitions):  # declared partitions that never sent anything
            due = np.maximum(
                due, sys + late_ns + UNSTARTED_ESTIMATE_NS if late_ns is not None else _INF
            )
    release = np.maximum(due, a)
    return np.where(kept & (release < _INF), release, -1)
