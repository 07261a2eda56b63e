"""Translating an ASA job: the literal mapping (out-of-order tolerance → bound or delay, late
arrival tolerance → idleness), the query's steps as Flink SQL and PySpark, what has no
equivalent, the windows predicted under each engine's rules and the events that moved the
watermark forward. The scripts are run by the real engines in tests/engines/real."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import polars as pl
import pytest

from diagnostics.durations import MINUTE, MS, SECOND
from diagnostics.engine.policy import Action, OrderingPolicy
from diagnostics.engines import FlinkRules, SparkRules
from diagnostics.engines.job_plan import plan_job
from diagnostics.engines.pushers import watermark_pushers
from diagnostics.engines.replay import replay_rules
from diagnostics.engines.sql_text import ColumnType, java_duration, spark_interval, sql_interval
from diagnostics.engines.translate import Target, measure_window, translate
from diagnostics.engines.window_results import predicted_results
from diagnostics.errors import UsageError

POLICY = OrderingPolicy(
    timestamp_by="event_time", late_arrival_ns=5 * SECOND, out_of_order_ns=2 * SECOND
)
QUERY = """
WITH Readings AS (
    SELECT device_id, value AS v, event_time FROM [telemetry-eh] TIMESTAMP BY event_time
    WHERE value > 0 AND site = 'north'
),
Smooth AS (SELECT device_id, AVG(v) AS a FROM Readings GROUP BY device_id, SlidingWindow(minute, 2))
SELECT device_id, AVG(v) AS avg_v, MAX(v) AS max_v, COUNT(*) AS n
INTO [device-stats] FROM Readings GROUP BY device_id, HoppingWindow(minute, 5, 1)
HAVING MIN(v) > 1
SELECT COUNT(*) AS n INTO counts FROM [telemetry-eh] TIMESTAMP BY event_time
GROUP BY TumblingWindow(second, 10)
SELECT r.device_id, d.site INTO alerts FROM Readings r JOIN devices d ON r.device_id = d.device_id
SELECT device_id, COUNT(*) AS n INTO sessions FROM [telemetry-eh] TIMESTAMP BY event_time
GROUP BY device_id, SessionWindow(second, 30, 120) OVER (PARTITION BY device_id)
"""


def test_flink_sql_maps_the_tolerances_to_the_watermark_and_the_idle_timeout() -> None:
    t = translate(POLICY, MINUTE, Target.FLINK_SQL)
    assert t.rules == FlinkRules(
        "event_time", MINUTE, out_of_orderness_ns=2 * SECOND, idleness_ns=5 * SECOND
    )
    # SQL's watermark is the expression; forBoundedOutOfOrderness(2 s) is max - 2 s - 1 ms
    assert "  WATERMARK FOR `event_time` AS `event_time` - INTERVAL '2.001' SECOND" in t.script
    assert "SET 'table.exec.source.idle-timeout' = '5 s';" in t.script


def test_datastream_writes_the_watermark_strategy_with_idleness() -> None:
    t = translate(POLICY, 10 * SECOND, Target.FLINK_DATASTREAM)
    text = "\n".join(t.script)
    assert "forBoundedOutOfOrderness(Duration.ofSeconds(2))" in text
    assert ".withIdleness(Duration.ofSeconds(5));" in text
    assert "TumblingEventTimeWindows.of(Duration.ofSeconds(10))" in text


def test_spark_maps_the_out_of_order_tolerance_to_the_delay_and_has_no_idleness() -> None:
    t = translate(POLICY, MINUTE, Target.SPARK, trigger_ns=500 * MS)
    assert t.rules == SparkRules(
        "event_time", MINUTE, watermark_delay_ns=2 * SECOND, trigger_ns=500 * MS
    )
    assert 'WATERMARK_DELAY = "2 seconds"' in t.script
    assert 'TRIGGER = "500 milliseconds"' in t.script


def test_an_unlimited_late_tolerance_has_no_idleness() -> None:
    t = translate(OrderingPolicy(timestamp_by="ts", late_arrival_ns=None), MINUTE, Target.FLINK_SQL)
    assert isinstance(t.rules, FlinkRules)
    assert t.rules.idleness_ns is None
    assert not any("idle-timeout" in s for s in t.script)


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
        (MS, "INTERVAL '0.001' SECOND", "Duration.ofMillis(1)", "1 millisecond"),
        (500 * MS, "INTERVAL '0.500' SECOND", "Duration.ofMillis(500)", "500 milliseconds"),
        (MINUTE, "INTERVAL '1' MINUTE", "Duration.ofMinutes(1)", "1 minute"),
        (90 * SECOND, "INTERVAL '90' SECOND", "Duration.ofSeconds(90)", "90 seconds"),
        (141 * SECOND + MS, "INTERVAL '141.001' SECOND(3)", "Duration.ofMillis(141001)",
         "141001 milliseconds"),
        (150 * MINUTE, "INTERVAL '150' MINUTE(3)", "Duration.ofMinutes(150)", "150 minutes"),
    ],
)  # fmt: skip
def test_durations_in_each_target_syntax(ns, sql, java, spark) -> None:
    assert (sql_interval(ns), java_duration(ns), spark_interval(ns)) == (sql, java, spark)


def test_the_plan_has_views_window_steps_and_the_steps_left_out() -> None:
    plan = plan_job(QUERY, "telemetry-eh", "event_time")
    assert [v.name for v in plan.views] == ["Readings"]
    view = plan.views[0]
    assert view.columns == (
        ("device_id", "device_id"),
        ("v", "value"),
        ("event_time", "event_time"),
    )
    assert [(s.step.name, s.into, s.reads) for s in plan.steps] == [
        ("device-stats", "device-stats", "Readings"),
        ("counts", "counts", "telemetry-eh"),
        ("sessions", "sessions", "telemetry-eh"),
    ]
    stats = plan.steps[0]
    assert stats.filters == ()  # the view applies Readings' WHERE
    assert stats.column("value") == "v"
    left_out = {n.step: n.reason for n in plan.not_translated}
    # without the job's reference inputs, devices is not known as one
    assert left_out["alerts"] == "JOIN with devices, not a reference input, is not translated"
    assert left_out["Smooth"].startswith("SlidingWindow(2m) has no equivalent")
    # types: compared with a number or aggregated: DOUBLE; otherwise text; the time
    types = {c.name: c.type for c in plan.columns}
    assert types == {
        "event_time": ColumnType.TIMESTAMP,
        "device_id": ColumnType.STRING,
        "value": ColumnType.DOUBLE,
        "site": ColumnType.STRING,
    }
    # a capture's types win over the guesses
    typed = plan_job(QUERY, "telemetry-eh", "event_time", {"value": pl.Int64, "site": pl.String})
    assert {c.name: c.type for c in typed.columns}["value"] is ColumnType.BIGINT


def test_the_flink_sql_script_quotes_every_name_and_writes_each_step() -> None:
    plan = plan_job(QUERY, "telemetry-eh", "event_time")
    text = "\n".join(translate(POLICY, 10 * SECOND, Target.FLINK_SQL, plan=plan).script)
    assert "CREATE TABLE `telemetry-eh` (" in text
    assert (
        "CREATE TEMPORARY VIEW `Readings` AS\nSELECT `device_id`, `value` AS `v`, `event_time`"
        in text
    )
    assert "WHERE (`value` > 0) AND (`site` = 'north')" not in text  # one condition: AND inside
    assert "WHERE `value` > 0 AND `site` = 'north';" in text
    # HOP takes the slide before the size; AVG of whole numbers would be whole in Flink
    assert (
        "HOP(TABLE `Readings`, DESCRIPTOR(`event_time`), INTERVAL '1' MINUTE, INTERVAL '5' MINUTE)"
        in text
    )
    assert "AVG(CAST(`v` AS DOUBLE)) AS `avg_v`" in text
    assert "HAVING MIN(`v`) > 1" in text
    assert "TUMBLE(TABLE `telemetry-eh`, DESCRIPTOR(`event_time`), INTERVAL '10' SECOND)" in text
    assert (
        "SESSION(TABLE `telemetry-eh` PARTITION BY `device_id`, DESCRIPTOR(`event_time`), INTERVAL '30' SECOND)"
        in text
    )
    assert text.count("'connector' = 'FILL IN'") == 4  # the input and three outputs
    assert "EXECUTE STATEMENT SET\nBEGIN" in text
    assert text.rstrip().endswith("END;")
    assert "--   step alerts: JOIN with devices, not a reference input, is not translated" in text


def test_the_pyspark_script_is_python_with_each_step() -> None:
    plan = plan_job(QUERY, "telemetry-eh", "event_time")
    t = translate(POLICY, 10 * SECOND, Target.SPARK, plan=plan)
    text = "\n".join(t.script)
    compile(text, "translated.py", "exec")  # a script Python reads
    assert 'F.window(F.col(\'`event_time`\'), "5 minutes", "1 minute")' in text
    assert "F.session_window(F.col('`event_time`'), \"30 seconds\")" in text
    # HAVING on an aggregate the step does not select: computed, filtered on, not written
    assert "F.expr('MIN(`v`)').alias('__having_0')" in text
    assert ".where(F.expr('`__having_0` > 1'))" in text
    assert "def step_readings(frame: DataFrame) -> DataFrame:" in text
    assert any("Spark's sessions are per group key" in line for line in t.no_equivalent)


def test_the_measured_window_is_the_first_tumbling_else_the_hop() -> None:
    plan = plan_job(QUERY, "telemetry-eh", "event_time")
    found = measure_window(plan)
    assert found is not None
    assert (found.size_ns, found.step) == (10 * SECOND, "counts")
    hopping = plan_job(QUERY.split("SELECT COUNT(*)")[0], "telemetry-eh", "event_time")
    found = measure_window(hopping)
    assert found is not None
    assert (found.size_ns, found.step) == (MINUTE, "device-stats")
    assert measure_window(plan_job("SELECT * INTO o FROM i", "i", "t")) is None


T0 = datetime(2024, 1, 1, tzinfo=UTC)


def _events(rows: list[tuple[str, float, float, float]]) -> pl.DataFrame:
    """(device, event second, arrival second, value) rows as a capture."""
    return pl.DataFrame(
        {
            "device_id": [r[0] for r in rows],
            "event_time": [T0 + timedelta(seconds=r[1]) for r in rows],
            "arrival_time": [T0 + timedelta(seconds=r[2]) for r in rows],
            "value": [r[3] for r in rows],
        }
    )


def test_a_hopping_window_counts_a_late_event_in_its_windows_still_open() -> None:
    query = (
        "SELECT COUNT(*) AS n, SUM(value) AS s INTO o FROM i TIMESTAMP BY event_time "
        "GROUP BY HoppingWindow(second, 20, 10)"
    )
    plan = plan_job(query, "i", "event_time")
    rules = FlinkRules("event_time", 10 * SECOND, watermark_interval_ns=MS)
    # b (5 s) arrives after a (12 s): the watermark 11.999 has passed [-10, 10) (its end
    # 10 s - 1 ms) but not [0, 20): b counts in the second window only
    events = _events(
        [("d", 2, 2.1, 1.0), ("d", 12, 12.1, 2.0), ("d", 5, 12.2, 4.0), ("d", 31, 31.1, 8.0)]
    )
    out = replay_rules(events, rules).outcomes
    got = predicted_results(out, plan.steps[0], rules)
    rows = {
        int(r["window_start"].timestamp() - T0.timestamp()): (r["n"], r["s"])
        for r in got.iter_rows(named=True)
    }
    assert rows == {-10: (1.0, 1.0), 0: (3.0, 7.0), 10: (1.0, 2.0), 20: (1.0, 8.0), 30: (1.0, 8.0)}


def test_the_events_that_moved_the_watermark_forward_are_named() -> None:
    rules = SparkRules("event_time", 10 * SECOND, trigger_ns=SECOND)
    rows = [("good", float(s), s + 0.5, 1.0) for s in range(0, 60, 2)]
    rows.insert(5, ("fast", 10 + 420.0, 10.7, 1.0))  # 7 minutes ahead: the watermark jumps
    out = replay_rules(_events(rows), rules).outcomes
    found = watermark_pushers(out, rules)
    assert found is not None
    assert found.column == "device_id"
    assert [(s.name, s.events) for s in found.senders] == [("fast", 1)]
    # every good event after the jump is late: its window ended before the watermark
    after = sum(1 for r in rows if r[0] == "good" and r[2] > 11)
    assert found.made_late == after == found.dropped
    assert found.senders[0].most_ahead_ns == 419_300 * MS
    text = "\n".join(found.lines("Spark"))
    assert "device_id fast: 1 event up to 6m59s300ms ahead" in text
    # without the fast clock, nothing to name
    plain = replay_rules(_events([r for r in rows if r[0] == "good"]), rules).outcomes
    assert watermark_pushers(plain, rules) is None


def test_a_join_with_reference_data_is_a_temporal_join_in_flink_and_a_static_one_in_spark() -> None:
    refs = {"devices": "Microsoft.Storage/Blob"}
    plan = plan_job(QUERY, "telemetry-eh", "event_time", None, refs)
    assert "alerts" not in {n.step for n in plan.not_translated}
    (join,) = plan.joins
    assert (join.step.left, join.step.reference, join.step.keys) == (
        "Readings",
        "devices",
        (("device_id", "device_id"),),
    )
    (devices,) = plan.references
    assert [c.name for c in devices.columns] == ["device_id", "site"]
    assert devices.key == ("device_id",)
    sql = "\n".join(translate(POLICY, 10 * SECOND, Target.FLINK_SQL, plan=plan).script)
    assert "  PRIMARY KEY (`device_id`) NOT ENFORCED" in sql
    assert "  WATERMARK FOR `valid_from` AS `valid_from`," in sql
    assert (
        "JOIN `devices` FOR SYSTEM_TIME AS OF `r`.`event_time` AS `d`\n  ON `r`.`device_id` = `d`.`device_id`;"
        in sql
    )
    spark = "\n".join(translate(POLICY, 10 * SECOND, Target.SPARK, plan=plan).script)
    compile(spark, "translated.py", "exec")
    assert "reference_devices = read_reference(spark, 'devices')" in spark
    assert (
        ".join(reference_devices.alias('d'), F.expr('`r`.`device_id` = `d`.`device_id`'), \"inner\")"
        in spark
    )
    # a join with another stream, or without an equality of the two sides, stays out
    other = QUERY.replace(
        "JOIN devices d ON r.device_id = d.device_id", "JOIN devices d ON r.v > d.max_v"
    )
    plan = plan_job(other, "telemetry-eh", "event_time", None, refs)
    reasons = {n.step: n.reason for n in plan.not_translated}
    assert reasons["alerts"].startswith("JOIN ... ON without an equality of the two sides' columns")
    plan = plan_job(QUERY, "telemetry-eh", "event_time", None, {"other": None})
    assert {n.step: n.reason for n in plan.not_translated}["alerts"] == (
        "JOIN with devices, not a reference input, is not translated"
    )


def test_odd_names_stay_valid_in_both_scripts() -> None:
    query = (
        "WITH class AS (SELECT device_id, value, ts FROM [in-put] TIMESTAMP BY ts),\n"
        "[1st] AS (SELECT * FROM [in-put] TIMESTAMP BY ts WHERE value > 0)\n"
        "SELECT device_id, SUM(value) AS s INTO [o-1] FROM class "
        "GROUP BY device_id, TumblingWindow(second, 10)\n"
        "SELECT COUNT(*) INTO [o-2] FROM [1st] GROUP BY TumblingWindow(second, 10)"
    )
    plan = plan_job(query, "in-put", "ts")
    policy = OrderingPolicy(timestamp_by="ts")
    spark = translate(policy, 10 * SECOND, Target.SPARK, plan=plan).script
    compile("\n".join(spark), "translated.py", "exec")
    assert "    view_class = step_class(events)" in spark
    assert "        write(step_o_1(view_class), 'o-1', 'o_1')," in spark
    sql = "\n".join(translate(policy, 10 * SECOND, Target.FLINK_SQL, plan=plan).script)
    assert "CREATE TEMPORARY VIEW `1st` AS\nSELECT *\nFROM `in-put`\nWHERE `value` > 0;" in sql
    # an aggregate written without a name gets one a table can hold
    assert "COUNT(*) AS `count_all`" in sql
