"""Hypothesis properties of the CTI engine: monotone CTIs, commit safety, batch-split invariance
and the exactness of the delay advice."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from hypothesis import given, settings
from hypothesis import strategies as st

from diagnostics.cti import (
    OUTPUT,
    CtiEngine,
    CtiOrigin,
    CtiPolicy,
    Event,
    HoppingWindow,
    ImportedCti,
    Operator,
    Shape,
    suggest_cti_delay,
)
from diagnostics.kinds import EventStatus

MS = 1_000_000


@st.composite
def streams(draw: st.DrawFn, inputs: int = 1) -> list[Event]:
    """Events of ``inputs`` inputs, in processing order (arrivals never decrease)."""
    n = draw(st.integers(0, 40))
    arrival = 0
    counters = [0] * inputs
    events: list[Event] = []
    for _ in range(n):
        arrival += draw(st.integers(0, 500)) * MS
        stream = draw(st.integers(0, inputs - 1))
        start = arrival - draw(st.integers(-200, 3_000)) * MS
        shape = draw(st.sampled_from(list(Shape)))
        length = draw(st.integers(1, 2_000)) * MS
        end = start + length if shape in (Shape.INTERVAL, Shape.EDGE_END) else None
        events.append(Event(counters[stream], start, end, shape, arrival, stream))
        counters[stream] += 1
    return events


policies = st.builds(
    CtiPolicy,
    every_events=st.integers(1, 4),
    delay_ns=st.sampled_from([-100, 0, 500 * MS, 2_000 * MS]),
    violation=st.sampled_from(["drop", "adjust"]),
    flush_at_infinity=st.booleans(),
) | st.builds(
    CtiPolicy,
    every_ns=st.integers(1, 3_000).map(lambda v: v * MS),
    delay_ns=st.sampled_from([-100, 0, 1_000 * MS]),
    violation=st.sampled_from(["drop", "adjust"]),
    flush_at_infinity=st.booleans(),
)
windows = st.none() | st.builds(
    lambda hop, k: HoppingWindow(hop * k, hop),
    st.integers(1, 3_000).map(lambda v: v * MS),
    st.integers(1, 3),
)


def replay(
    policies_: Sequence[CtiPolicy],
    events: Sequence[Event],
    cuts: Sequence[int] = (),
    window: HoppingWindow | None = None,
) -> CtiEngine:
    operator = Operator.JOIN if len(policies_) == 2 else None
    engine = CtiEngine(policies_, operator, window)
    bounds = [0, *sorted(c % (len(events) + 1) for c in cuts), len(events)]
    for lo, hi in itertools.pairwise(bounds):
        engine.feed(events[lo:hi])
    engine.close()
    return engine


def release_key(outcome_start: int | None, event: Event) -> int:
    assert outcome_start is not None
    return (
        event.end_ns
        if event.shape is Shape.EDGE_END and event.end_ns is not None
        else outcome_start
    )


@settings(max_examples=100, deadline=None)
@given(streams(), policies, windows, st.lists(st.integers(0, 100), max_size=4))
def test_batch_split_never_changes_anything(
    events: list[Event], policy: CtiPolicy, window: HoppingWindow | None, cuts: list[int]
) -> None:
    whole = replay([policy], events, window=window)
    split = replay([policy], events, cuts, window)
    assert split.outcomes() == whole.outcomes()
    assert split.ctis() == whole.ctis()
    assert split.violations() == whole.violations()


@settings(max_examples=100, deadline=None)
@given(streams(2), policies, windows, st.lists(st.integers(0, 100), max_size=3))
def test_two_inputs_batch_split_and_output_bound(
    events: list[Event], policy: CtiPolicy, window: HoppingWindow | None, cuts: list[int]
) -> None:
    whole = replay([policy, policy], events, window=window)
    assert replay([policy, policy], events, cuts, window).outcomes() == whole.outcomes()
    latest: dict[int, int] = {}
    for record in whole.ctis():
        if record.stream == OUTPUT:
            # the output never runs ahead of either input's latest CTI
            assert len(latest) == 2
            assert record.cti_ns <= min(latest.values())
        else:
            latest[record.stream] = record.cti_ns


@settings(max_examples=120, deadline=None)
@given(streams(), policies, windows)
def test_ctis_never_move_backwards(
    events: list[Event], policy: CtiPolicy, window: HoppingWindow | None
) -> None:
    engine = replay([policy], events, window=window)
    for stream in (0, OUTPUT):
        values = [r.cti_ns for r in engine.ctis() if r.stream == stream]
        assert all(a < b for a, b in itertools.pairwise(values))


@settings(max_examples=120, deadline=None)
@given(streams(2), policies, windows)
def test_no_released_event_starts_before_a_cti_already_released(
    events: list[Event], policy: CtiPolicy, window: HoppingWindow | None
) -> None:
    engine = replay([policy, policy], events, window=window)
    source = {(e.stream, e.event_id): e for e in events}
    output = [r for r in engine.ctis() if r.stream == OUTPUT]
    for outcome in engine.outcomes():
        if outcome.committing_seq is None:
            continue
        key = release_key(outcome.system_start_ns, source[(outcome.stream, outcome.event_id)])
        earlier = [r.cti_ns for r in output if r.seq < outcome.committing_seq]
        assert all(cti <= key for cti in earlier)
        assert key < outcome.committing_cti_ns
        # and it is released no earlier than it arrived
        assert outcome.release_ns is not None
        assert outcome.arrival_ns is not None
        assert outcome.release_ns >= outcome.arrival_ns


@settings(max_examples=120, deadline=None)
@given(streams(), policies)
def test_violation_policy_outcomes(events: list[Event], policy: CtiPolicy) -> None:
    engine = replay([policy], events)
    source = {e.event_id: e for e in events}
    assert sorted(o.event_id for o in engine.outcomes()) == sorted(source)
    for outcome in engine.outcomes():
        event = source[outcome.event_id]
        checked = event.end_ns if event.shape is Shape.EDGE_END else event.start_ns
        assert outcome.violation == (
            outcome.latest_cti_ns is not None and checked < outcome.latest_cti_ns
        )
        assert outcome.dropped == (outcome.system_start_ns is None)
        if outcome.status is EventStatus.ADJUSTED:
            assert policy.violation == "adjust"
            assert outcome.system_start_ns == outcome.latest_cti_ns
            assert event.lifetime_end > outcome.latest_cti_ns
        if outcome.violation and policy.violation == "drop":
            assert outcome.dropped
        if not outcome.violation:
            assert outcome.status is EventStatus.ACCEPTED


@settings(max_examples=120, deadline=None)
@given(streams(), policies)
def test_suggested_delay_removes_every_generated_violation(
    events: list[Event], policy: CtiPolicy
) -> None:
    engine = replay([policy], events)
    suggested = suggest_cti_delay(engine.violations(), policy.delay_ns)
    assert suggested >= policy.delay_ns
    better = CtiPolicy(
        every_events=policy.every_events,
        every_ns=policy.every_ns,
        delay_ns=suggested,
        violation=policy.violation,
        flush_at_infinity=policy.flush_at_infinity,
    )
    again = replay([better], events)
    assert [v for v in again.violations() if v.cti_origin is CtiOrigin.GENERATED] == []
    if engine.violations():
        # and it is the smallest such delay: one nanosecond less brings a violation back
        tighter = CtiPolicy(
            every_events=policy.every_events,
            every_ns=policy.every_ns,
            delay_ns=suggested - 1,
            violation=policy.violation,
        )
        assert replay([tighter], events).violations() != []


@st.composite
def with_imports(draw: st.DrawFn) -> list[Event | ImportedCti]:
    """A one-input stream with imported CTIs interleaved at non-decreasing arrival times."""
    events = draw(streams())
    items: list[Event | ImportedCti] = []
    for event in events:
        if draw(st.booleans()):
            lag = draw(st.integers(-1_000, 3_000)) * MS
            assert event.arrival_ns is not None
            items.append(ImportedCti(event.arrival_ns - lag, event.arrival_ns))
        items.append(event)
    return items


@settings(max_examples=100, deadline=None)
@given(with_imports(), policies, st.lists(st.integers(0, 100), max_size=3))
def test_imported_ctis_keep_the_invariants(
    items: list[Event | ImportedCti], base: CtiPolicy, cuts: list[int]
) -> None:
    policy = CtiPolicy(
        every_events=base.every_events,
        every_ns=base.every_ns,
        delay_ns=base.delay_ns,
        violation=base.violation,
        imports=True,
    )
    whole = replay([policy], items)  # type: ignore[arg-type]
    split = replay([policy], items, cuts)  # type: ignore[arg-type]
    assert split.outcomes() == whole.outcomes()
    assert split.ctis() == whole.ctis()
    for stream in (0, OUTPUT):
        values = [r.cti_ns for r in whole.ctis() if r.stream == stream]
        assert all(a < b for a, b in itertools.pairwise(values))
    # the delay advice still removes every violation of a generated CTI
    better = CtiPolicy(
        every_events=policy.every_events,
        every_ns=policy.every_ns,
        delay_ns=suggest_cti_delay(whole.violations(), policy.delay_ns),
        violation=policy.violation,
        imports=True,
    )
    again = replay([better], items)  # type: ignore[arg-type]
    assert [v for v in again.violations() if v.cti_origin is CtiOrigin.GENERATED] == []
