"""Golden tests from the documented behaviours (StreamInsight's "Advancing application time", docs/semantics.md, "StreamInsight application-time advancement (CTI)", issue 8).

Every expected value is worked out by hand in the comments from the documented rules.
"""

from __future__ import annotations

import pytest

from diagnostics.cti import (
    INFINITY,
    OUTPUT,
    CtiEngine,
    CtiOrigin,
    CtiPolicy,
    Event,
    HoppingWindow,
    Operator,
    Shape,
    suggest_cti_delay,
)
from diagnostics.kinds import EventStatus
from tests.cti.conftest import by_id, interval, point, run, s


def output_ctis(engine: CtiEngine) -> list[int]:
    return [r.cti_ns for r in engine.ctis() if r.stream == OUTPUT]


class TestEveryTenDelayFiveSeconds:
    """``AdvanceTimeGenerationSettings(10, TimeSpan.FromSeconds(5), true)``."""

    @staticmethod
    def events() -> list[Event]:
        # ids 0-9 at 0..9 s; id 10 at 4.5 s (late, within the 5 s grace); id 11 at 3.5 s
        # (late beyond it); ids 12-19 at 10..17 s. Arrival = start, except the two late ones.
        evs = [point(i, i) for i in range(10)]
        evs += [point(10, 4.5, arrival=10), point(11, 3.5, arrival=10.5)]
        evs += [point(12 + k, 10 + k, arrival=11 + k) for k in range(8)]
        return evs

    @pytest.mark.parametrize("violation", ["drop", "adjust"])
    def test_ctis_lag_five_seconds_behind_every_tenth_event(self, violation: str) -> None:
        policy = CtiPolicy(
            every_events=10, delay_ns=s(5), violation=violation, flush_at_infinity=True
        )
        engine = run(policy, self.events())
        # after id 9 (10th start edge, max start 9 s): CTI 4 s; after id 19 (max 17 s): 12 s;
        # then the flush at +inf on close.
        assert output_ctis(engine) == [s(4), s(12), INFINITY]
        out = by_id(engine)
        # id 10 at 4.5 s arrives after the 4 s CTI: inside the grace period, accepted
        assert out[10].status is EventStatus.ACCEPTED
        assert out[10].latest_cti_ns == s(4)
        # id 11 at 3.5 s starts before the 4 s CTI: a point lies entirely before it, so it is
        # dropped under both policies
        assert out[11].violation
        assert out[11].status is EventStatus.DROPPED
        assert out[11].committing_cti_ns is None
        assert out[11].release_ns is None

    def test_commit_and_release(self) -> None:
        policy = CtiPolicy(every_events=10, delay_ns=s(5), flush_at_infinity=True)
        out = by_id(run(policy, self.events()))
        # CTI 4 s (issued at processing time 9 s) commits starts 0..3 s
        for i in range(4):
            assert (out[i].committing_cti_ns, out[i].release_ns) == (s(4), s(9))
        # CTI 12 s (issued after id 19, arrival 18 s) commits 4..9 s, 4.5 s, 10 s and 11 s
        for i in (4, 5, 6, 7, 8, 9, 10, 12, 13):
            assert (out[i].committing_cti_ns, out[i].release_ns) == (s(12), s(18))
        # the rest (12..17 s) only by the flush, at close (the last arrival, 18 s)
        for i in range(14, 20):
            assert (out[i].committing_cti_ns, out[i].release_ns) == (INFINITY, s(18))
        # release order: by CTI, then start: 0,1,2,3 | 4, 4.5(id 10), 5, ..., 9, 10, 11 | ...
        ranked = sorted(
            (o for o in out.values() if o.output_rank is not None), key=lambda o: o.output_rank
        )
        assert [o.event_id for o in ranked] == [
            0,
            1,
            2,
            3,
            4,
            10,
            5,
            6,
            7,
            8,
            9,
            12,
            13,
            *range(14, 20),
        ]

    def test_without_flush_the_tail_is_never_released(self) -> None:
        out = by_id(run(CtiPolicy(every_events=10, delay_ns=s(5)), self.events()))
        assert [i for i, o in out.items() if o.release_ns is None] == [11, 14, 15, 16, 17, 18, 19]

    def test_suggested_delay_avoids_the_violation(self) -> None:
        engine = run(CtiPolicy(every_events=10, delay_ns=s(5)), self.events())
        # id 11 started 0.5 s before the CTI: a delay of 5.5 s would have let it in
        assert suggest_cti_delay(engine.violations(), s(5)) == s(5.5)
        again = run(CtiPolicy(every_events=10, delay_ns=s(5.5)), self.events())
        assert again.violations() == []


