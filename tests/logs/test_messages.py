"""Golden tests: the messages of docs/semantics.md, "Diagnostics ASA writes", verbatim, and the time forms seen in exports."""

from __future__ import annotations

import datetime as dt

import pytest

from diagnostics.logs import messages
from diagnostics.logs.times import parse_log_time, to_micros

UTC = dt.UTC
ACTIVITY = (
    "First Occurred: 02/04/2019 17:11:48 | Resource Name: ASAjob | Message: Source 'ASAjob' had "
    "24 data errors of kind 'LateInputEvent' between processing times "
    "'2019-02-04T17:10:49.7250696Z' and '2019-02-04T17:11:48.7563961Z'. Input event with "
    "application timestamp '2019-02-04T17:05:51.6050000' and arrival time "
    "'2019-02-04T17:10:44.3090000' was sent later than configured tolerance."
)
IDLE = (
    "Input Partition [2] does not have additional data for more than [5] minute(s). "
    "Partition will not progress until either events arrive or late arrival threshold is met."
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2019-02-04T17:10:49.7250696Z", dt.datetime(2019, 2, 4, 17, 10, 49, 725069, UTC)),
        ("2019-02-04T17:05:51.6050000", dt.datetime(2019, 2, 4, 17, 5, 51, 605000, UTC)),
        ("2019-02-04 17:11:52Z", dt.datetime(2019, 2, 4, 17, 11, 52, tzinfo=UTC)),
        ("2/3/2019 8:54:16 PM UTC", dt.datetime(2019, 2, 3, 20, 54, 16, tzinfo=UTC)),
        ("2/3/2019 12:04:16 AM UTC", dt.datetime(2019, 2, 3, 0, 4, 16, tzinfo=UTC)),
        ("02/04/2019 17:11:48", dt.datetime(2019, 2, 4, 17, 11, 48, tzinfo=UTC)),
        ("3/6/2024, 8:05:00.250 AM", dt.datetime(2024, 3, 6, 8, 5, 0, 250000, UTC)),
        ("2024-03-06T10:00:00+02:00", dt.datetime(2024, 3, 6, 8, 0, tzinfo=UTC)),
    ],
)
def test_time_forms(text: str, expected: dt.datetime) -> None:
    assert parse_log_time(text) == expected


@pytest.mark.parametrize("text", ["", "yesterday", "2019-13-01T00:00:00Z", "13/45/2019 1:00:00", 5])
def test_bad_times_are_none(text: object) -> None:
    assert parse_log_time(text) is None


def test_to_micros_is_epoch_based() -> None:
    assert to_micros(dt.datetime(1970, 1, 1, 0, 0, 1, 5, UTC)) == 1_000_005


def test_documented_activity_message() -> None:
    agg = messages.parse_aggregate(ACTIVITY)
    assert agg == messages.AggregateText(
        source="ASAjob",
        count=24,
        kind="LateInputEvent",
        from_time=dt.datetime(2019, 2, 4, 17, 10, 49, 725069, UTC),
        to_time=dt.datetime(2019, 2, 4, 17, 11, 48, 756396, UTC),
    )
    example = messages.parse_example(ACTIVITY)
    assert example is not None
    assert example.application_time == dt.datetime(2019, 2, 4, 17, 5, 51, 605000, UTC)
    assert example.arrival_time == dt.datetime(2019, 2, 4, 17, 10, 44, 309000, UTC)
    assert example.lateness_seconds == pytest.approx(292.704)
    assert messages.parse_resource_name(ACTIVITY) == "ASAjob"
    assert messages.parse_first_occurred(ACTIVITY) == dt.datetime(
        2019, 2, 4, 17, 11, 48, tzinfo=UTC
    )


def test_early_brief_message_gives_negative_lateness() -> None:
    text = (
        "Input event arrival time '2024-03-05T10:02:00.5000000' is earlier than input event "
        "application timestamp '2024-03-05T10:09:30.5000000' by more than 5 minutes."
    )
    example = messages.parse_example(text)
    assert example is not None
    assert example.lateness_seconds == -450.0


def test_idle_message() -> None:
    assert messages.parse_idle(IDLE) == messages.IdleText(partition_id=2, minutes=5)
    assert messages.parse_idle("Out of order event(s) received.") is None
