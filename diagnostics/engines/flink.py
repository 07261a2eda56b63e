"""Flink's rules (docs/engines.md, "Flink"): per-split bounded-out-of-orderness watermarks
emitted on processing-time ticks, idleness, the merge across splits (the minimum over the
active splits; when all are idle, Flink 2.1 keeps the combined watermark and 2.2 takes the
maximum over the splits), and the window operator's late-element drop. Vectorised: the
combined watermark only changes on a tick that follows an event or on which a split turns
idle, so only those ticks are computed, once per idleness, interval and release
(:class:`FlinkWatermarks`: the bound shifts it, the lateness and the window only decide
against it).

Time is injected: processing time is the capture's arrival times, ticks fall on whole
multiples of the watermark interval (since the epoch), the first one at or after the first
arrival.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise

import numpy as np

from diagnostics.durations import MS
from diagnostics.engines.policy import FlinkRules, FlinkVersion
from diagnostics.engines.windows import (
    NO_WATERMARK,
    Decisions,
    Releases,
    floor_units,
    next_tick,
    tumbling_end,
)

_NEVER = np.iinfo(np.int64).max
#: Ticks × splits computed at once (bounds the memory of the min merge).
_CELLS = 4_000_000


@dataclass(frozen=True, slots=True)
class _Split:
    """One split's watermark as a step function of the tick, and its idle intervals."""

    ticks: np.ndarray  # ticks that saw events of the split (ascending)
    watermarks: np.ndarray  # the split's watermark from each of those ticks on (ms)
    idle_from: np.ndarray  # idle intervals [idle_from, idle_until) in ticks (ns)
    idle_until: np.ndarray

    def at(self, ticks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The split's watermark (ms) and whether it is idle, on each of ``ticks``."""
        j = np.searchsorted(self.ticks, ticks, side="right") - 1
        safe = np.maximum(j, 0)
        wm = np.where(j >= 0, self.watermarks[safe] if len(self.ticks) else 0, NO_WATERMARK)
        k = np.searchsorted(self.idle_from, ticks, side="right") - 1
        idle = (
            (k >= 0) & (ticks < self.idle_until[np.maximum(k, 0)])
            if len(self.idle_from)
            else (np.zeros(len(ticks), dtype=bool))
        )
        return wm, idle


def _split(ticks: np.ndarray, ts_ms: np.ndarray, first_tick: int, rules: FlinkRules) -> _Split:
    """The split whose events (arrival order) were first seen on ``ticks`` with event times
    ``ts_ms``: ``BoundedOutOfOrdernessWatermarks`` with a bound of 0 (max seen − 1 ms; the
    bound is subtracted later, :meth:`FlinkWatermarks.combined_ms`) and, with idleness,
    ``WatermarksWithIdleness``'s timer (docs/engines.md, "Flink")."""
    unique = np.unique(ticks)
    if len(unique):
        running = np.maximum.accumulate(ts_ms)
        last = np.searchsorted(ticks, unique, side="right") - 1
        watermarks = running[last] - 1
    else:
        watermarks = np.empty(0, dtype=np.int64)
    if rules.idleness_ns is None:
        empty = np.empty(0, dtype=np.int64)
        return _Split(unique, watermarks, empty, empty)
    interval = rules.watermark_interval_ns
    # The timer starts on the first tick that saw no event since the previous one, and the
    # split is idle from the first tick more than the timeout after that.
    after = (rules.idleness_ns // interval + 1) * interval
    previous = np.concatenate(([first_tick - interval], unique))
    following = np.concatenate((unique, [_NEVER]))
    starts = previous + interval + after
    keep = starts < following
    return _Split(unique, watermarks, starts[keep], following[keep])


@dataclass(frozen=True, slots=True)
class FlinkWatermarks:
    """The combined watermark of a capture's splits on the ticks where it can change, for one
    idleness, watermark interval and release, and for a bound of 0: the out-of-orderness
    bound only lowers every split's watermark by the same amount, so every minimum and
    maximum over them, and the combined watermark, by that amount too
    (:meth:`shifted`); the allowed lateness and the window only change the decisions taken
    against it. A what-if reuses one for every bound, lateness and window."""

    points: np.ndarray  # the ticks where the combined watermark can change (ns, ascending)
    base: np.ndarray  # the combined watermark from each of them on, bound 0 (ms)
    seen: np.ndarray  # per event (arrival order): the base watermark it met (last tick before)

    @staticmethod
    def shifted(watermarks: np.ndarray, out_of_orderness_ns: int) -> np.ndarray:
        """Bound-0 ``watermarks`` (ms) under the bound (no watermark stays none)."""
        bound = out_of_orderness_ns // MS
        if bound == 0:
            return watermarks
        return np.where(watermarks == NO_WATERMARK, NO_WATERMARK, watermarks - bound)


@dataclass(frozen=True, slots=True)
class FlinkWindows:
    """Each event's tumbling window for one window size: its ``maxTimestamp()`` (end − 1 ms),
    held as the distinct values and each event's index into them (a capture has few windows:
    the decisions compare per window, then spread to the events)."""

    tops: np.ndarray  # the distinct maxTimestamp() values (ms, ascending)
    index: np.ndarray  # per event: its window's index in tops

    @classmethod
    def of(cls, ts_ms: np.ndarray, window_ns: int) -> FlinkWindows:
        """The windows of events with timestamps ``ts_ms`` (ms)."""
        end = tumbling_end(ts_ms, window_ns // MS)
        tops, index = np.unique(end - 1, return_inverse=True)  # TimeWindow.maxTimestamp()
        return cls(tops, index.reshape(-1))


def flink_timestamps(event_ns: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """Flink's millisecond timestamps of the events (0 where not ``valid``)."""
    return floor_units(np.where(valid, event_ns, 0), MS)


def flink_watermarks(
    arrival_ns: np.ndarray,
    split: np.ndarray,
    splits: int,
    ts_ms: np.ndarray,
    valid: np.ndarray,
    rules: FlinkRules,
) -> FlinkWatermarks:
    """The combined watermark of events in arrival order (``split``: each event's source
    split, 0..splits-1; ``ts_ms``: :func:`flink_timestamps`) under ``rules``' idleness,
    watermark interval and release."""
    n = len(arrival_ns)
    interval = rules.watermark_interval_ns
    tick = next_tick(arrival_ns, interval)
    first_tick = int(tick.min()) if n else 0
    # each split's valid events, in arrival order: one stable sort by split
    mine = np.flatnonzero(valid)
    mine = mine[np.argsort(split[mine], kind="stable")]
    bounds = np.searchsorted(split[mine], np.arange(splits + 1))
    parts = [
        _split(tick[mine[lo:hi]], ts_ms[mine[lo:hi]], first_tick, rules)
        for lo, hi in pairwise(bounds)
    ]
    points = np.unique(
        np.concatenate([[first_tick], *(p.ticks for p in parts), *(p.idle_from for p in parts)])
    )
    combined = _combined(points, parts, flush=rules.version is not FlinkVersion.V2_1)
    before = np.searchsorted(points, tick - interval, side="right") - 1
    seen = np.where(before >= 0, combined[np.maximum(before, 0)], NO_WATERMARK)
    return FlinkWatermarks(points, combined, seen)


def flink_releases(
    marks: FlinkWatermarks,
    windows: FlinkWindows,
    arrival_ns: np.ndarray,
    valid: np.ndarray,
    rules: FlinkRules,
) -> tuple[Releases, np.ndarray]:
    """Which events Flink drops and when each kept one's window fires, for the events
    ``marks`` and ``windows`` (of ``rules``' window) were computed from, under ``rules``'
    bound and allowed lateness; and the watermark each event met (ms)."""
    points = marks.points
    combined = marks.shifted(marks.base, rules.out_of_orderness_ns)
    seen = marks.shifted(marks.seen, rules.out_of_orderness_ns)
    max_timestamp = windows.tops[windows.index]
    lateness = rules.allowed_lateness_ns // MS
    # WindowOperator.isWindowLate: window.maxTimestamp() + allowedLateness <= watermark.
    dropped = valid & (max_timestamp + lateness <= seen)
    # EventTimeTrigger: the window fires when the watermark reaches maxTimestamp; an element
    # of a window already past it (within the allowed lateness) fires it again at once.
    refire = valid & ~dropped & (max_timestamp <= seen)
    k = np.searchsorted(combined, windows.tops, side="left")[windows.index]
    fires = valid & ~dropped & ~refire & (k < len(points))
    fired = points[np.minimum(k, len(points) - 1)]
    release = np.where(refire, arrival_ns, np.where(fires, fired, 0))
    return Releases(dropped, refire | fires, release), seen


def flink_decide(
    marks: FlinkWatermarks,
    windows: FlinkWindows,
    ts_ms: np.ndarray,
    arrival_ns: np.ndarray,
    split: np.ndarray,
    valid: np.ndarray,
    rules: FlinkRules,
) -> Decisions:
    """Flink's decisions for the events ``marks`` and ``windows`` (of ``rules``' window) were
    computed from, under ``rules``' bound and allowed lateness."""
    releases, seen = flink_releases(marks, windows, arrival_ns, valid, rules)
    has = seen != NO_WATERMARK
    return Decisions(
        watermark_ns=np.where(has, seen, 0) * MS,
        has_watermark=has,
        late=valid & (ts_ms <= seen),
        dropped=releases.dropped,
        release_ns=releases.release_ns,
        released=releases.released,
        timeline=split.astype(np.int64),
    )


def flink_decisions(
    arrival_ns: np.ndarray,
    split: np.ndarray,
    splits: int,
    event_ns: np.ndarray,
    valid: np.ndarray,
    rules: FlinkRules,
) -> Decisions:
    """Flink's decisions for events in arrival order: ``split`` (0..splits-1) is each
    event's source split, ``event_ns`` its event time (meaningful where ``valid``)."""
    ts_ms = flink_timestamps(event_ns, valid)
    marks = flink_watermarks(arrival_ns, split, splits, ts_ms, valid, rules)
    windows = FlinkWindows.of(ts_ms, rules.window_ns)
    return flink_decide(marks, windows, ts_ms, arrival_ns, split, valid, rules)


def _combined(points: np.ndarray, parts: list[_Split], *, flush: bool) -> np.ndarray:
    """The combined watermark on each tick of ``points``, never decreasing
    (``CombinedWatermarkStatus.updateCombinedWatermark``): the minimum over the splits that
    are not idle; when all are idle, with ``flush`` (Flink 2.2) the maximum over all the
    splits' watermarks, without (2.1) no change."""
    out = np.empty(len(points), dtype=np.int64)
    carry = NO_WATERMARK
    step = max(1, _CELLS // max(1, len(parts)))
    for start in range(0, len(points), step):
        ticks = points[start : start + step]
        low = np.full(len(ticks), _NEVER, dtype=np.int64)
        high = np.full(len(ticks), NO_WATERMARK, dtype=np.int64)
        active = np.zeros(len(ticks), dtype=bool)
        for part in parts:
            wm, idle = part.at(ticks)
            low = np.where(idle, low, np.minimum(low, wm))
            if flush:
                high = np.maximum(high, wm)
            active |= ~idle
        candidate = np.where(active, low, high)
        candidate[0] = max(int(candidate[0]), carry)
        chunk = np.maximum.accumulate(candidate)
        out[start : start + step] = chunk
        carry = int(chunk[-1])
    return out