def test_frequency_one_delay_zero_commits_each_point_only_with_the_next_cti(
    adjust_every_one: CtiPolicy,
) -> None:
    out = by_id(run(adjust_every_one, [point(0, 1), point(1, 2), point(2, 3)]))
    # the CTI after each event has the event's own timestamp, which is not strictly after it
    assert out[0].committing_cti_ns == s(2)
    assert out[0].release_ns == s(2)
    assert out[1].committing_cti_ns == s(3)
    assert out[1].release_ns == s(3)
    assert out[2].committing_cti_ns is None


def test_delay_of_minus_one_tick_commits_each_point_at_once() -> None:
    policy = CtiPolicy(every_events=1, delay_ns=-100, violation="adjust")
    engine = run(policy, [point(0, 1), point(1, 2), point(2, 3)])
    out = by_id(engine)
    for i, start in enumerate((1, 2, 3)):
        assert out[i].committing_cti_ns == s(start) + 100
        assert out[i].release_ns == s(start)  # released at its own arrival
    assert output_ctis(engine) == [s(1) + 100, s(2) + 100, s(3) + 100]


class TestIntervals:
    def test_adjust_moves_an_overlapping_interval_up_to_the_cti(
        self, adjust_every_one: CtiPolicy
    ) -> None:
        # A [10, 20) -> CTI 10 s; B [5, 15) overlaps it -> start adjusted to 10 s; the CTI
        # after B would be max start 10 s again, which does not advance; C [12, 13) -> CTI 12 s
        events = [interval(0, 10, 20, 10), interval(1, 5, 15, 11), interval(2, 12, 13, 12)]
        engine = run(adjust_every_one, events)
        out = by_id(engine)
        assert out[1].violation
        assert out[1].status is EventStatus.ADJUSTED
        assert out[1].system_start_ns == s(10)
        assert out[1].start_ns == s(5)  # the original start is kept alongside
        assert output_ctis(engine) == [s(10), s(12)]
        assert out[1].committing_cti_ns == s(12)
        assert out[1].release_ns == s(12)

    def test_drop_removes_the_overlapping_interval(self) -> None:
        policy = CtiPolicy(every_events=1, violation="drop")
        events = [interval(0, 10, 20, 10), interval(1, 5, 15, 11)]
        out = by_id(run(policy, events))
        assert out[1].status is EventStatus.DROPPED
        assert out[1].system_start_ns is None

    @pytest.mark.parametrize(("start", "end"), [(2, 8), (5, 10)])
    def test_an_interval_entirely_before_the_cti_is_dropped_by_adjust(
        self, adjust_every_one: CtiPolicy, start: float, end: float
    ) -> None:
        # [2, 8) and [5, 10) both end at or before the 10 s CTI (ends are exclusive)
        events = [interval(0, 10, 20, 10), interval(1, start, end, 11)]
        out = by_id(run(adjust_every_one, events))
        assert out[1].violation
        assert out[1].status is EventStatus.DROPPED

    def test_an_event_starting_exactly_at_the_cti_is_valid(
        self, adjust_every_one: CtiPolicy
    ) -> None:
        out = by_id(run(adjust_every_one, [interval(0, 10, 20, 10), interval(1, 10, 11, 11)]))
        assert not out[1].violation
        assert out[1].status is EventStatus.ACCEPTED


class TestEdges:
    def test_end_edges_do_not_count_towards_the_frequency(self) -> None:
        policy = CtiPolicy(every_events=2)
        events = [
            Event(0, s(0), None, Shape.EDGE_START, s(0)),
            Event(1, s(0), s(1), Shape.EDGE_END, s(1)),
            Event(2, s(2), None, Shape.EDGE_START, s(2)),
        ]
        engine = run(policy, events)
        # counting the end edge would issue a CTI at 0 s after event 1; only start edges count,
        # so the first CTI comes after event 2 at its start, 2 s
        assert [(r.cti_ns, r.after_event_id) for r in engine.ctis() if r.stream == OUTPUT] == [
            (s(2), 2)
        ]

    def test_end_edges_are_ignored_by_a_duration_frequency(self) -> None:
        policy = CtiPolicy(every_ns=s(5))
        events = [
            Event(0, s(0), None, Shape.EDGE_START, s(0)),
            Event(1, s(0), s(10), Shape.EDGE_END, s(1)),  # its end (10 s) does not move time
            Event(2, s(6), None, Shape.EDGE_START, s(2)),
        ]
        engine = run(policy, events)
        assert [(r.cti_ns, r.after_event_id) for r in engine.ctis() if r.stream == OUTPUT] == [
            (s(6), 2)
        ]

    def test_an_end_edge_is_checked_on_its_end(self, adjust_every_one: CtiPolicy) -> None:
        events = [
            Event(0, s(2), None, Shape.EDGE_START, s(2)),
            Event(1, s(6), None, Shape.EDGE_START, s(3)),  # CTI 6 s
            Event(2, s(2), s(7), Shape.EDGE_END, s(4)),  # ends after the CTI: valid
            Event(3, s(2), s(4), Shape.EDGE_END, s(5)),  # ends before the CTI: dropped
        ]
        out = by_id(run(adjust_every_one, events))
        assert not out[2].violation
        assert out[3].violation
        assert out[3].status is EventStatus.DROPPED

    def test_adjust_moves_a_start_edge_up_to_the_cti(self, adjust_every_one: CtiPolicy) -> None:
        events = [point(0, 10), Event(1, s(4), None, Shape.EDGE_START, s(11))]
        out = by_id(run(adjust_every_one, events))
        assert out[1].status is EventStatus.ADJUSTED
        assert out[1].system_start_ns == s(10)


