"""The CTI engine's vocabulary: event shapes, CTI origins, and the engine's inputs and results.

Results (:class:`EventOutcome`, :class:`CtiViolation`) are immutable named tuples: there is
one per event, and building frozen dataclasses would dominate the replay's time. All times
are integer nanoseconds since the Unix epoch (UTC); +∞ is
:data:`~diagnostics.cti.policy.INFINITY`.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import NamedTuple

from diagnostics.cti.policy import INFINITY
from diagnostics.durations import TICK
from diagnostics.errors import EngineStateError
from diagnostics.kinds import EventStatus

#: The stream index of the output (operator / query) CTIs in :class:`CtiRecord`.
OUTPUT = -1


class Shape(StrEnum):
    """Event shapes. A point lasts one tick; a start edge's end is unknown (+∞)."""

    POINT = "point"
    INTERVAL = "interval"
    EDGE_START = "edge_start"
    EDGE_END = "edge_end"


class CtiOrigin(StrEnum):
    """Where a CTI came from."""

    GENERATED = "generated"
    IMPORTED = "imported"
    FLUSH = "flush"
    OPERATOR = "operator"


_SHAPES = Shape
_NEEDS_END = frozenset({Shape.INTERVAL, Shape.EDGE_END})


@dataclass(frozen=True, slots=True)
class Event:
    """One input event. ``end_ns``: required for intervals (> start) and end edges (≥ start),
    ``None`` for points and start edges. ``stream``: 0 (the only or left input) or 1."""

    event_id: int
    start_ns: int
    end_ns: int | None = None
    shape: Shape = Shape.POINT
    arrival_ns: int | None = None
    stream: int = 0

    def __post_init__(self) -> None:
        end = self.end_ns
        if end is None and self.shape in _NEEDS_END:
            msg = f"event {self.event_id}: a {self.shape.value} event needs an end time"
            raise EngineStateError(msg)
        if end is None:
            return
        if end <= self.start_ns and self.shape is _SHAPES.INTERVAL:
            msg = f"event {self.event_id}: interval end is not after its start"
            raise EngineStateError(msg)
        if end < self.start_ns and self.shape is _SHAPES.EDGE_END:
            msg = f"event {self.event_id}: end edge's end is before its start"
            raise EngineStateError(msg)

    @property
    def checked_ns(self) -> int:
        """The time checked against the latest CTI: an end edge's end, else the start."""
        if self.shape is _SHAPES.EDGE_END and self.end_ns is not None:
            return self.end_ns
        return self.start_ns

    @property
    def lifetime_end(self) -> int:
        """Exclusive end of the lifetime: start + 1 tick for a point, +∞ for a start edge."""
        if self.shape is Shape.POINT:
            return self.start_ns + TICK
        if self.shape is Shape.EDGE_START or self.end_ns is None:
            return INFINITY
        return self.end_ns

    @property
    def counts(self) -> bool:
        """True when the event counts towards the CTI frequency (start edges only)."""
        return self.shape is not Shape.EDGE_END


@dataclass(frozen=True, slots=True)
class ImportedCti:
    """A CTI taken from another stream (``AdvanceTimeImportSettings``) for input ``stream``."""

    cti_ns: int
    arrival_ns: int | None = None
    stream: int = 0


@dataclass(frozen=True, slots=True)
class CtiRecord:
    """One CTI as issued. ``stream`` is the input index, or :data:`OUTPUT`. ``after_event_id``
    and ``after_stream`` name the event after which it was issued (``None`` before any event
    or for a flush). ``processing_ns`` is that moment's processing time, if known."""

    seq: int
    stream: int
    cti_ns: int
    origin: CtiOrigin
    processing_ns: int | None
    after_event_id: int | None
    after_stream: int | None


class CtiViolation(NamedTuple):
    """An event that started (an end edge: ended) before its input's latest CTI."""

    stream: int
    event_id: int
    shape: Shape
    start_ns: int
    end_ns: int | None
    arrival_ns: int | None
    cti_ns: int
    cti_origin: CtiOrigin
    status: EventStatus
    adjusted_start_ns: int | None
    delay_ns: int

    @property
    def lag_ns(self) -> int:
        """How far before the CTI the event's checked time lies (> 0)."""
        checked = (
            self.end_ns
            if self.shape is Shape.EDGE_END and self.end_ns is not None
            else self.start_ns
        )
        return self.cti_ns - checked


class EventOutcome(NamedTuple):
    """What the engine did with one event. ``latest_cti_ns``: the input's CTI just before the
    event. ``committing_cti_ns`` (:data:`INFINITY` for the flush), ``committing_seq``,
    ``release_ns``: the output CTI that released it and its processing time; all ``None``
    when the event was dropped or never released. ``output_rank``: release order."""

    stream: int
    event_id: int
    shape: Shape
    start_ns: int
    end_ns: int | None
    arrival_ns: int | None
    latest_cti_ns: int | None
    latest_cti_origin: CtiOrigin | None
    violation: bool
    status: EventStatus
    system_start_ns: int | None
    committing_cti_ns: int | None
    committing_seq: int | None
    release_ns: int | None
    output_rank: int | None

    @property
    def dropped(self) -> bool:
        """True when the violation policy removed the event."""
        return self.status is EventStatus.DROPPED
