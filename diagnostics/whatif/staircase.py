"""Where the affected count crosses the budget: for each late-arrival tolerance, the least
out-of-order tolerance that keeps adjusted + dropped within it.

This is the recommender's search guide, not a second engine: every setting it proposes is
then replayed by the engine (:mod:`diagnostics.whatif.evaluate`) and only the engine's
numbers are shown or compared. The guide counts what the per-event rules of
docs/semantics.md ("The rules, as implemented") count, vectorised over the whole capture: an
event is late when its time is before its arrival minus the late tolerance, out of order when its
(late-adjusted) time is more than the out-of-order tolerance behind the largest time
accepted before it on its timeline. A property test holds it to the engine's counts.

Because an event's disorder does not depend on the out-of-order tolerance (an adjusted event
never raises the running maximum), one pass per late tolerance gives the count for every
out-of-order tolerance at once: the least one within budget is read off the sorted disorder.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import polars as pl

from diagnostics.durations import SECOND
from diagnostics.engine.policy import MAX_TOLERANCE_NS, Action
from diagnostics.engine.release import NEG, grouping
from diagnostics.whatif.evaluate import Prepared, Unsaveable, unsaveable_masks


@dataclass(frozen=True)
class Timelines:
    """The capture as the per-event rules see it under one OVER key set, in processing order:
    arrival and application time (ns), timeline id (-1: missing OVER key), the events no
    setting can keep (``unsaveable``: early or without a valid time) and those this OVER key
    set drops (``missing_key``: a valid time, no key), all always dropped."""

    arrival: np.ndarray
    app: np.ndarray
    timeline: np.ndarray
    timelines: int
    ok: np.ndarray  # valid and not early: the events tolerances decide about
    unsaveable: Unsaveable
    missing_key: int
    #: processing order grouped by timeline (stable), and where each timeline starts in it
    grouped: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.int64))
    starts: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.int64))
    #: what the guide works out once per capture and OVER key set (the events grouped by
    #: timeline, each late tolerance's step), not part of its value
    memo: dict[object, object] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def laid_out(
        cls,
        arrival: np.ndarray,
        app: np.ndarray,
        timeline: np.ndarray,
        ok: np.ndarray,
        unsaveable: Unsaveable,
        missing_key: int,
    ) -> Timelines:
        """The events in processing order (``timeline``: ids from 0), grouped by timeline."""
        grouped, starts = grouped_by(timeline)
        return cls(
            arrival=arrival,
            app=app,
            timeline=timeline,
            timelines=int(timeline.max(initial=-1)) + 1 or 1,
            ok=ok,
            unsaveable=unsaveable,
            missing_key=missing_key,
            grouped=grouped,
            starts=starts,
        )

    @property
    def events(self) -> int:
        """Number of events."""
        return int(self.arrival.size)

    @property
    def unavoidable(self) -> int:
        """Events dropped whatever the tolerances: unsaveable ones and missing keys."""
        return self.unsaveable.total + self.missing_key

    def lateness_ns(self) -> np.ndarray:
        """Arrival − application time of the events tolerances decide about."""
        return (self.arrival - self.app)[self.ok]


def timelines_of(
    prepared: Prepared, timestamp_by: str, over: tuple[str, ...], *, early_policy: bool = True
) -> Timelines:
    """The timelines of ``prepared`` (its frame in processing order) under ``over``."""
    frame = prepared.frame
    cols = prepared.columns
    index = {p: i for i, p in enumerate(prepared.partitions)}
    if cols.partition and cols.partition in frame.columns:
        part = frame[cols.partition].cast(pl.Int64).replace_strict(index, default=-1)
    else:
        part = pl.Series(np.zeros(frame.height, dtype=np.int64))
    if over:
        timeline = substream_ids(frame, part.to_numpy(), over)
    else:
        timeline = part.to_numpy().astype(np.int64)
    arrival = frame[cols.parsed_arrival].dt.epoch("ns").to_numpy()
    app = frame[timestamp_by].dt.epoch("ns").fill_null(0).to_numpy()
    early, no_time = unsaveable_masks(prepared, timestamp_by, early_policy=early_policy)
    no_key = (timeline < 0) & ~no_time & ~early
    ok = ~no_time & ~early & ~no_key
    timeline = np.where(timeline < 0, 0, timeline)
    unsaveable = Unsaveable(early=int(early.sum()), invalid=int(no_time.sum()))
    return Timelines.laid_out(arrival, app, timeline, ok, unsaveable, int(no_key.sum()))


def substream_ids(frame: pl.DataFrame, part: np.ndarray, over: tuple[str, ...]) -> np.ndarray:
    """Each event's (partition, OVER keys) substream as an id from 0 (-1: a key missing).
    Keys are compared as text, as the engine compares them; the ids are dense but in no
    particular order (the guide only groups by them)."""
    ids = part.astype(np.int64) + 1  # a partition not declared (-1) is a value of its own
    missing = np.zeros(frame.height, dtype=bool)
    for name in over:
        text = frame[name].cast(pl.String)
        missing |= text.is_null().to_numpy()
        codes = text.cast(pl.Categorical).to_physical().cast(pl.Int64).fill_null(0).to_numpy()
        ids = _dense(ids) * (int(codes.max(initial=0)) + 1) + codes
    out = np.full(frame.height, -1, dtype=np.int64)
    out[~missing] = _dense(ids[~missing])
    return out


def _dense(values: np.ndarray) -> np.ndarray:
    """Non-negative ``values`` renumbered 0, 1, ... (equal values, equal numbers)."""
    top = int(values.max(initial=-1))
    if top < 4 * values.size + 1024:  # a table of the values present
        present = np.zeros(top + 1, dtype=np.int64)
        present[values] = 1
        return (np.cumsum(present) - 1)[values]
    return np.unique(values, return_inverse=True)[1].astype(np.int64).reshape(-1)


def grouped_by(timeline: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Processing order grouped by ``timeline`` (stable), and where each timeline starts."""
    grouped = grouping(timeline)
    ordered = timeline[grouped]
    starts = np.r_[0, np.flatnonzero(ordered[1:] != ordered[:-1]) + 1] if ordered.size else ordered
    return grouped, starts.astype(np.int64)


