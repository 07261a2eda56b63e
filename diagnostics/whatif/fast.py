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

import itertools
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
    segid: np.ndarray
    by_arrival: np.ndarray
    index: np.ndarray
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
    segid = np.zeros(g.size, dtype=np.int64)
    segid[starts[1:]] = 1
    by_arrival = np.lexsort((frame["i"].to_numpy(), frame["a"].to_numpy()))
    return Prepared(
        arrival=frame["a"].to_numpy(),
        app=t.fill_null(_MIN).to_numpy(),
        valid=t.is_not_null().to_numpy(),
        key_ok=frame["k"].to_numpy(),
        partition=frame["p"].to_numpy(),
        timeline=g,
        starts=starts,
        segid=np.cumsum(segid),
        by_arrival=by_arrival,
        index=frame["i"].to_numpy(),
        partitions=parts,
        over=over,
    )


def _segmented_cummax(values: np.ndarray, segid: np.ndarray) -> np.ndarray:
    """Running maximum restarting at each segment start (``_MIN`` stays where nothing yet)."""
    if not values.size:
        return values
    real = values[values != _MIN]
    lo = int(real.min()) - 1 if real.size else 0
    span = (int(real.max()) - lo + 1) if real.size else 1
    if span * (int(segid.max()) + 1) < 2**62:
        shifted = np.where(values == _MIN, lo, values) - lo + segid * span
        acc = np.maximum.accumulate(shifted) - segid * span + lo
        return np.where(acc <= lo, _MIN, acc)
    frame = pl.DataFrame({"v": values, "s": segid})
    return frame.select(pl.col("v").cum_max().over("s")).to_series().to_numpy()


@dataclass(frozen=True)
class Evaluation:
    """One policy's effect: counts and per-event arrays in feed order (``Prepared.index``
    maps them to input positions); ``release`` is ns, ``-1`` if never released or dropped."""

    events: int
    adjusted: int
    dropped: int
    late: int
    out_of_order: int
    early: int
    release: np.ndarray
    arrival: np.ndarray
    dropped_mask: np.ndarray
    adjusted_mask: np.ndarray

    def delays(self) -> np.ndarray:
        """Output delay (s) of every released event."""
        ok = self.release >= 0
        return (self.release[ok] - self.arrival[ok]) / 1e9


@dataclass(frozen=True)
class LateStage:
    """What depends on the late tolerance, action and early policy but not on the
    out-of-order tolerance: shared by every out-of-order value of a sweep.

    ``m`` is the running maximum of accepted times per timeline (inclusive); ``lowest`` the
    minimum over started partitions of their running maxima, in global arrival order (only
    for the merge); ``firsts`` each started partition's (start, end, first kept arrival).
    """

    late_ns: int | None
    drop: bool
    valid: np.ndarray
    early: np.ndarray
    late: np.ndarray
    t1: np.ndarray
    include: np.ndarray
    m: np.ndarray
    firsts: tuple[tuple[int, int, int], ...]
    lowest: np.ndarray | None


def late_stage(prepared: Prepared, policy: OrderingPolicy) -> LateStage:
    """Rules 1-3 of spec §3 and the running maxima, for ``policy``'s late tolerance."""
    a, t = prepared.arrival, prepared.app
    late_ns = policy.late_arrival_ns
    drop = policy.action is Action.DROP
    valid = prepared.valid & prepared.key_ok
    window = policy.early_window_ns
    early = valid & (t - a > window) if window is not None else np.zeros(a.size, bool)
    ok = valid & ~early
    late = ok & (t < a - late_ns) if late_ns is not None else np.zeros(a.size, bool)
    t1 = np.where(late, a - (late_ns or 0), t)
    include = ok & ~(late & drop)
    m = _segmented_cummax(np.where(include, t1, _MIN), prepared.segid)
    firsts = []
    for s, e in itertools.pairwise([*prepared.starts.tolist(), a.size]):
        # the first included event of a timeline is never out of order, so it is kept
        idx = np.flatnonzero(include[s:e])
        if idx.size:
            firsts.append((s, e, int(a[s + idx[0]])))
    lowest = None
    merged = not policy.partition_by and not prepared.over
    if merged and firsts:
        position = np.empty(a.size, dtype=np.int64)
        position[prepared.by_arrival] = np.arange(a.size)
        lowest = np.full(a.size, _INF)
        column = np.empty(a.size, dtype=np.int64)
        for s, e, _first in firsts:
            column.fill(_MIN)
            column[position[s:e]] = m[s:e]
            np.minimum(lowest, np.maximum.accumulate(column), out=lowest)
    return LateStage(late_ns, drop, valid, early, late, t1, include, m, tuple(firsts), lowest)


