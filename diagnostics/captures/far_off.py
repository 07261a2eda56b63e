"""Times far outside the rest of a capture: reported, kept, never densified.

Rule (docs/schemas.md, "Far-off times and minutes with data"), :func:`far_off_mask`: the
times, sorted, split wherever two consecutive ones are more than :data:`FAR_GAP_NS` apart;
the run holding the most events is the rest, and a time outside it is far off when its run
holds few events (at most :data:`FEW_SHARE` of them, at least one): a capture of two busy
days with an idle one between is two stretches of data, not an export error.

Arrivals (:func:`far_off_notes`): a far-off arrival is kept and replayed where it falls (ASA
would process it there too); the per-minute tables do not fill the gap
(``diagnostics.minutes``), so it costs what one event costs. An arrival before 1900 or after
2150 is replayed at that bound (``diagnostics.timestamps``), which the note says.

Application times (:func:`far_off_times`, the same rule): an event stamped decades away
(``2099-01-01``) is what the job's rules make of it (early or late), and it is named apart
(count, rows, senders, values) by the replay's summary, explain and the app, and left out of
lateness figures and charts, whose scale it would otherwise set.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import polars as pl

from diagnostics.durations import DAY
from diagnostics.timestamps import EARLIEST, LATEST, clamped, iso

#: Arrivals further apart than this split the capture into runs.
FAR_GAP_NS = DAY
#: A run of arrivals outside the largest is far off when it holds at most this share of them.
FEW_SHARE = 0.05
#: At most this many far-off arrivals are named one by one; the rest are counted.
SHOWN = 5


def _day(ns: int) -> str:
    """``2150-01-01``: the date of ``ns``."""
    return str(iso(ns))[:10]


def _second(ns: int) -> str:
    """``2024-01-01T00:04:55Z``: ``ns`` to the second."""
    return f"{str(iso(ns))[:19]}Z"


def _years_or_days(ns: int) -> str:
    days = ns // DAY
    if days >= 730:
        return f"{days // 365:,} years"
    return f"{days:,} days" if days != 1 else "1 day"


def far_runs(sizes: np.ndarray | list[int]) -> np.ndarray:
    """Which runs of arrivals (``sizes``: events per run, in time order) are far off: not
    the largest, and holding at most :data:`FEW_SHARE` of the events (at least one)."""
    sizes = np.asarray(sizes, dtype=np.int64)
    if sizes.size == 0:
        return np.zeros(0, dtype=bool)
    few = sizes <= max(1, int(FEW_SHARE * int(sizes.sum())))
    few[int(np.argmax(sizes))] = False
    return few


def far_off_mask(values: np.ndarray) -> tuple[np.ndarray, int, int]:
    """The one rule (see the module) on ``values`` (ns, any order): whether each is far off
    the rest, and the first and last time of the rest (the run holding the most values).
    Arrivals and application times are judged by it alike; ``values`` must not be empty."""
    low, high = int(values.min()), int(values.max())
    if high - low <= FAR_GAP_NS:  # no gap can be wider than the whole range: one run
        return np.zeros(values.size, dtype=bool), low, high
    ordered = np.sort(values)
    breaks = np.flatnonzero(np.diff(ordered) > FAR_GAP_NS) + 1
    starts = np.r_[0, breaks]
    ends = np.r_[breaks, ordered.size]
    sizes = ends - starts
    main = int(np.argmax(sizes))
    low, high = int(ordered[starts[main]]), int(ordered[ends[main] - 1])
    # the runs are apart by more than the gap: a value's run is the last one starting at or
    # before it
    run = np.searchsorted(ordered[starts], values, side="right") - 1
    return far_runs(sizes)[run], low, high


def far_off_notes(raw: pl.Series, arrival: pl.Series, column: str) -> tuple[str, ...]:
    """One line per far-off arrival (``SHOWN`` at most, then a count): the row, the value as
    written, and that it was kept (and where a clamped one was replayed). ``arrival`` is
    ``raw`` parsed by :func:`diagnostics.timestamps.to_utc`; unparsable values are skipped."""
    ns = arrival.dt.epoch("ns")
    valid = ns.is_not_null().to_numpy()
    rows = np.flatnonzero(valid)
    values = ns.drop_nulls().to_numpy().astype(np.int64)
    if values.size == 0:
        return ()
    far, low, high = far_off_mask(values)
    on_bound = clamped(arrival).to_numpy()[valid]
    picked = np.flatnonzero(far | on_bound)
    if picked.size == 0:
        return ()
    picked = picked[np.argsort(rows[picked], kind="stable")]
    lines = []
    for i in picked[:SHOWN]:
        row, value, written = int(rows[i]) + 1, int(values[i]), raw[int(rows[i])]
        head = f"arrival column '{column}', row {row}: '{written}'"
        if on_bound[i]:
            bound = f"before {_day(EARLIEST)}" if value == EARLIEST else f"after {_day(LATEST)}"
            lines.append(
                f"{head} is {bound}, beyond the times a replay holds; kept, replayed as "
                f"arriving at {_second(value)} "
                "(far off either way: the per-minute tables skip the gap)"
            )
            continue
        side = "before" if value < low else "after"
        distance = low - value if value < low else value - high
        lines.append(
            f"{head} is {_years_or_days(distance)} {side} the other arrivals "
            f"({_second(low)} .. {_second(high)}); kept and replayed where it falls "
            "(a device clock or an export error?); the per-minute tables skip the gap"
        )
    if picked.size > SHOWN:
        rest = picked.size - SHOWN
        lines.append(f"arrival column '{column}': {rest:,} more far-off arrivals, kept likewise")
    return tuple(lines)


@dataclass(frozen=True, slots=True)
class FarOffTimes:
    """Application times far off the others (the rule of :func:`far_off_mask`): how many,
    the first :data:`SHOWN` of them (row, 1-based in input order; value as written; time in
    ns; sender), the senders of all of them, and the span of the rest (ns). What a replay
    summary, explain and the app say of them."""

    column: str
    events: int
    rows: tuple[int, ...]
    values: tuple[str, ...]
    times: tuple[int, ...]
    #: the sender of each shown event (``""`` when it has none)
    senders: tuple[str, ...]
    #: the senders of all the far-off events, distinct, first :data:`SHOWN`
    devices: tuple[str, ...]
    device_column: str | None
    low: int
    high: int

    def to_dict(self) -> dict[str, object]:
        """JSON-ready: ``column``, ``events``, ``rows``, ``values``, ``devices``,
        ``device_column``, and the others' span ``from`` .. ``to``."""
        return {
            "column": self.column,
            "events": self.events,
            "rows": list(self.rows),
            "values": list(self.values),
            "devices": list(self.devices),
            "device_column": self.device_column,
            "from": _second(self.low),
            "to": _second(self.high),
        }

    def lines(self, fate: str) -> tuple[str, ...]:
        """A line saying how many, from which senders and what became of them (``fate``, e.g.
        ``dropped as early (EarlyInputEvent)``), then one per event as far-off arrivals are
        said (:data:`SHOWN` at most, then a count)."""
        head = f"application time '{self.column}'"
        who = (
            f"; {self.device_column} {', '.join(self.devices)}"
            + (" ..." if len(self.devices) == SHOWN and self.events > SHOWN else "")
            if self.devices and self.device_column
            else ""
        )
        lines = [
            f"{head}: {self.events:,} {'event is' if self.events == 1 else 'events are'} far "
            f"off the others ({_second(self.low)} .. {_second(self.high)}){who}; {fate}; left "
            "out of the lateness figures and charts (a device clock or a wrong field?)"
        ]
        for row, value, ns, sender in zip(
            self.rows, self.values, self.times, self.senders, strict=True
        ):
            side = "before" if ns < self.low else "after"
            distance = self.low - ns if ns < self.low else ns - self.high
            by = f" ({self.device_column} {sender})" if sender and self.device_column else ""
            lines.append(
                f"{head}, row {row:,}{by}: '{value}' is {_years_or_days(distance)} {side} "
                "the others"
            )
        if self.events > len(self.rows):
            rest = self.events - len(self.rows)
            lines.append(f"{head}: {rest:,} more far-off {'value' if rest == 1 else 'values'}")
        return tuple(lines)