def _before(lines: Timelines, values: np.ndarray) -> np.ndarray:
    """Each event's running maximum of ``values`` before it on its own timeline (``NEG``
    before the first), in processing order (the reference :func:`counts` is held to)."""
    by_line = values[lines.grouped]
    before = np.full(by_line.size, NEG, dtype=np.int64)
    bounds = [*lines.starts.tolist(), by_line.size]
    for start, stop in itertools.pairwise(bounds):
        if stop - start > 1:
            before[start + 1 : stop] = np.maximum.accumulate(by_line[start : stop - 1])
    out = np.empty_like(before)
    out[lines.grouped] = before
    return out


@dataclass(frozen=True)
class _ByLine:
    """The timelines' events grouped by timeline (processing order within each): what
    :func:`counts` reads, gathered once for every late tolerance."""

    arrival: np.ndarray
    app: np.ndarray
    ok: np.ndarray
    line: np.ndarray  # 0, 1, ...: the timeline's place among those present
    first: np.ndarray  # where each timeline starts


def _by_line(lines: Timelines, *, keep: bool = True) -> _ByLine:
    """The events grouped by timeline (kept for the next late tolerance with ``keep``)."""
    cached = lines.memo.get("by_line")
    if not isinstance(cached, _ByLine):
        first = lines.starts
        line = np.zeros(lines.grouped.size, dtype=np.int64)
        line[first[1:]] = 1
        cached = _ByLine(
            arrival=lines.arrival[lines.grouped],
            app=lines.app[lines.grouped],
            ok=lines.ok[lines.grouped],
            line=np.cumsum(line),
            first=first,
        )
        if keep:
            lines.memo["by_line"] = cached
    return cached


def _before_by_line(by: _ByLine, values: np.ndarray) -> np.ndarray:
    """:func:`_before` on values already grouped by timeline: one running maximum over the
    whole array, each timeline's values lifted above the previous timeline's (exact in
    64-bit integers; when the lift would not fit, one running maximum per timeline)."""
    before = np.full(values.size, NEG, dtype=np.int64)
    if values.size < 2:
        return before
    valid = values > NEG
    if not valid.any():
        return before
    low, high = int(values[valid].min()), int(values[valid].max())
    span = high - low + 2
    if span * (int(by.line[-1]) + 1) < 2**62:
        lift = by.line * span
        lifted = np.where(valid, values - (low - 1), 0) + lift
        running = np.maximum.accumulate(lifted) - lift
        running = np.where(running == 0, NEG, running + (low - 1))
        before[1:] = running[:-1]
        before[by.first] = NEG
        return before
    bounds = [*by.first.tolist(), values.size]
    for start, stop in itertools.pairwise(bounds):
        if stop - start > 1:
            before[start + 1 : stop] = np.maximum.accumulate(values[start : stop - 1])
    return before


