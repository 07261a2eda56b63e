"""Arrival times far outside the rest of a capture: reported, kept, never densified.

Rule (docs/schemas.md, "Far-off times and minutes with data"): the capture's arrivals,
sorted, split wherever two consecutive ones are more than :data:`FAR_GAP_NS` apart; the run
holding the most events
is the rest, and an arrival outside it is far off when its run holds few events (at most
:data:`FEW_SHARE` of them, at least one): a capture of two busy days with an idle one between
is two stretches of data, not an export error. A far-off arrival is kept and replayed
where it falls (ASA would process it there too); the per-minute tables do not fill the gap
(``diagnostics.minutes``), so it costs what one event costs. An arrival before 1900 or after
2150 is replayed at that bound (``diagnostics.timestamps``), which the note says.
"""

from __future__ import annotations

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
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    breaks = np.flatnonzero(np.diff(ordered) > FAR_GAP_NS) + 1
    starts = np.r_[0, breaks]
    ends = np.r_[breaks, ordered.size]
    sizes = ends - starts
    main = int(np.argmax(sizes))
    low, high = int(ordered[starts[main]]), int(ordered[ends[main] - 1])
    run = np.empty(ordered.size, dtype=np.int64)
    run[order] = np.repeat(np.arange(sizes.size), sizes)
    far = far_runs(sizes)[run]
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
