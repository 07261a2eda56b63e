"""The rule sets are validated when built: whole milliseconds, ranges, named settings."""

from __future__ import annotations

import pytest

from diagnostics.durations import MS, SECOND
from diagnostics.engines import FlinkRules, SparkRules, WatermarkPolicy
from diagnostics.engines.policy import FlinkVersion
from diagnostics.errors import PolicyError, Setting


@pytest.mark.parametrize(
    ("field", "value", "setting", "text"),
    [
        ("window_ns", 0, Setting.WINDOW, "window size 0s is out of range: it must be more than 0s"),
        ("window_ns", 1500, Setting.WINDOW, "not whole milliseconds"),
        ("out_of_orderness_ns", -MS, Setting.OUT_OF_ORDERNESS, "0s or more"),
        ("idleness_ns", 0, Setting.IDLENESS, "more than 0s"),
        ("allowed_lateness_ns", -SECOND, Setting.ALLOWED_LATENESS, "0s or more"),
        ("watermark_interval_ns", 0, Setting.WATERMARK_INTERVAL, "more than 0s"),
    ],
)
def test_flink_rules_reject_bad_values(field, value, setting, text) -> None:
    values = {"window_ns": 10 * SECOND, field: value}
    with pytest.raises(PolicyError, match=text) as caught:
        FlinkRules("ts", **values)
    assert caught.value.setting is setting


def test_spark_rules_accept_a_zero_trigger_and_read_the_policy_name() -> None:
    rules = SparkRules("ts", 10 * SECOND, trigger_ns=0, watermark_policy="max")  # type: ignore[arg-type]
    assert rules.watermark_policy is WatermarkPolicy.MAX
    assert rules.describe() == (
        "Spark: withWatermark(ts, 0s), tumbling 10s window, back-to-back micro-batches"
    )
    with pytest.raises(PolicyError, match="Spark watermark delay 1ms500us is not whole"):
        SparkRules("ts", 10 * SECOND, watermark_delay_ns=1_500_000)


def test_flink_rules_describe_themselves_in_flink_terms() -> None:
    rules = FlinkRules("ts", 10 * SECOND, out_of_orderness_ns=2 * SECOND, idleness_ns=60 * SECOND)
    assert rules.describe() == (
        "Flink 2.2: event time ts, forBoundedOutOfOrderness(2s), withIdleness(1m), tumbling 10s "
        "window, allowedLateness(0s), watermark every 200ms"
    )
    older = FlinkRules("ts", 10 * SECOND, version="2.1")  # type: ignore[arg-type]
    assert older.version is FlinkVersion.V2_1
    assert older.describe().startswith("Flink 2.1: event time ts, ")
