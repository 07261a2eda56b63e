"""The incremental CTI engine: StreamInsight's application-time advancement (docs/semantics.md, "StreamInsight application-time advancement (CTI)").

:class:`CtiEngine` takes items (events and imported CTIs) of one or two inputs in processing
order, in batches, and keeps its state between batches. Per input it checks each event
against the input's latest CTI (the violation policy), counts start edges and generates CTIs
(``max start − delay``); the output CTI is the input's CTI, or with two inputs the minimum of
both inputs' latest CTIs, held back by a hopping window when there is one. An event is
*committed* and released by the first output CTI strictly after its (adjusted) start (for an
end edge: its end), since a CTI commits everything strictly before its timestamp.

Invariants (property tests in ``tests/cti``):

* splitting the items into batches never changes any outcome, CTI or release;
* every CTI sequence (per input, and the output) is strictly increasing;
* no released event starts before an output CTI released before it;
* every event fed appears exactly once in :meth:`CtiEngine.outcomes`; ``dropped`` holds
  exactly when ``system_start_ns`` is ``None``.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from diagnostics.cti.events import (
    OUTPUT,
    CtiOrigin,
    CtiRecord,
    CtiViolation,
    Event,
    EventOutcome,
    ImportedCti,
    Shape,
)
from diagnostics.cti.policy import INFINITY, CtiPolicy, HoppingWindow, Operator, ViolationPolicy
from diagnostics.errors import EngineStateError, PolicyError
from diagnostics.kinds import EventStatus

_UNRELEASED = (None, None, None, None)
# enum members bound once: attribute access on an enum class is slow on the hot path
_EDGE_END = Shape.EDGE_END
_ADJUST = ViolationPolicy.ADJUST
_ACCEPTED, _ADJUSTED, _DROPPED = EventStatus.ACCEPTED, EventStatus.ADJUSTED, EventStatus.DROPPED
_GENERATED = CtiOrigin.GENERATED


@dataclass(slots=True)
class _Input:
    """Mutable per-input state (private to the engine)."""

    policy: CtiPolicy
    latest: int | None = None
    latest_origin: CtiOrigin | None = None
    count: int = 0
    high: int | None = None
    anchor: int | None = None


class CtiEngine:
    """Stateful replay of one input, or of two inputs feeding a join or a union.

    ``policies``: one :class:`CtiPolicy` per input (one or two; two need ``operator``).
    ``window``: an optional hopping window after the input or operator.
    ``import_from_other``: the first input imports the second's CTIs (a slow reference
    stream synchronised with a fast one, ``AdvanceTimeImportSettings``). Feed items with
    :meth:`feed` in processing order (arrival times, where given, must not decrease), then
    call :meth:`close` once.
    """

    def __init__(
        self,
        policies: Sequence[CtiPolicy],
        operator: Operator | None = None,
        window: HoppingWindow | None = None,
        *,
        import_from_other: bool = False,
    ) -> None:
        if len(policies) not in (1, 2):
            msg = f"a CTI replay takes one or two inputs, not {len(policies)}"
            raise PolicyError(msg)
        if (len(policies) == 2) != (operator is not None):
            msg = "two inputs need an operator (join or union), and an operator needs two inputs"
            raise PolicyError(msg)
        self.policies = tuple(policies)
        self.operator = operator
        self.window = window
        if import_from_other and (len(policies) != 2 or not policies[0].imports):
            msg = "importing the other input's CTIs needs two inputs and an importing first policy"
            raise PolicyError(msg)
        self.import_from_other = import_from_other
        self._inputs = [_Input(policy=p) for p in self.policies]
        self._output: int | None = None
        self._ctis: list[CtiRecord] = []
        # per event: the EventOutcome fields up to system_start_ns, then the release fields
        self._base: dict[tuple[int, int], tuple[Any, ...]] = {}
        self._released: dict[tuple[int, int], tuple[int, int, int | None, int]] = {}
        self._violations: list[CtiViolation] = []
        self._pending: list[tuple[int, int, int]] = []
        self._last_arrival: int | None = None
        self._rank = 0
        self._closed = False

    # -- feeding ---------------------------------------------------------------------------

    def feed(self, items: Iterable[Event | ImportedCti]) -> None:
        """Process a batch of events and imported CTIs, in processing order."""
        if self._closed:
            msg = "the CTI engine is closed; no batch can follow close()"
            raise EngineStateError(msg)
        for item in items:
            self._check_order(item)
            if isinstance(item, ImportedCti):
                self._import(item)
            else:
                self._event(item)

    def close(self, at_ns: int | None = None) -> None:
        """Shut the query down at processing time ``at_ns`` (default: the last arrival seen);
        inputs whose policy flushes issue a CTI at +∞."""
        if self._closed:
            msg = "the CTI engine is already closed"
            raise EngineStateError(msg)
        self._closed = True
        when = at_ns if at_ns is not None else self._last_arrival
        for index, state in enumerate(self._inputs):
            if state.policy.flush_at_infinity:
                self._issue(index, INFINITY, CtiOrigin.FLUSH, when, None)

    def _check_order(self, item: Event | ImportedCti) -> None:
        if item.stream >= len(self._inputs) or item.stream < 0:
            msg = f"item for input {item.stream}, but the replay has {len(self._inputs)} input(s)"
            raise EngineStateError(msg)
        if item.arrival_ns is None:
            return
        if self._last_arrival is not None and item.arrival_ns < self._last_arrival:
            msg = (
                f"items must come in processing order: arrival {item.arrival_ns} after "
                f"{self._last_arrival}"
            )
            raise EngineStateError(msg)
        self._last_arrival = item.arrival_ns

    def _import(self, item: ImportedCti) -> None:
        if not self._inputs[item.stream].policy.imports:
            msg = f"input {item.stream} received an imported CTI but its policy does not import"
            raise EngineStateError(msg)
        self._issue(item.stream, item.cti_ns, CtiOrigin.IMPORTED, item.arrival_ns, None)

    def _event(self, event: Event) -> None:
        key = (event.stream, event.event_id)
        if key in self._base:
            msg = f"event {event.event_id} of input {event.stream} was fed twice"
            raise EngineStateError(msg)
        state = self._inputs[event.stream]
        latest = state.latest
        shape = event.shape
        end_edge = shape is _EDGE_END
        checked = event.checked_ns
        violation = latest is not None and checked < latest
        status = _ACCEPTED
        system_start: int | None = event.start_ns
        if violation:
            assert latest is not None
            overlaps = not end_edge and event.lifetime_end > latest
            if state.policy.violation is _ADJUST and overlaps:
                status, system_start = _ADJUSTED, latest
            else:
                status, system_start = _DROPPED, None
            self._violations.append(
                CtiViolation(
                    stream=event.stream,
                    event_id=event.event_id,
                    shape=shape,
                    start_ns=event.start_ns,
                    end_ns=event.end_ns,
                    arrival_ns=event.arrival_ns,
                    cti_ns=latest,
                    cti_origin=state.latest_origin or _GENERATED,
                    status=status,
                    adjusted_start_ns=system_start,
                    delay_ns=state.policy.delay_ns,
                )
            )
        self._base[key] = (
            event.stream,
            event.event_id,
            shape,
            event.start_ns,
            event.end_ns,
            event.arrival_ns,
            latest,
            state.latest_origin,
            violation,
            status,
            system_start,
        )
        if system_start is not None:
            release_key = checked if end_edge else system_start
            heapq.heappush(self._pending, (release_key, event.stream, event.event_id))
        if not end_edge:
            self._generate(event, state)

    def _generate(self, event: Event, state: _Input) -> None:
        """Count a start edge (dropped ones included: they came from the source) and issue a
        CTI at ``max start − delay`` when the frequency is reached."""
        if state.high is None or event.start_ns > state.high:
            state.high = event.start_ns
        policy = state.policy
        due = False
        if policy.every_events is not None:
            state.count += 1
            if state.count >= policy.every_events:
                state.count, due = 0, True
        elif policy.every_ns is not None:
            if state.anchor is None:
                state.anchor = state.high
            elif state.high - state.anchor >= policy.every_ns:
                state.anchor, due = state.high, True
        if due:
            cti = state.high - policy.delay_ns
            self._issue(event.stream, cti, CtiOrigin.GENERATED, event.arrival_ns, event)

    # -- CTIs and release ------------------------------------------------------------------

    def _issue(
        self,
        stream: int,
        cti: int,
        origin: CtiOrigin,
        processing: int | None,
        after: Event | None,
    ) -> None:
        """Issue a CTI on input ``stream`` (and on the input importing it), then advance the
        output. A CTI that would not advance its input is not issued: CTIs never go back."""
        advanced = self._advance_input(stream, cti, origin, processing, after)
        if advanced and self.import_from_other and stream == 1 and origin is not CtiOrigin.IMPORTED:
            self._advance_input(0, cti, CtiOrigin.IMPORTED, processing, after)
        if not advanced:
            return
        latest = [s.latest for s in self._inputs]
        if any(value is None for value in latest):
            return
        out = min(v for v in latest if v is not None)
        if self.window is not None:
            out = self.window.hold(out)
        if self._output is not None and out <= self._output:
            return
        self._output = out
        out_origin = origin if self.operator is None and self.window is None else CtiOrigin.OPERATOR
        seq = self._record(OUTPUT, out, out_origin, processing, after)
        self._release(out, seq, processing)

    def _advance_input(
        self,
        stream: int,
        cti: int,
        origin: CtiOrigin,
        processing: int | None,
        after: Event | None,
    ) -> bool:
        state = self._inputs[stream]
        if state.latest is not None and cti <= state.latest:
            return False
        state.latest, state.latest_origin = cti, origin
        self._record(stream, cti, origin, processing, after)
        return True

    def _record(
        self, stream: int, cti: int, origin: CtiOrigin, processing: int | None, after: Event | None
    ) -> int:
        seq = len(self._ctis)
        self._ctis.append(
            CtiRecord(
                seq=seq,
                stream=stream,
                cti_ns=cti,
                origin=origin,
                processing_ns=processing,
                after_event_id=after.event_id if after is not None else None,
                after_stream=after.stream if after is not None else None,
            )
        )
        return seq

    def _release(self, cti: int, seq: int, processing: int | None) -> None:
        """Release every pending event whose key is strictly before ``cti``, in key order."""
        while self._pending and self._pending[0][0] < cti:
            _, stream, event_id = heapq.heappop(self._pending)
            self._released[(stream, event_id)] = (cti, seq, processing, self._rank)
            self._rank += 1

    # -- results ---------------------------------------------------------------------------

    def outcomes(self) -> list[EventOutcome]:
        """Every event fed so far, by input then event id."""
        return [
            EventOutcome(*self._base[k], *self._released.get(k, _UNRELEASED))
            for k in sorted(self._base)
        ]

    def ctis(self) -> list[CtiRecord]:
        """Every CTI issued so far (inputs and output), in issue order."""
        return list(self._ctis)

    def violations(self) -> list[CtiViolation]:
        """Every CTI violation so far, in processing order."""
        return list(self._violations)

    def latest_cti(self, stream: int = OUTPUT) -> int | None:
        """The latest CTI of input ``stream``, or of the output (default)."""
        return self._output if stream == OUTPUT else self._inputs[stream].latest
