"""CtiPolicy and HoppingWindow validation; CtiViolation records and the delay advice."""

from __future__ import annotations

import json

import pytest

from diagnostics.cti import (
    INFINITY,
    CtiEngine,
    CtiOrigin,
    CtiPolicy,
    HoppingWindow,
    ImportedCti,
    suggest_cti_delay,
    suggest_from_records,
    violation_records,
)
from diagnostics.cti.events import EventOutcome
from diagnostics.cti.frames import _RESULT_SCHEMA
from diagnostics.cti.metrics import delay_per_minute
from diagnostics.errors import EngineStateError, PolicyError
from diagnostics.instrument.options import InstrumentOptions, LogFormat
from tests.cti.conftest import point, run, s


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"every_events": 0}, "not a positive number of events"),
        ({"every_ns": -1}, "not a positive duration"),
        ({"every_events": 2, "every_ns": s(1)}, "give one of them"),
        ({"every_events": 1, "delay_ns": -101}, "below -1 tick"),
        ({}, "needs generation"),
        ({"every_events": 1, "violation": "retry"}, "not one of drop, adjust"),
    ],
)
def test_invalid_policies_name_the_setting(kwargs: dict[str, object], fragment: str) -> None:
    with pytest.raises(PolicyError, match=fragment):
        CtiPolicy(**kwargs)  # type: ignore[arg-type]


def test_minus_one_tick_is_the_smallest_delay() -> None:
    assert CtiPolicy(every_events=1, delay_ns=-100).delay_ns == -100
    assert CtiPolicy(imports=True).generates is False


@pytest.mark.parametrize(
    ("size", "hop", "offset"), [(0, 0, 0), (s(5), s(10), 0), (s(10), s(5), s(5))]
)
def test_invalid_windows(size: int, hop: int, offset: int) -> None:
    with pytest.raises(PolicyError):
        HoppingWindow(size, hop, offset)


def test_engine_contract_errors() -> None:
    engine = CtiEngine([CtiPolicy(every_events=1)])
    with pytest.raises(EngineStateError, match="does not import"):
        engine.feed([ImportedCti(s(1), s(1))])
    engine.feed([point(0, 5, arrival=5)])
    with pytest.raises(EngineStateError, match="processing order"):
        engine.feed([point(1, 6, arrival=4)])
    with pytest.raises(EngineStateError, match="fed twice"):
        engine.feed([point(0, 6, arrival=6)])
    engine.close()
    with pytest.raises(EngineStateError, match="closed"):
        engine.feed([])


def late_engine() -> CtiEngine:
    """Frequency 1, delay 0: 10 s, then 4 s (lag 6 s) at 10 s, 9 s (lag 1 s) at 70 s, 8 s at 71 s."""
    events = [
        point(0, 10),
        point(1, 4, arrival=10),
        point(2, 9, arrival=70),
        point(3, 8, arrival=71),
    ]
    return run(CtiPolicy(every_events=1, violation="drop"), events)


def test_records_aggregate_per_processing_time_window() -> None:
    engine = late_engine()
    records = violation_records(engine.violations(), InstrumentOptions(job="j", source="src"))
    # 10 s falls in minute 0, 70 s and 71 s in minute 1
    assert [r["properties"]["EventCount"] for r in records] == [1, 2]
    assert sum(r["properties"]["EventCount"] for r in records) == len(engine.violations())
    second = records[1]
    assert second["resourceId"].endswith("/STREAMINGJOBS/j")
    assert second["properties"]["Source"] == "src"
    assert second["properties"]["FromTimestamp"] == "1970-01-01T00:01:10.0000000Z"
    assert second["properties"]["ToTimestamp"] == "1970-01-01T00:01:11.0000000Z"
    assert second["time"] == second["properties"]["ToTimestamp"]
    assert (
        "application timestamp '1970-01-01T00:00:09.0000000'"
        in second["properties"]["BriefMessage"]
    )
    example = json.loads(second["properties"]["ExampleEvents"])
    assert example[0]["StartTime"] == "1970-01-01T00:00:09.0000000Z"
    assert second["orderdoc"]["cti_lag_seconds"]["max"] == 2.0
    # per window: the delay that avoids that window's violations; overall: the largest
    assert [r["orderdoc"]["suggested_cti_delay_ns"] for r in records] == [s(6), s(2)]
    assert suggest_from_records(records) == s(6)
    assert suggest_cti_delay(engine.violations(), 0) == s(6)


def test_activity_form() -> None:
    options = InstrumentOptions(job="j", source="src", log_format=LogFormat.ACTIVITY)
    records = violation_records(late_engine().violations(), options)
    assert records[0]["type"] == "DiagnosticMessage"
    assert "had 1 data errors of kind 'CtiViolation'" in records[0]["message"]
    assert suggest_from_records(records) == s(6)


def test_imported_violations_do_not_move_the_suggestion() -> None:
    engine = CtiEngine([CtiPolicy(imports=True)])
    engine.feed([ImportedCti(s(10), s(1)), point(0, 5, arrival=2)])
    engine.close()
    assert [v.cti_origin for v in engine.violations()] == [CtiOrigin.IMPORTED]
    assert suggest_cti_delay(engine.violations(), s(1)) == s(1)


def test_outcome_frame_schema_follows_the_outcome_fields() -> None:
    assert list(_RESULT_SCHEMA) == list(EventOutcome._fields)


def test_watermark_delay_per_minute_is_the_supremum_of_tau_minus_cti() -> None:
    # CTI 0 s from τ = 10 s, CTI 65 s from τ = 70 s, closed at 130 s, then a flush to +inf
    steps = [(s(10), s(0)), (s(70), s(65)), (s(130), INFINITY)]
    assert delay_per_minute(steps, s(130)) == [(s(0), 60.0), (s(60), 70.0), (s(120), 65.0)]
    assert delay_per_minute([], s(130)) == []