def evaluate(
    prepared: Prepared, policy: OrderingPolicy, stage: LateStage | None = None
) -> Evaluation:
    """Counts and releases of ``policy`` on ``prepared`` (its timestamp and OVER columns).

    ``stage`` (from :func:`late_stage` with the same late tolerance, action, early policy
    and PARTITION BY) saves recomputing what does not depend on the out-of-order tolerance.
    """
    if tuple(policy.over) != prepared.over:
        msg = f"policy OVER {policy.over} does not match the prepared OVER {prepared.over}"
        raise PolicyError(msg)
    if policy.over and not policy.partition_by and len(prepared.partitions) > 1:
        msg = "TIMESTAMP BY ... OVER on a multi-partition input needs PARTITION BY PartitionId"
        raise PolicyError(msg)
    st = stage if stage is not None else late_stage(prepared, policy)
    if st.late_ns != policy.late_arrival_ns or st.drop != (policy.action is Action.DROP):
        msg = "the late stage was computed for another late tolerance or action"
        raise PolicyError(msg)
    a, m = prepared.arrival, st.m
    ooo_ns = policy.effective_ooo_ns
    prev = np.empty_like(m)
    if m.size:
        prev[1:] = m[:-1]
        prev[prepared.starts] = _MIN
    ooo = st.include & (prev != _MIN) & (st.t1 < prev - ooo_ns)
    sys = np.where(ooo, prev - ooo_ns, st.t1)
    dropped = ~st.valid | st.early | (st.late & st.drop) | (ooo & st.drop)
    kept = ~dropped
    target = np.where(kept, sys + ooo_ns, _MIN)
    if prepared.over or policy.partition_by:
        due = _reach_own(prepared, m, target)
        if st.late_ns is not None:
            due = np.minimum(due, sys + st.late_ns)
        release = np.maximum(due, a)
        release = np.where(kept & (release < _INF), release, -1)
    else:
        release = _release_merged(prepared, st, sys, target, kept)
    return Evaluation(
        events=int(a.size),
        adjusted=int((kept & (st.late | ooo)).sum()),
        dropped=int(dropped.sum()),
        late=int(st.late.sum()),
        out_of_order=int(ooo.sum()),
        early=int(st.early.sum()),
        release=release,
        arrival=a,
        dropped_mask=dropped,
        adjusted_mask=kept & (st.late | ooo),
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


def _release_merged(
    prep: Prepared, st: LateStage, sys: np.ndarray, target: np.ndarray, kept: np.ndarray
) -> np.ndarray:
    """Release under the merge: the governing watermark is the minimum over partitions.

    max over p of min(reach_p, timed_p) is computed as min(reach_all, sys + late) for the
    events whose sys + late is past every started partition's first kept arrival (then every
    timed_p is sys + late), where reach_all is the first arrival at which the minimum over
    started partitions of their running maxima (``st.lowest``) reaches the target; the few
    other events take the per-partition formula. Partitions without a kept event stay at
    τ − 5 s − late (spec §4).
    """
    a, m, late_ns = prep.arrival, st.m, st.late_ns
    order = prep.by_arrival
    unstarted = len(prep.partitions) - len(st.firsts)
    due = np.full(a.size, _INF)
    if st.lowest is not None:
        # queries in arrival order are nearly sorted: the binary searches stay in cache
        due[order] = _reach(st.lowest, a[order], target[order])
    if late_ns is not None:
        due = np.minimum(due, sys + late_ns)
        last_first = max((f for _s, _e, f in st.firsts), default=_MIN)
        early = np.flatnonzero(kept & (sys + late_ns < last_first))
        if early.size:
            part_due = np.full(early.size, _MIN)
            for s, e, first in st.firsts:
                reach = _reach(m[s:e], a[s:e], target[early])
                pending = sys[early] + late_ns + UNSTARTED_ESTIMATE_NS
                timed = np.where(pending < first, pending, np.maximum(first, sys[early] + late_ns))
                part_due = np.maximum(part_due, np.minimum(reach, timed))
            due[early] = part_due
        if unstarted:
            due = np.maximum(due, sys + late_ns + UNSTARTED_ESTIMATE_NS)
    elif unstarted:
        due = np.full(a.size, _INF)
    release = np.maximum(due, a)
    return np.where(kept & (release < _INF), release, -1)


def _reach_own(prep: Prepared, m: np.ndarray, target: np.ndarray) -> np.ndarray:
    """Per event, the first arrival on its own timeline whose running maximum reaches its
    target: one binary search over (timeline, value) keys packed into one int64."""
    a, starts = prep.arrival, prep.starts
    if not a.size:
        return np.zeros(0, dtype=np.int64)
    segid = prep.segid
    ends = np.append(starts[1:], a.size)[segid]
    real = m[m != _MIN]
    if not real.size:
        return np.full(a.size, _INF)
    lo, hi = int(real.min()) - 1, int(real.max())
    span = hi - lo + 2
    if span * (int(segid[-1]) + 1) >= 2**62:
        out = np.full(a.size, _INF)
        for s, e in itertools.pairwise([*starts.tolist(), a.size]):
            out[s:e] = _reach(m[s:e], a[s:e], target[s:e])
        return out
    base = segid * span
    keys = base + (np.where(m == _MIN, lo, m) - lo)
    wanted = base + np.clip(target, lo + 1, lo + span - 1) - lo
    idx = np.searchsorted(keys, wanted, side="left")
    hit = (idx < ends) & (target <= hi)
    out = np.full(a.size, _INF)
    out[hit] = a[idx[hit]]
    return out
