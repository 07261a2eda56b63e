"""The minutes a per-minute table has rows for: cost follows the data, not the time span.

Rule (docs/schemas.md, "Far-off times and minutes with data"): a per-minute table
(``metrics.parquet``, the watermark delay, the aggregate tables, the app's charts) has a row
for every minute in which an event arrived, and for the idle minutes after such a minute up
to :data:`GAP_FILL_MINUTES` of them; a longer gap is not filled, the table resumes at the
next minute with data. A capture whose arrivals span centuries (one device clock at 2099) then
costs what its events cost, and the minutes of an ordinary idle stretch are still all there.

Invariant: the grid holds every minute with data, is sorted and unique, and has at most
``(GAP_FILL_MINUTES + 1)`` rows per minute with data.
"""

from __future__ import annotations

import numpy as np

from diagnostics.durations import MINUTE

#: Idle minutes filled after a minute with data before a gap is cut (one hour).
GAP_FILL_MINUTES = 60


def minute_of(ns: np.ndarray | int) -> np.ndarray:
    """The start (ns since the epoch) of each time's minute."""
    values = np.asarray(ns, dtype=np.int64)
    return values - np.mod(values, MINUTE)


def minute_grid(minutes: np.ndarray, *, fill: int = GAP_FILL_MINUTES) -> np.ndarray:
    """The grid over minute starts ``minutes`` (ns, any order, repeats allowed): each of
    them, and after each up to ``fill`` idle minutes before the next one."""
    data = np.unique(np.asarray(minutes, dtype=np.int64))
    if data.size == 0:
        return data
    idle = np.r_[np.diff(data // MINUTE) - 1, 0]  # in minutes: no int64 overflow
    extra = np.minimum(idle, fill)
    width = extra + 1
    total = int(width.sum())
    owner = np.repeat(np.arange(data.size), width)
    step = np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(width) - width, width)
    return data[owner] + step * MINUTE