class TestJoin:
    @staticmethod
    def events() -> list[Event]:
        # left (slow): L0 at 0 s; right (fast): 0, 10, 20 s; then L1 at 15 s
        return [
            point(0, 0, arrival=0, stream=0),
            point(0, 0, arrival=1, stream=1),
            point(1, 10, arrival=2, stream=1),
            point(2, 20, arrival=3, stream=1),
            point(1, 15, arrival=4, stream=0),
        ]

    @pytest.mark.parametrize("operator", [Operator.JOIN, Operator.UNION])
    def test_releases_only_up_to_the_older_cti(self, operator: Operator) -> None:
        policy = CtiPolicy(every_events=1)
        engine = CtiEngine([policy, policy], operator)
        engine.feed(self.events())
        engine.close()
        # right runs ahead to 20 s, but the output follows the left: 0 s, then 15 s
        assert [(r.cti_ns, r.processing_ns) for r in engine.ctis() if r.stream == OUTPUT] == [
            (s(0), s(1)),
            (s(15), s(4)),
        ]
        left, right = by_id(engine, 0), by_id(engine, 1)
        assert (left[0].release_ns, right[0].release_ns, right[1].release_ns) == (s(4), s(4), s(4))
        assert right[2].release_ns is None  # 20 s is beyond the older CTI (15 s)
        assert left[1].release_ns is None

    def test_importing_the_fast_streams_ctis_keeps_the_join_up_with_it(self) -> None:
        slow = CtiPolicy(imports=True)
        fast = CtiPolicy(every_events=1)
        engine = CtiEngine([slow, fast], Operator.JOIN, import_from_other=True)
        events = [*self.events()[:4], point(1, 25, arrival=4, stream=0)]
        engine.feed(events)
        engine.close()
        assert [r.cti_ns for r in engine.ctis() if r.stream == 0] == [s(0), s(10), s(20)]
        assert {r.origin for r in engine.ctis() if r.stream == 0} == {CtiOrigin.IMPORTED}
        assert output_ctis(engine) == [s(0), s(10), s(20)]
        right = by_id(engine, 1)
        assert (right[0].release_ns, right[1].release_ns) == (s(2), s(3))


class TestHoppingWindow:
    def test_tumbling_window_holds_the_cti_back_to_the_window_start(
        self, adjust_every_one: CtiPolicy
    ) -> None:
        events = [point(0, 3), point(1, 7), point(2, 12), point(3, 25)]
        engine = run(adjust_every_one, events, window=HoppingWindow(s(10), s(10)))
        # input CTIs 3, 7, 12, 25 s -> window starts 0, 0, 10, 20 s
        assert output_ctis(engine) == [s(0), s(10), s(20)]
        out = by_id(engine)
        assert (out[0].release_ns, out[1].release_ns, out[2].release_ns) == (s(12), s(12), s(25))
        assert out[3].release_ns is None

    def test_hopping_window_holds_to_the_earliest_window_containing_the_cti(self) -> None:
        window = HoppingWindow(size_ns=s(20), hop_ns=s(10))
        # windows containing 25 s start at 10 s and 20 s; the earliest is 10 s
        assert window.hold(s(25)) == s(10)
        assert window.hold(s(20)) == s(10)
        assert window.hold(s(29.9)) == s(10)
        assert window.hold(s(30)) == s(20)
        assert window.hold(INFINITY) == INFINITY


def test_duration_frequency_issues_a_cti_every_five_seconds_of_application_time() -> None:
    # the first start (0 s) anchors; 5 s is 5 s past it -> CTI 5 s (anchor 5 s); 7 and 9 s are
    # less than 5 s past the anchor; 11 s is -> CTI 11 s
    events = [point(i, t) for i, t in enumerate((0, 2, 4, 5, 7, 9, 11))]
    engine = run(CtiPolicy(every_ns=s(5)), events)
    assert [(r.cti_ns, r.after_event_id) for r in engine.ctis() if r.stream == OUTPUT] == [
        (s(5), 3),
        (s(11), 6),
    ]
