"""InputPartitionNotProgressing: a notice iff a partition is idle longer than the interval."""

from __future__ import annotations

import itertools
import json

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from diagnostics.instrument import InstrumentOptions, instrument
from diagnostics.instrument.idle import idle_notices

from .conftest import BASE_NS, SECOND, make_outcomes

MINUTE = 60 * SECOND


def brute_force(arrival, partition, interval, declared=()):
    """Walk processing time in 1 s steps and emit a notice whenever a partition has been idle
    for a whole multiple of the interval (times here are whole seconds), the first hour's
    worth of them per gap at most; processing time stops at the last arrival, which ends
    every gap."""
    start, end = min(arrival), max(arrival)
    per_gap = max(1, 60 * MINUTE // interval)
    notices = []
    for part in sorted(set(partition) | set(declared)):
        own = sorted(a for a, p in zip(arrival, partition, strict=True) if p == part)
        last = start
        for tau in range(start, end, SECOND):  # the end itself is not idle time
            if tau in own:
                last = tau
                continue
            idle = tau - last
            if idle > 0 and idle % interval == 0 and idle // interval <= per_gap:
                notices.append((tau, part, idle // MINUTE))
    return sorted(notices)


@st.composite
def arrivals(draw):
    n = draw(st.integers(1, 25))
    steps = draw(st.lists(st.integers(0, 400), min_size=n, max_size=n))
    times = np.cumsum(steps) * SECOND + BASE_NS
    parts = draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))
    return times.tolist(), parts


@settings(max_examples=120, deadline=None)
@given(data=arrivals(), interval_s=st.sampled_from([30, 60, 120, 300]), silent=st.booleans())
def test_notices_match_a_step_by_step_clock(data, interval_s, silent):
    arrival, partition = data
    declared = (7,) if silent else ()
    interval = interval_s * SECOND
    frame = idle_notices(np.array(arrival), np.array(partition), interval, declared)
    got = sorted(frame.select("notice_ns", "partition", "idle_minutes").iter_rows())
    assert got == brute_force(arrival, partition, interval, declared)


@settings(max_examples=120, deadline=None)
@given(data=arrivals(), interval_s=st.sampled_from([30, 60, 300]))
def test_notice_iff_idle_longer_than_interval(data, interval_s):
    arrival, partition = data
    interval = interval_s * SECOND
    frame = idle_notices(np.array(arrival), np.array(partition), interval)
    noticed = set(frame["partition"].to_list())
    start, end = min(arrival), max(arrival)
    for part in set(partition):
        own = sorted(a for a, p in zip(arrival, partition, strict=True) if p == part)
        edges = [start, *own, end]
        longest = max(b - a for a, b in itertools.pairwise(edges))
        assert (part in noticed) == (longest > interval)


def test_gap_of_exactly_the_interval_gives_no_notice():
    arrival = [BASE_NS, BASE_NS + 5 * MINUTE]
    frame = idle_notices(np.array(arrival), np.array([0, 0]), 5 * MINUTE)
    assert frame.height == 0
    frame = idle_notices(
        np.array([*arrival, BASE_NS + 5 * MINUTE + 1]), np.array([0, 0, 0]), 5 * MINUTE
    )
    assert frame.height == 0


def test_repeated_notices_and_minutes():
    arrival = [BASE_NS, BASE_NS + 16 * MINUTE, BASE_NS + 16 * MINUTE]
    frame = idle_notices(np.array(arrival), np.array([0, 1, 0]), 5 * MINUTE, partitions=(0, 1, 2))
    rows = frame.select("partition", "notice_ns", "idle_minutes", "notice_index").rows()
    # Partition 0 and the silent partition 2 idle from the start; partition 1 from the start
    # until its first event at 16 min: each gets notices at 5, 10 and 15 minutes.
    expected = [(p, BASE_NS + k * 5 * MINUTE, 5 * k, k) for k in (1, 2, 3) for p in (0, 1, 2)]
    assert rows == expected


def test_activity_notice_matches_the_documented_example():
    """The InputPartitionNotProgressing line of docs/semantics.md, "Diagnostics ASA writes", byte for byte but the correlation ID."""
    notice_at = 1_549_227_256 * SECOND  # 2019-02-03T20:54:16Z
    last = notice_at - 5 * MINUTE
    outcomes = make_outcomes(
        [last - MINUTE, last, last, notice_at - MINUTE, notice_at + 30 * SECOND],
        [2, 2, 1, 1, 1],
    )
    options = InstrumentOptions(log_format="activity")
    result = instrument(outcomes, options, policy_text="p")
    [record] = result.records
    documented = json.loads(
        '{"message Time":"2/3/2019 8:54:16 PM UTC","message":"Input Partition [2] does not '
        "have additional data for more than [5] minute(s). Partition will not progress until "
        'either events arrive or late arrival threshold is met.","type":'
        '"InputPartitionNotProgressing","correlation ID":"2328d411-52c7-4100-ba01-1e860c757fc2"}'
    )
    asa_only = {k: v for k, v in record.items() if k != "orderdoc"}
    assert list(asa_only) == list(documented)
    documented["correlation ID"] = result.correlation_id
    assert asa_only == documented
    assert record["orderdoc"]["partition_id"] == 2


def test_resource_notice_record():
    arrival = [BASE_NS, BASE_NS + 3 * MINUTE, BASE_NS + 6 * MINUTE, BASE_NS + 6 * MINUTE]
    outcomes = make_outcomes(arrival, [0, 0, 1, 0])
    result = instrument(outcomes, InstrumentOptions(source="hub"), policy_text="p")
    [record] = result.records
    assert record["level"] == "Warning"
    assert record["time"] == "2024-01-01T00:05:00.0000000Z"
    assert record["properties"] == {
        "Source": "hub",
        "Type": "InputPartitionNotProgressing",
        "Message": "Input Partition [1] does not have additional data for more than [5] "
        "minute(s). Partition will not progress until either events arrive or late arrival "
        "threshold is met.",
    }
    assert record["orderdoc"]["idle_seconds"] == 300.0


@settings(max_examples=80, deadline=None)
@given(data=arrivals(), interval_s=st.sampled_from([30, 60, 300]), shuffle=st.booleans())
def test_partition_loop_and_sort_find_the_same_notices(data, interval_s, shuffle):
    """Few partitions are scanned one by one, many by one sort: same notices either way
    (also for input not in arrival order)."""
    import diagnostics.instrument.idle as idle

    arrival, partition = np.array(data[0]), np.array(data[1])
    if shuffle:
        order = np.random.default_rng(len(arrival)).permutation(len(arrival))
        arrival, partition = arrival[order], partition[order]
    interval = interval_s * SECOND
    looped = idle.idle_notices(arrival, partition, interval, (5,))
    saved, idle._LOOP_PARTITIONS = idle._LOOP_PARTITIONS, 0
    try:
        sorted_ = idle.idle_notices(arrival, partition, interval, (5,))
    finally:
        idle._LOOP_PARTITIONS = saved
    assert looped.equals(sorted_)
