"""Tumbling windows and the engines' time units, shared by the Flink and Spark rules."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: Flink's ``Long.MIN_VALUE`` watermark: no watermark yet.
NO_WATERMARK = np.iinfo(np.int64).min


def floor_units(ns: np.ndarray, unit_ns: int) -> np.ndarray:
    """``ns`` in whole ``unit_ns`` units, rounded down (the engines' ms or µs timestamps)."""
    return np.floor_divide(ns, unit_ns)


def tumbling_end(ts: np.ndarray, size: int, offset: int = 0) -> np.ndarray:
    """The exclusive end of the tumbling window of ``size`` holding each timestamp ``ts``
    (same unit): start = ts − ((ts − offset) mod size), floor modulo as Flink's
    ``TimeWindow.getWindowStartWithOffset`` and Spark's ``window()`` compute it."""
    start = ts - np.mod(ts - offset, size)
    return start + size


def next_tick(ns: np.ndarray, interval_ns: int) -> np.ndarray:
    """The first whole multiple of ``interval_ns`` (since the epoch) at or after each time:
    the processing-time tick that first sees an event arriving then."""
    if interval_ns <= 0:
        return ns.copy()
    return -np.floor_divide(-ns, interval_ns) * interval_ns


@dataclass(frozen=True, slots=True)
class Releases:
    """The part of the decisions a what-if measures, in processing (arrival) order: which
    events are dropped, and when the result holding each kept one was emitted
    (``release_ns``, valid where ``released``)."""

    dropped: np.ndarray
    released: np.ndarray
    release_ns: np.ndarray


@dataclass(frozen=True, slots=True)
class Decisions:
    """What an engine's rules decided for each event, in processing (arrival) order.

    ``watermark_ns``: the watermark the event met (``None`` where there was none yet, as
    nanoseconds otherwise); ``release_ns``: when the result holding the event was emitted
    (its window fired), valid where ``released``.
    """

    watermark_ns: np.ndarray
    has_watermark: np.ndarray
    late: np.ndarray
    dropped: np.ndarray
    release_ns: np.ndarray
    released: np.ndarray
    timeline: np.ndarray
