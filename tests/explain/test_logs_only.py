"""Explain from logs and metrics alone: the tolerances given apply, counts without example
events say how to size a tolerance, unknown kinds and jobs are named, sources and the time
range are those of the folder, and counts read in the singular or plural."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from diagnostics.durations import SECOND
from diagnostics.engine.policy import Action, OrderingPolicy
from diagnostics.errors import Setting, UsageError
from diagnostics.explain import Cause, SuggestionKind, explain
from diagnostics.explain.causes_data import unknown_data_errors
from diagnostics.explain.causes_order import out_of_order
from diagnostics.explain.causes_time import late_arrivals
from diagnostics.explain.evidence import Evidence, from_agg_dir
from diagnostics.explain.kind_stats import KindStats
from diagnostics.explain.readable import impact_sentence
from diagnostics.kinds import ErrorKind, Severity
from diagnostics.report.pipeline import write_agg_dir
from diagnostics.words import plural, verb

REAL = Path(__file__).resolve().parents[2] / "sample_logs" / "asa-real"


def test_plural_and_verb() -> None:
    assert plural(1, "event") == "1 event"
    assert plural(1234, "event") == "1,234 events"
    assert plural(0, "event") == "0 events"
    assert plural(2, "event", minimum=True) == "at least 2 events"
    assert plural(1.0, "minute") == "1 minute"
    assert plural(1, "result row", "result rows") == "1 result row"
    assert (verb(1, "was", "were"), verb(3, "was", "were")) == ("was", "were")
    assert impact_sentence({"events_affected": 1, "delay_seconds": 0.0, "lost": True}) == (
        "1 event lost."
    )


def test_metrics_alone_are_the_only_source_and_give_the_time_range(tmp_path: Path) -> None:
    write_agg_dir([], [REAL / "az-monitor-metrics.json"], tmp_path / "agg")
    evidence = from_agg_dir(tmp_path / "agg")
    assert evidence.sources == ("metrics",)
    # the minutes 17:04 .. 17:06 of the export: from the first one's start to the last one's end
    assert evidence.time_range == {
        "from": "2019-02-04T17:04:00.000000Z",
        "to": "2019-02-04T17:07:00.000000Z",
    }
    assert explain(tmp_path / "agg").sources == ("metrics",)


def test_logs_keep_the_summary_time_range(tmp_path: Path) -> None:
    write_agg_dir([REAL / "PT1H.json"], [REAL / "az-monitor-metrics.json"], tmp_path / "agg")
    evidence = from_agg_dir(tmp_path / "agg")
    assert evidence.sources == ("logs", "metrics")
    assert evidence.time_range["from"] is not None
    assert evidence.time_range["from"] != "2019-02-04T17:04:00.000000Z"  # not the metrics'


def test_an_unknown_job_is_a_usage_error_about_the_job_setting(tmp_path: Path) -> None:
    write_agg_dir([], [REAL / "az-monitor-metrics.json"], tmp_path / "agg")
    with pytest.raises(UsageError) as caught:
        explain(tmp_path / "agg", job="nosuch")
    assert caught.value.setting is Setting.JOB
    assert str(caught.value) == (
        f"job name 'nosuch' is not in the aggregate folder {tmp_path / 'agg'}; "
        "its jobs: MYSTREAMINGJOB"
    )
    assert explain(tmp_path / "agg", job="mystreamingjob").findings[0].job == "MYSTREAMINGJOB"


def _logs(policy: OrderingPolicy | None = None, **kinds: KindStats) -> Evidence:
    return Evidence(sources=("logs",), policy=policy, kinds=kinds)


def test_late_events_without_an_example_suggest_measuring_first() -> None:
    found = late_arrivals(_logs(LateInputEvent=KindStats(events=21, records=3)))
    assert found is not None
    assert [s.kind for s in found.suggestions] == [SuggestionKind.MEASURE_LATENESS]
    assert found.evidence["lateness"]["from"].startswith("not measured")
    assert "fix_adds_release_delay_seconds" not in found.impact
    assert "no tolerance can be sized from them" in found.explanation
    assert impact_sentence(found.impact) == "21 events adjusted or dropped."
    with_column = late_arrivals(
        _logs(OrderingPolicy(timestamp_by="ts"), LateInputEvent=KindStats(events=2))
    )
    assert with_column is not None
    (measure,) = with_column.suggestions
    # the library says what to do and names the settings; the command line adds their flags
    assert "explain it with the capture and its TIMESTAMP BY column (ts), which" in measure.snippet
    assert "--" not in measure.snippet
    assert measure.settings == (Setting.CAPTURE, Setting.TIMESTAMP_BY)


def test_the_given_tolerances_shape_the_logs_findings() -> None:
    late = KindStats(
        events=5, records=1, lateness=np.array([20.0]), weights=np.array([5.0]), exact=False
    )
    policy = OrderingPolicy(late_arrival_ns=10 * SECOND, out_of_order_ns=30 * SECOND)
    found = late_arrivals(_logs(policy, LateInputEvent=late))
    assert found is not None
    assert found.title == "5 events arrived later than the late-arrival tolerance (10 s)"
    # from logs the tolerance is an estimate: the 20 s example plus a 25 % margin, 25 s; the
    # out-of-order tolerance (30 s) already covers it: not suggested again
    assert [s.kind for s in found.suggestions] == [SuggestionKind.LATE_ARRIVAL_TOLERANCE]
    assert found.suggestions[0].value_seconds == 25
    assert found.impact["fix_adds_release_delay_seconds"] == 15
    disorder = out_of_order(_logs(policy, OutOfOrderEvent=KindStats(events=1)))
    assert disorder is not None
    assert disorder.title == "1 event was out of order beyond the out-of-order tolerance"
    assert disorder.evidence["current_out_of_order_tolerance_seconds"] == 30
    # 30 s ≥ the late tolerance (10 s), the most an out-of-order tolerance does: measure
    assert [s.kind for s in disorder.suggestions] == [SuggestionKind.MEASURE_LATENESS]
    dropping = OrderingPolicy(action=Action.DROP)
    evidence = Evidence(
        sources=("logs",),
        policy=dropping,
        total_events=1000,
        kinds={ErrorKind.LATE.value: KindStats(events=20)},
    )
    found = late_arrivals(evidence)
    assert found is not None
    assert found.severity is Severity.CRITICAL  # 2 % dropped


def test_an_unknown_kind_is_named_with_its_count() -> None:
    found = unknown_data_errors(
        _logs(
            **{
                "SomeNewKind.Foo": KindStats(events=7, records=2, sources={"eh": 7}),
                "Other": KindStats(events=1, records=1, unknown_counts=1),
            }
        )
    )
    assert found is not None
    assert found.cause is Cause.UNKNOWN_DATA_ERRORS
    assert found.severity is Severity.WARNING
    assert found.title == (
        "at least 8 events of a data-error kind orderdoc does not know: "
        "Other (at least 1 event), SomeNewKind.Foo (7 events)"
    )
    assert found.impact["fate_unknown"] is True
    assert impact_sentence(found.impact) == "At least 8 events reported, fate unknown."
    assert found.suggestions[0].kind is SuggestionKind.INSPECT_RECORDS
    assert unknown_data_errors(_logs(LateInputEvent=KindStats(events=3))) is None


def test_from_logs_the_out_of_order_finding_says_the_late_findings_tolerance() -> None:
    """Late and out-of-order records together: the out-of-order tolerance sized from the late
    tolerance is the one the late arrivals' finding raises it to (one value, as --write-fix
    writes it), not the job's current late tolerance."""
    late = KindStats(
        events=8, records=2, lateness=np.array([40.0, 96.0]), weights=np.array([4.0, 4.0])
    )
    evidence = _logs(
        OrderingPolicy(late_arrival_ns=5 * SECOND),
        LateInputEvent=late,
        OutOfOrderEvent=KindStats(events=3, records=1),
    )
    found = late_arrivals(evidence)
    disorder = out_of_order(evidence)
    assert found is not None
    assert disorder is not None
    raised = {s.kind: s.value_seconds for s in found.suggestions}
    said = {s.kind: s.value_seconds for s in disorder.suggestions}
    assert raised[SuggestionKind.LATE_ARRIVAL_TOLERANCE] == 120  # 96 s + 25 %
    for kind in (SuggestionKind.LATE_ARRIVAL_TOLERANCE, SuggestionKind.OUT_OF_ORDER_TOLERANCE):
        assert said[kind] == raised[SuggestionKind.LATE_ARRIVAL_TOLERANCE]
    # the same fix, the same added delay (120 s from the job's 5 s)
    added = found.impact["fix_adds_release_delay_seconds"]
    assert added == 120 - 5
    assert disorder.impact["fix_adds_release_delay_seconds"] == added
