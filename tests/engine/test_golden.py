"""Golden tests: every worked example of docs/semantics.md, "Worked examples", row by row."""

from __future__ import annotations

import pytest

from diagnostics.durations import parse_duration
from diagnostics.engine.policy import Action, OrderingPolicy
from diagnostics.engine.replay import replay

from .conftest import capture, clock


def policy(late: str, ooo: str, **kw) -> OrderingPolicy:
    return OrderingPolicy(
        timestamp_by="ts",
        late_arrival_ns=parse_duration(late),
        out_of_order_ns=parse_duration(ooo),
        action=Action.ADJUST,
        **kw,
    )


EXAMPLE_A = [
    # application, arrival, System.Timestamp, late, out of order beyond tolerance, reordered
    ("00:00:00", "00:10:01", "00:00:01", True, False, False),
    ("00:00:01", "00:10:01", "00:00:01", False, False, False),
    ("00:10:00", "00:10:02", "00:10:00", False, False, False),
    ("00:09:00", "00:10:03", "00:09:00", False, False, True),
    ("00:06:00", "00:10:04", "00:07:00", False, True, False),
]


@pytest.mark.parametrize("batch_size", [1, 2, 5])
def test_example_a_late_10min_ooo_3min(batch_size: int) -> None:
    events = capture([(r[0], r[1]) for r in EXAMPLE_A])
    out = replay(events, policy("10m", "3m"), batch_size=batch_size).outcomes
    assert clock(out["system_timestamp"]) == [r[2] for r in EXAMPLE_A]
    assert out["late"].to_list() == [r[3] for r in EXAMPLE_A]
    assert out["out_of_order"].to_list() == [r[4] for r in EXAMPLE_A]
    assert out["reordered"].to_list() == [r[5] for r in EXAMPLE_A]
    assert not out["dropped"].any()
    assert out["status"].to_list() == ["adjusted", "accepted", "accepted", "accepted", "adjusted"]


EXAMPLE_B = [
    # application, arrival, System.Timestamp, released at
    ("00:10:00", "00:10:40", "00:10:25", "00:10:40"),
    ("00:10:30", "00:10:41", "00:10:30", "00:10:42"),
    ("00:10:42", "00:10:42", "00:10:42", "00:10:57"),
    ("00:10:38", "00:10:43", "00:10:38", "00:10:53"),
    ("00:10:35", "00:10:45", "00:10:37", "00:10:45"),
]


@pytest.mark.parametrize("batch_size", [1, 2, 3, 5])
def test_example_b_release_times_and_output_order(batch_size: int) -> None:
    events = capture([(r[0], r[1]) for r in EXAMPLE_B])
    out = replay(events, policy("15s", "5s"), batch_size=batch_size).outcomes
    assert clock(out["system_timestamp"]) == [r[2] for r in EXAMPLE_B]
    assert clock(out["release_time"]) == [r[3] for r in EXAMPLE_B]
    assert out["late"].to_list() == [True, False, False, False, False]
    assert out["out_of_order"].to_list() == [False, False, False, False, True]
    # "Output order 1, 2, 5, 4, 3": event numbers sorted by output rank.
    by_rank = out.sort("output_rank")["event_id"].to_list()
    assert [i + 1 for i in by_rank] == [1, 2, 5, 4, 3]


EXAMPLE_C = [
    # application, arrival, device, C1, C2 (no early policy), C3 (OVER device)
    ("12:07", "12:07", "d1", "12:07", "12:07", "12:07"),
    ("12:08", "12:08", "d2", "12:08", "12:08", "12:08"),
    ("12:17", "12:11", "d1", None, "12:17", None),
    ("12:08", "12:13", "d3", "12:08", "12:15", "12:08"),
    ("12:19", "12:16", "d1", "12:19", "12:19", "12:19"),
    ("12:12", "12:17", "d3", "12:17", "12:17", "12:12"),
    ("12:17", "12:18", "d2", "12:17", "12:17", "12:17"),
    ("12:20", "12:19", "d2", "12:20", "12:20", "12:20"),
    ("12:16", "12:21", "d3", "12:18", "12:18", "12:16"),
    ("12:23", "12:22", "d2", "12:23", "12:23", "12:23"),
    ("12:22", "12:24", "d2", "12:22", "12:22", "12:22"),
    ("12:21", "12:27", "d3", "12:22", "12:22", "12:22"),
]


def _c_events():
    return capture([r[:3] for r in EXAMPLE_C], names=("ts", "arrival_time", "device"))


def _hhmm(values) -> list[str | None]:
    return [None if v is None else v[:5] for v in clock(values)]


@pytest.mark.parametrize(
    ("column", "kw"),
    [
        (3, {}),
        (4, {"early_policy": False}),
        (5, {"over": ("device",)}),
    ],
    ids=["C1-as-configured", "C2-no-early-policy", "C3-over-device"],
)
@pytest.mark.parametrize("batch_size", [1, 4, 12])
def test_example_c(column: int, kw: dict, batch_size: int) -> None:
    out = replay(_c_events(), policy("5m", "2m", **kw), batch_size=batch_size).outcomes
    assert _hhmm(out["system_timestamp"]) == [r[column] for r in EXAMPLE_C]
    expected_dropped = [r[column] is None for r in EXAMPLE_C]
    assert out["dropped"].to_list() == expected_dropped
    assert out["early"].to_list() == [
        kw.get("early_policy", True) and i == 2 for i in range(len(EXAMPLE_C))
    ]
    assert out["late"].to_list() == [i == 11 for i in range(len(EXAMPLE_C))]


def test_example_c_out_of_order_flags() -> None:
    c1 = replay(_c_events(), policy("5m", "2m")).outcomes
    assert [i + 1 for i in c1.filter("out_of_order")["event_id"].to_list()] == [6, 9]
    c2 = replay(_c_events(), policy("5m", "2m", early_policy=False)).outcomes
    assert [i + 1 for i in c2.filter("out_of_order")["event_id"].to_list()] == [4, 6, 9]
    c3 = replay(_c_events(), policy("5m", "2m", over=("device",))).outcomes
    assert not c3["out_of_order"].any()
    assert c3["timeline"].n_unique() == 3
