"""Translating an ASA policy: the literal mapping (out-of-order tolerance → bound or delay,
late arrival tolerance → idleness), the code each target writes, and what has no equivalent."""

from __future__ import annotations

import pytest

from diagnostics.durations import MINUTE, MS, SECOND
from diagnostics.engine.policy import Action, OrderingPolicy
from diagnostics.engines import FlinkRules, SparkRules
from diagnostics.engines.translate import (
    Target,
    java_duration,
    query_window,
    spark_interval,
    sql_interval,
    translate,
)
from diagnostics.errors import UsageError

POLICY = OrderingPolicy(
    timestamp_by="event_time", late_arrival_ns=5 * SECOND, out_of_order_ns=2 * SECOND
)


def test_flink_sql_maps_the_tolerances_to_the_watermark_and_the_idle_timeout() -> None:
    t = translate(POLICY, MINUTE, Target.FLINK_SQL, source="telemetry")
    assert t.rules == FlinkRules(
        "event_time", MINUTE, out_of_orderness_ns=2 * SECOND, idleness_ns=5 * SECOND
    )
    assert "  WATERMARK FOR event_time AS event_time - INTERVAL '2' SECOND" in t.settings
    assert "SET 'table.exec.source.idle-timeout' = '5 s';" in t.settings
    assert any(
        "TUMBLE(TABLE telemetry, DESCRIPTOR(event_time), INTERVAL '60' SECOND)" in s
        for s in t.settings
    )


def test_datastream_writes_the_watermark_strategy_with_idleness() -> None:
    t = translate(POLICY, 10 * SECOND, Target.FLINK_DATASTREAM)
    text = "\n".join(t.settings)
    assert "forBoundedOutOfOrderness(Duration.ofSeconds(2))" in text
    assert ".withIdleness(Duration.ofSeconds(5));" in text
    assert "TumblingEventTimeWindows.of(Duration.ofSeconds(10))" in text


def test_spark_maps_the_out_of_order_tolerance_to_the_delay_and_has_no_idleness() -> None:
    t = translate(POLICY, MINUTE, Target.SPARK, source="telemetry", trigger_ns=500 * MS)
    assert t.rules == SparkRules(
        "event_time", MINUTE, watermark_delay_ns=2 * SECOND, trigger_ns=500 * MS
    )
    assert t.settings[0] == '(telemetry.withWatermark("event_time", "2 seconds")'
    assert '    .trigger(processingTime="500 milliseconds"))' in t.settings


def test_an_unlimited_late_tolerance_has_no_idleness() -> None:
    t = translate(OrderingPolicy(timestamp_by="ts", late_arrival_ns=None), MINUTE, Target.FLINK_SQL)
    assert isinstance(t.rules, FlinkRules)
    assert t.rules.idleness_ns is None
    assert not any("idle-timeout" in s for s in t.settings)


def test_the_features_without_equivalent_follow_the_policy() -> None:
    adjust = translate(POLICY, MINUTE, Target.SPARK).no_equivalent
    assert adjust[0].startswith("Adjust: ASA keeps late and out-of-order events")
    assert any("out-of-order buffer's reordering" in line for line in adjust)
    assert not any("independent timelines" in line for line in adjust)
    drop = OrderingPolicy(timestamp_by="ts", action=Action.DROP, partition_by=True)
    lines = translate(drop, MINUTE, Target.FLINK_SQL).no_equivalent
    assert lines[0].startswith("Drop: ASA drops each event behind its watermark")
    assert any(
        "PARTITION BY PartitionId's independent timelines: Flink merges" in line for line in lines
    )
    assert not any("reordering" in line for line in lines)  # out-of-order tolerance 0


def test_arrival_time_jobs_have_nothing_to_translate() -> None:
    with pytest.raises(UsageError, match="no TIMESTAMP BY"):
        translate(OrderingPolicy(), MINUTE, Target.SPARK)


@pytest.mark.parametrize(
    ("ns", "sql", "java", "spark"),
    [
        (0, "INTERVAL '0' SECOND", "Duration.ofSeconds(0)", "0 seconds"),
        (500 * MS, "INTERVAL '0.500' SECOND", "Duration.ofMillis(500)", "500 milliseconds"),
        (MINUTE, "INTERVAL '60' SECOND", "Duration.ofMinutes(1)", "1 minute"),
        (90 * SECOND, "INTERVAL '90' SECOND", "Duration.ofSeconds(90)", "90 seconds"),
    ],
)
def test_durations_in_each_target_syntax(ns, sql, java, spark) -> None:
    assert (sql_interval(ns), java_duration(ns), spark_interval(ns)) == (sql, java, spark)


def test_the_window_is_read_from_the_query() -> None:
    query = "SELECT device_id, COUNT(*) INTO out FROM telemetry TIMESTAMP BY ts GROUP BY device_id, TumblingWindow(minute, 1)"
    found = query_window(query, "telemetry")
    assert found is not None
    assert found.size_ns == MINUTE
    assert found.step == "out"
    assert query_window("SELECT * INTO out FROM telemetry", "telemetry") is None
    hopping = query.replace("TumblingWindow(minute, 1)", "HoppingWindow(minute, 10, 5)")
    with pytest.raises(UsageError, match="replays tumbling windows; give --window SIZE"):
        query_window(hopping, "telemetry")