def far_off_times(
    frame: pl.DataFrame,
    column: str,
    parsed: pl.Series,
    device_column: str | Callable[[], str | None] | None = None,
    judged: tuple[np.ndarray, int, int] | None = None,
) -> tuple[np.ndarray, FarOffTimes | None]:
    """Which rows of ``frame`` have an application time far off the others (``parsed``: the
    times of ``column``, null where invalid), and what to say of them (``None``: none);
    ``device_column`` names the senders (a function giving it: called only when some time is
    far off); ``judged``: :func:`far_off_mask` of the valid times, when already known."""
    ns = parsed.dt.epoch("ns")
    valid = ns.is_not_null().to_numpy()
    mask = np.zeros(frame.height, dtype=bool)
    if judged is None:
        values = ns.drop_nulls().to_numpy().astype(np.int64)
        if values.size == 0:
            return mask, None
        judged = far_off_mask(values)
    far, low, high = judged
    if far.size == 0:
        return mask, None
    mask[np.flatnonzero(valid)[far]] = True
    if not mask.any():
        return mask, None
    rows = np.flatnonzero(mask)
    shown = rows[:SHOWN]
    raw = frame[column] if column in frame.columns else parsed
    named_by = device_column() if callable(device_column) else device_column
    device = named_by if named_by in frame.columns else None
    senders: list[str] = [""] * shown.size
    devices: tuple[str, ...] = ()
    if device is not None:
        named = frame[device].gather(rows).cast(pl.String)
        senders = [s or "" for s in named.head(SHOWN).to_list()]
        devices = tuple(named.drop_nulls().unique(maintain_order=True).head(SHOWN).to_list())
    times = ns.gather(shown).to_list()
    return mask, FarOffTimes(
        column=column,
        events=int(rows.size),
        rows=tuple(int(r) + 1 for r in shown),
        values=tuple(str(raw[int(r)]) for r in shown),
        times=tuple(int(t) for t in times),
        senders=tuple(senders),
        devices=devices,
        device_column=device if devices else None,
        low=low,
        high=high,
    )