@dataclass(frozen=True)
class Counts:
    """Under one late tolerance: events late, and the disorder (ns) of the other events."""

    late_ns: int | None
    late: int
    disorder: np.ndarray  # of the eligible events that are not late and are behind (> 0)

    def out_of_order(self, ooo_ns: int) -> int:
        """Events out of order under an out-of-order tolerance (already the one in force)."""
        return int(np.count_nonzero(self.disorder > ooo_ns))

    def least_ooo_s(self, allowed: int) -> int | None:
        """The least whole-second out-of-order tolerance leaving at most ``allowed`` events
        out of order (``None`` when even the late events exceed it)."""
        if allowed < 0:
            return None
        if allowed >= self.disorder.size:
            return 0
        # the (allowed + 1)-th largest disorder must be within the tolerance
        kth = self.disorder.size - 1 - allowed
        value = int(np.partition(self.disorder, kth)[kth])
        return int(-(-value // SECOND))


def counts(lines: Timelines, late_ns: int | None, action: Action) -> Counts:
    """Late events and the disorder of the others under ``late_ns`` (``None``: unlimited;
    docs/semantics.md, "The rules, as implemented": late adjustment first, then the running maximum
    per timeline). Worked out with the events grouped by timeline (the order of ``disorder``
    is not processing order; :func:`counts_in_order` is the same in processing order)."""
    if action is Action.ADJUST and late_ns is not None:
        return _adjusted(lines).counts(late_ns)
    by = _by_line(lines)
    return _counted(by, late_ns, action, lambda values: _before_by_line(by, values))


def _counted(
    events: Timelines | _ByLine,
    late_ns: int | None,
    action: Action,
    before_of: Callable[[np.ndarray], np.ndarray],
) -> Counts:
    """The per-event rules on ``events``' arrival, application time and ``ok``, in their
    order, with ``before_of`` giving each event's running maximum before it."""
    if late_ns is None:
        late = np.zeros_like(events.ok)
        t_late = events.app
    else:
        late = events.ok & (events.app < events.arrival - late_ns)
        t_late = np.where(late, events.arrival - late_ns, events.app)
    eligible = events.ok & ~(late & (action is Action.DROP))
    before = before_of(np.where(eligible, t_late, NEG))
    behind = before - t_late
    disorder = behind[eligible & ~late & (before > NEG) & (behind > 0)]
    return Counts(late_ns=late_ns, late=int(late.sum()), disorder=disorder)


@dataclass(frozen=True)
class _Adjusted:
    """With Adjust, every late tolerance L at once. A late event's time becomes its arrival
    minus L, so the largest time accepted before an event on its timeline is the larger of
    the largest application time before it (``A``) and the largest arrival before it
    (``R``) minus L; an event L does not make late is behind by ``max(A, R - L) − app``.
    Only the events behind under some L are kept: those behind the largest application
    time (``a_*``), and the others by ``R − app`` largest first (``r_*``), of which those
    above L are the only ones behind."""

    lateness: np.ndarray  # arrival − app of every event a tolerance decides about, sorted
    a_behind: np.ndarray  # A − app, of the events behind A
    a_arrival_behind: np.ndarray  # R − app, of the same events
    a_lateness: np.ndarray
    r_behind: np.ndarray  # R − app of the others, largest first
    r_lateness: np.ndarray

    def counts(self, late_ns: int) -> Counts:
        late = self.lateness.size - int(np.searchsorted(self.lateness, late_ns, side="right"))
        on_time = self.a_lateness <= late_ns
        first = np.maximum(self.a_behind[on_time], self.a_arrival_behind[on_time] - late_ns)
        # r_behind is sorted largest first: those above late_ns are a prefix
        upto = int(np.searchsorted(-self.r_behind, -late_ns, side="left"))
        on_time = self.r_lateness[:upto] <= late_ns
        rest = self.r_behind[:upto][on_time] - late_ns
        return Counts(late_ns=late_ns, late=late, disorder=np.concatenate([first, rest]))


def _adjusted(lines: Timelines) -> _Adjusted:
    cached = lines.memo.get("adjusted")
    if not isinstance(cached, _Adjusted):
        by = _by_line(lines, keep=False)  # Adjust reads only what is kept below
        top_app = _before_by_line(by, np.where(by.ok, by.app, NEG))
        top_arrival = _before_by_line(by, np.where(by.ok, by.arrival, NEG))
        keep = by.ok & (top_app > NEG)
        app = by.app[keep]
        behind_app = top_app[keep] - app
        behind_arrival = top_arrival[keep] - app
        lateness = by.arrival[keep] - app
        first = behind_app > 0
        # largest first; ties in any order (a tolerance keeps or leaves all of them)
        order = np.argsort(-behind_arrival[~first])
        cached = lines.memo["adjusted"] = _Adjusted(
            lateness=np.sort(by.arrival[by.ok] - by.app[by.ok]),
            a_behind=behind_app[first],
            a_arrival_behind=behind_arrival[first],
            a_lateness=lateness[first],
            r_behind=behind_arrival[~first][order],
            r_lateness=lateness[~first][order],
        )
    return cached


def counts_in_order(lines: Timelines, late_ns: int | None, action: Action) -> Counts:
    """:func:`counts` event by event in processing order (the reference it is held to)."""
    return _counted(lines, late_ns, action, lambda values: _before(lines, values))


def late_candidates_s(lines: Timelines, *, full_scan_s: int, most: int) -> list[int]:
    """Whole-second late tolerances worth trying: every second up to the largest lateness
    (of those a finite tolerance can cover) when that is at most ``full_scan_s``; beyond,
    every second up to ``full_scan_s`` and the capture's own lateness values above it (rounded
    up; at most ``most`` of them, spread by quantile) and the largest."""
    lateness = lines.lateness_ns()
    positive = lateness[(lateness > 0) & (lateness <= MAX_TOLERANCE_NS)]
    top = int(-(-int(positive.max()) // SECOND)) if positive.size else 0
    if top <= full_scan_s:
        return list(range(top + 1))
    values = np.unique(-(-positive[positive > full_scan_s * SECOND] // SECOND))
    if values.size > most:
        values = np.unique(np.quantile(values, np.linspace(0, 1, most), method="higher"))
    return sorted({*range(full_scan_s + 1), *(int(v) for v in values), top})


def staircase(
    lines: Timelines, late_values_s: list[int], allowed: int, action: Action
) -> list[tuple[int | None, int]]:
    """The (late, out-of-order) tolerances in seconds that keep the events a setting can
    change (adjusted, or dropped for being late, out of order or without an OVER key: the
    unsaveable ones are left out) at most ``allowed``, each with the least out-of-order
    tolerance, and none dominated (another with both tolerances no larger): the settings the
    least release delay is among, since a larger
    tolerance holds every timeline's watermark back (it can only make output later, except
    for the late events it no longer adjusts)."""
    points: list[tuple[int | None, int]] = []
    best_ooo: int | None = None
    for late_s in sorted(late_values_s):
        _, ooo = _step(lines, late_s, allowed, action)
        if ooo is None or ooo > late_s:  # the tolerance in force is min(late, out-of-order)
            continue
        if best_ooo is None or ooo < best_ooo:
            points.append((late_s, ooo))
            best_ooo = ooo
    top = max(late_values_s, default=0)
    late, ooo = _step(lines, top, allowed, action)
    if late == 0 and ooo is not None and ooo > top and (best_ooo is None or ooo < best_ooo):
        points.append((ooo, ooo))  # no event late: the late tolerance only has to allow it
        best_ooo = ooo
    if lines.lateness_ns().max(initial=0) > MAX_TOLERANCE_NS:
        _, ooo = _step(lines, None, allowed, action)  # later than any finite tolerance
        if ooo is not None and (best_ooo is None or ooo < best_ooo):
            points.append((None, ooo))
    return points


def _step(
    lines: Timelines, late_s: int | None, allowed: int, action: Action
) -> tuple[int, int | None]:
    """Under a late tolerance (s; ``None``: unlimited), the events late and the least
    out-of-order tolerance within ``allowed``: worked out once per capture, OVER key set,
    budget and action (a finer search of the guide asks again for the values it had)."""
    key = ("step", late_s, allowed, action)
    if key not in lines.memo:
        c = counts(lines, None if late_s is None else late_s * SECOND, action)
        lines.memo[key] = (c.late, c.least_ooo_s(allowed - lines.missing_key - c.late))
    return lines.memo[key]  # type: ignore[return-value]
