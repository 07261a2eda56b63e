"""Release times: when the governing watermark first reaches an event's System.Timestamp.

docs/semantics.md, "Watermarks, merge and output release". A timeline's watermark at processing time τ is::

    wm(τ) = τ − 5 s − late             before its first accepted event (at ``fa``)
    wm(τ) = max(M(τ) − ooo, τ − late)  from then on (M(τ): largest accepted timestamp so far)

It never decreases. For an event with System.Timestamp ``t`` the first τ with wm(τ) ≥ t is::

    t + late + 5 s                          if that is before fa
    max(fa, min(t + late, a*))              otherwise, a* = first arrival with M ≥ t + ooo

An event is released at ``max(arrival, max over governing timelines of that τ)``.

Incrementally, a batch knows the arrivals up to ``tau`` (the batch's last arrival); anything
later is unknown. A candidate ≤ ``tau`` is final, because later input only changes the
watermark at τ ≥ ``tau``; a larger one is not yet known and the event stays pending. On close,
τ runs to +∞ with no more input: every candidate becomes final (or never, with unlimited
``late``). This makes the result independent of how the input is split into batches.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from diagnostics.engine.policy import UNSTARTED_ESTIMATE_NS

#: −∞ and +∞ for int64 nanoseconds, far enough from the limits that tolerances never overflow.
NEG = -(2**62)
POS = 2**62
#: Cells of the (partitions × events) table lowest_after works on at once (128 MB).
_TABLE_CELLS = 16_000_000
#: Up to this many timelines, :func:`first_reach` searches timeline by timeline.
_LOOP_TIMELINES = 2_048


def grouping(ids: np.ndarray) -> np.ndarray:
    """The stable order that groups ``ids`` (timeline ids, 0 and up): numpy sorts 16-bit
    integers by radix, several times faster than 64-bit ones, in the same order."""
    if ids.size and int(ids.min()) >= 0 and int(ids.max()) < 2**15:
        return np.argsort(ids.astype(np.int16), kind="stable")
    return np.argsort(ids, kind="stable")


@dataclass(frozen=True, slots=True)
class Breakpoints:
    """Where timelines' M rose during a batch: timeline ids, arrival times and M just after,
    grouped by timeline in processing order (so M is non-decreasing within a timeline)."""

    timeline: np.ndarray
    arrivals: np.ndarray
    running_max: np.ndarray

    @staticmethod
    def of(timeline: np.ndarray, arrivals: np.ndarray, running_max: np.ndarray) -> Breakpoints:
        """Group events given in processing order by timeline (stable)."""
        order = grouping(timeline)
        return Breakpoints(timeline[order], arrivals[order], running_max[order])

    @staticmethod
    def empty() -> Breakpoints:
        """No breakpoints (no accepted event in the batch, or closing)."""
        none = np.empty(0, dtype=np.int64)
        return Breakpoints(none, none, none)


def first_reach(points: Breakpoints, timeline: np.ndarray, query: np.ndarray) -> np.ndarray:
    """For each (timeline, query): the arrival of the first breakpoint of that timeline whose
    M reaches the query, or ``POS``.

    A binary search inside each query's own timeline segment, vectorised over all queries
    at once (one step of every search per iteration, about log2 of the longest segment).
    """
    size, count = len(points.timeline), len(timeline)
    if not size or not count:
        return np.full(count, POS, dtype=np.int64)
    span = max(int(points.timeline.max()), int(timeline.max())) + 1
    starts = np.zeros(span + 1, dtype=np.int64)
    np.cumsum(np.bincount(points.timeline, minlength=span), out=starts[1:])
    groups = np.flatnonzero(np.bincount(timeline, minlength=span))
    if len(groups) <= _LOOP_TIMELINES:
        return _first_reach_per_timeline(points, timeline, query, starts)
    lo = starts[timeline]
    hi = starts[timeline + 1]
    end = hi.copy()
    values = points.running_max
    active = np.flatnonzero(lo < hi)
    while active.size:
        mid = (lo[active] + hi[active]) // 2
        below = values[mid] < query[active]
        lo[active] = np.where(below, mid + 1, lo[active])
        hi[active] = np.where(below, hi[active], mid)
        active = active[lo[active] < hi[active]]
    found = lo < end
    return np.where(found, points.arrivals[np.minimum(lo, size - 1)], POS)


def _first_reach_per_timeline(
    points: Breakpoints, timeline: np.ndarray, query: np.ndarray, starts: np.ndarray
) -> np.ndarray:
    """:func:`first_reach` for few timelines: one ``searchsorted`` per timeline."""
    out = np.full(len(timeline), POS, dtype=np.int64)
    order = grouping(timeline)
    grouped = timeline[order]
    bounds = np.flatnonzero(np.r_[True, grouped[1:] != grouped[:-1], True])
    for first, last in itertools.pairwise(bounds):
        g = int(grouped[first])
        lo, hi = int(starts[g]), int(starts[g + 1])
        if lo == hi:
            continue
        rows = order[first:last]
        idx = np.searchsorted(points.running_max[lo:hi], query[rows], side="left")
        hit = idx < hi - lo
        out[rows] = np.where(hit, points.arrivals[lo + np.minimum(idx, hi - lo - 1)], POS)
    return out


def first_tau(
    t: np.ndarray,
    *,
    late: int | None,
    ooo: int,
    m_before: np.ndarray,
    first_arrival: np.ndarray,
    by_m: np.ndarray,
    tau: int,
    closing: bool,
) -> np.ndarray:
    """For each timestamp in ``t``, the first τ at which its timeline's watermark reaches it.

    Per element: ``m_before`` is the timeline's M before the batch (``NEG`` if not started),
    ``first_arrival`` its first accepted arrival (``POS`` if not started by ``tau``), ``by_m``
    the first arrival in the batch at which its M reaches ``t + ooo`` (:func:`first_reach`).
    Returns ``POS`` where the answer is not yet known (or, when ``closing``, never comes).
    """
    if late is None:
        by_late = np.full(t.shape, POS, dtype=np.int64)
        unstarted = by_late
    else:
        by_late = t + late
        unstarted = by_late + UNSTARTED_ESTIMATE_NS
    by_m = np.where(m_before >= t + ooo, NEG, by_m)
    cand = np.maximum(first_arrival, np.minimum(by_late, by_m))
    cand = np.where((unstarted < first_arrival) | (first_arrival >= POS), unstarted, cand)
    if closing:
        return cand
    return np.where(cand <= tau, cand, POS)


@dataclass(frozen=True, slots=True)
class MergeSteps:
    """The governing (merged) watermark W of a multi-partition input at each processing step.

    Step 0 is the state before the batch (at ``tau[0]``); step k ≥ 1 is the state just after
    the batch's k-th distinct arrival time ``tau[k]``. ``watermark[k]`` = min over partitions
    of their watermarks (non-decreasing in k); ``unstarted[k]`` tells whether some partition
    had not yet received its first accepted event.
    """

    tau: np.ndarray
    watermark: np.ndarray
    unstarted: np.ndarray


def running_max_by_partition(
    partition: np.ndarray, values: np.ndarray, m_before: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """M of each event's own partition just before and just after it, in processing order.

    ``values`` holds each event's late-adjusted timestamp where it may raise M (``NEG``
    elsewhere); ``m_before[g]`` is partition g's M before the batch. One running maximum per
    partition, over that partition's events (grouped by a stable sort).
    """
    n = len(partition)
    before = np.empty(n, dtype=np.int64)
    after = np.empty(n, dtype=np.int64)
    if not n:
        return before, after
    keys = partition.astype(np.int16) if len(m_before) < 2**15 else partition
    order = np.argsort(keys, kind="stable")
    grouped, grouped_values = partition[order], values[order]
    cuts = np.flatnonzero(grouped[1:] != grouped[:-1]) + 1
    acc = np.empty(n, dtype=np.int64)
    prev = np.empty(n, dtype=np.int64)
    for start, stop in zip(np.r_[0, cuts].tolist(), np.r_[cuts, n].tolist(), strict=True):
        carry = m_before[grouped[start]]
        np.maximum.accumulate(grouped_values[start:stop], out=acc[start:stop])
        np.maximum(acc[start:stop], carry, out=acc[start:stop])
        prev[start] = carry
        prev[start + 1 : stop] = acc[start : stop - 1]
    before[order] = prev
    after[order] = acc
    return before, after


def lowest_after(
    partition: np.ndarray, before: np.ndarray, after: np.ndarray, m_before: np.ndarray
) -> np.ndarray:
    """The minimum over all partitions of M just after each event (processing order).

    Only events that raise their own partition's M (``after > before``) can change it, so a
    (partitions × such events) table of running maxima, worked on in chunks, gives it at
    each of them; every event takes the value at the last one at or before it.
    """
    parts = len(m_before)
    rise = np.flatnonzero(after > before)
    low_at = np.empty(len(rise) + 1, dtype=np.int64)
    carry = m_before.astype(np.int64).copy()
    low_at[0] = carry.min() if parts else NEG
    chunk = max(1, _TABLE_CELLS // max(parts, 1))
    for start in range(0, len(rise), chunk):
        stop = min(len(rise), start + chunk)
        size = stop - start
        table = np.full((parts, size + 1), NEG, dtype=np.int64)
        table[:, 0] = carry
        events = rise[start:stop]
        table[partition[events], np.arange(1, size + 1)] = after[events]
        np.maximum.accumulate(table, axis=1, out=table)
        table[:, 1:].min(axis=0, out=low_at[start + 1 : stop + 1])
        carry = table[:, -1].copy()
    seen = np.zeros(len(partition), dtype=np.int64)
    seen[rise] = 1
    np.cumsum(seen, out=seen)
    return low_at[seen]


def batch_merge_steps(
    arr: np.ndarray,
    partition: np.ndarray,
    before: np.ndarray,
    after: np.ndarray,
    *,
    m_before: np.ndarray,
    tau_before: int,
    late: int | None,
    ooo: int,
) -> MergeSteps:
    """:func:`merge_steps` of a classified batch, from its per-event M before and after."""
    lowest = lowest_after(partition, before, after, m_before)
    return merge_steps(arr, lowest, m_before=m_before, tau_before=tau_before, late=late, ooo=ooo)


def merge_steps(
    arr: np.ndarray,
    lowest_after: np.ndarray,
    *,
    m_before: np.ndarray,
    tau_before: int,
    late: int | None,
    ooo: int,
) -> MergeSteps:
    """Tabulate W at every distinct arrival of a batch (``arr`` sorted, processing order).

    ``lowest_after[i]`` is the minimum over partitions of M just after event i (from
    :func:`lowest_after`); ``m_before`` the partitions' M before the batch.
    """
    n = len(arr)
    last = np.flatnonzero(np.r_[arr[1:] != arr[:-1], True]) if n else np.empty(0, np.int64)
    tau = np.empty(len(last) + 1, dtype=np.int64)
    tau[0] = tau_before
    tau[1:] = arr[last]
    lowest = np.empty(len(tau), dtype=np.int64)
    lowest[0] = m_before.min() if len(m_before) else NEG
    lowest[1:] = lowest_after[last]
    # min over partitions of max(M − ooo, τ − late) = max(min M − ooo, τ − late) once all
    # have started; before that, an unstarted partition's τ − 5 s − late is the minimum.
    unstarted = lowest <= NEG
    if late is None:
        watermark = np.where(unstarted, NEG, lowest - ooo)
    else:
        watermark = np.where(
            unstarted, tau - UNSTARTED_ESTIMATE_NS - late, np.maximum(lowest - ooo, tau - late)
        )
    return MergeSteps(tau, watermark, unstarted)


def merge_release(
    t: np.ndarray, arr: np.ndarray, steps: MergeSteps, *, late: int | None, closing: bool
) -> np.ndarray:
    """Release times under the merge rule; ``POS`` where not yet known (or never, closing).

    The first τ with W(τ) ≥ t is either the first step k whose W reaches t, or earlier,
    inside the segment before it, where W grows as τ − late (τ − 5 s − late while a
    partition is unstarted): at c = t + late (+ 5 s). After the last step only c remains,
    known once the input is closed. Sorted ``t`` makes the search much faster (numpy's
    binary search then starts from the previous answer).
    """
    k = np.searchsorted(steps.watermark, t, side="left")
    before = np.maximum(k - 1, 0)
    if late is None:
        crossing = np.full(t.shape, POS, dtype=np.int64)
    else:
        crossing = t + late + np.where(steps.unstarted[before], UNSTARTED_ESTIMATE_NS, 0)
    last = len(steps.tau) - 1
    at_step = steps.tau[np.minimum(k, last)]
    release = np.where(k == 0, arr, np.minimum(at_step, crossing))
    beyond = k > last
    release = np.where(beyond, crossing if closing else POS, release)
    return np.where(release >= POS, POS, np.maximum(arr, release))
