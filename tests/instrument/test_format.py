"""Timestamp renderings, the correlation ID and the options' validation."""

from __future__ import annotations

import pytest

from diagnostics.errors import Setting, UsageError
from diagnostics.instrument import InstrumentOptions, instrument, timefmt
from diagnostics.instrument.correlation import correlation_id, input_digest

from .conftest import BASE_NS, SECOND, make_outcomes

# 2019-02-04T17:10:49.7250696Z, the documented example's first processing time.
DOC_NS = 1_549_300_249 * SECOND + 725_069_600


def test_iso_ticks_has_seven_digits():
    assert timefmt.iso_ticks(DOC_NS) == "2019-02-04T17:10:49.7250696Z"
    assert timefmt.iso_ticks_naive(DOC_NS + 99) == "2019-02-04T17:10:49.7250696"


def test_activity_formats():
    assert timefmt.activity_short(DOC_NS) == "2019-02-04 17:10:49Z"
    assert timefmt.first_occurred(DOC_NS) == "02/04/2019 17:10:49"
    assert timefmt.activity_us(1_549_227_256 * SECOND) == "2/3/2019 8:54:16 PM UTC"
    midnight = 1_549_152_000 * SECOND  # 2019-02-03T00:00:00Z
    assert timefmt.activity_us(midnight) == "2/3/2019 12:00:00 AM UTC"
    assert timefmt.activity_us(midnight + 12 * 3600 * SECOND) == "2/3/2019 12:00:00 PM UTC"


def test_correlation_id_is_deterministic_and_sensitive():
    a = make_outcomes([BASE_NS, BASE_NS + SECOND], [0, 1])
    b = make_outcomes([BASE_NS, BASE_NS + 2 * SECOND], [0, 1])
    assert input_digest(a) == input_digest(make_outcomes([BASE_NS, BASE_NS + SECOND], [0, 1]))
    assert correlation_id(input_digest(a), "late 5s") == correlation_id(input_digest(a), "late 5s")
    assert correlation_id(input_digest(a), "late 5s") != correlation_id(input_digest(a), "late 6s")
    assert correlation_id(input_digest(a), "p") != correlation_id(input_digest(b), "p")
    first = instrument(a, InstrumentOptions(), policy_text="p")
    second = instrument(a, InstrumentOptions(), policy_text="p")
    assert first.records == second.records


@pytest.mark.parametrize(
    ("field", "value", "setting"),
    [
        ("error_window_ns", 0, Setting.ERROR_WINDOW),
        ("idle_notice_ns", -1, Setting.IDLE_NOTICE),
        ("job", "", Setting.JOB),
        ("job", "a/b", Setting.JOB),
        ("source", " x", Setting.SOURCE),
    ],
)
def test_bad_options_are_rejected(field, value, setting):
    with pytest.raises(UsageError, match=f"^{setting.value} ") as caught:
        InstrumentOptions(**{field: value})
    assert caught.value.setting is setting


def test_activity_data_error_is_shaped_like_the_documented_example():
    """Same keys, same order and same message layout as the DiagnosticMessage line of docs/semantics.md, "Diagnostics ASA writes"."""
    s = SECOND
    outcomes = make_outcomes(
        [DOC_NS, DOC_NS + 59 * s],
        [0, 0],
        [DOC_NS - 298 * s, DOC_NS],
        {"late": [True, True]},
    )
    # Both processing times must share one window: ours are aligned to the epoch, and 17:10:49
    # and 17:11:48 fall in different minutes, so use five-minute windows here.
    options = InstrumentOptions(
        job="ASAjob", source="ASAjob", log_format="activity", error_window_ns=300 * s
    )
    [record] = instrument(outcomes, options, policy_text="p").records
    assert list(record) == [
        "message Time",
        "error",
        "message",
        "type",
        "correlation ID",
        "orderdoc",
    ]
    assert record["message Time"] == "2019-02-04 17:11:48Z"
    assert record["error"] is None
    assert record["type"] == "DiagnosticMessage"
    assert record["message"] == (
        "First Occurred: 02/04/2019 17:11:48 | Resource Name: ASAjob | Message: Source 'ASAjob' "
        "had 2 data errors of kind 'LateInputEvent' between processing times "
        "'2019-02-04T17:10:49.7250696Z' and '2019-02-04T17:11:48.7250696Z'. Input event with "
        "application timestamp '2019-02-04T17:05:51.7250696' and arrival time "
        "'2019-02-04T17:10:49.7250696' was sent later than configured tolerance."
    )
