"""Fixtures and helpers for the CTI tests: times are written in seconds and converted to ns."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from diagnostics.cti import CtiEngine, CtiPolicy, Event, EventOutcome, Shape
from diagnostics.durations import SECOND


def s(seconds: float) -> int:
    """Seconds to nanoseconds (exact for the decimal values the tests use)."""
    return round(seconds * SECOND)


def point(event_id: int, start: float, arrival: float | None = None, stream: int = 0) -> Event:
    """A point event at ``start`` seconds arriving at ``arrival`` (default: at its start)."""
    return Event(
        event_id, s(start), None, Shape.POINT, s(start if arrival is None else arrival), stream
    )


def interval(event_id: int, start: float, end: float, arrival: float) -> Event:
    """An interval event [start, end) in seconds."""
    return Event(event_id, s(start), s(end), Shape.INTERVAL, s(arrival))


def run(policy: CtiPolicy, events: Sequence[Event], **kwargs: object) -> CtiEngine:
    """Feed ``events`` in one batch to a fresh one-input engine and close it."""
    engine = CtiEngine([policy], **kwargs)  # type: ignore[arg-type]
    engine.feed(events)
    engine.close()
    return engine


def by_id(engine: CtiEngine, stream: int = 0) -> dict[int, EventOutcome]:
    """The engine's outcomes of input ``stream`` keyed by event id."""
    return {o.event_id: o for o in engine.outcomes() if o.stream == stream}


@pytest.fixture
def adjust_every_one() -> CtiPolicy:
    """Frequency 1, delay 0, Adjust: the query-binding example of StreamInsight's "Advancing application time"."""
    return CtiPolicy(every_events=1, delay_ns=0, violation="adjust")
