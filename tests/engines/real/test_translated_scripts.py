"""What ``orderdoc translate`` prints runs in the real engines and gives the windows
``orderdoc replay --rules flink|spark`` predicts (docs/engines.md, "Translating an ASA job").

The job is the portal-export sample (WITH steps, a per-device HoppingWindow(minute, 5, 1) with
AVG/MAX/COUNT, a TumblingWindow count with HAVING, a SlidingWindow step and a JOIN that are
listed as not translated); the capture is made here (tests/engines/real/translated.py): six
devices, readings arriving out of order, some without a value, one device's clock 7 minutes
fast for a while. Only the connector options are filled in (and the wall-clock timing made
deterministic, as that module says); every window each output writes is compared with the
prediction, keys, bounds and values.
"""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from diagnostics.cli import main
from diagnostics.durations import MS
from diagnostics.engines.job_plan import JobPlan, plan_job
from diagnostics.engines.policy import EngineRules
from diagnostics.engines.translate import Target, measure_window, translate
from diagnostics.engines.window_results import predicted_results
from diagnostics.jobdef import job_policy, read_job_definition
from tests.engines.real.flink_engine import flink_problem
from tests.engines.real.translated import (
    JOB,
    expected_alerts,
    fill_flink,
    flink_time,
    job_capture,
    json_line,
    run_flink_sql,
    run_pyspark,
    write_csv,
    write_reference,
)

pytestmark = pytest.mark.slow


def _printed(target: str, csv: Path, extra: list[str]) -> dict[str, Any]:
    """``translate --json`` of the sample job for ``target``, measured on ``csv``."""
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["translate", "--job-definition", str(JOB), "--to", target,
                     "--events", str(csv), "--json", *extra])  # fmt: skip
    assert code == 0
    return json.loads(out.getvalue())


def _replayed(command: str, workdir: Path) -> pl.DataFrame:
    """The outcomes of the ``orderdoc replay`` line translate printed."""
    argv = command.split()
    assert argv[:2] == ["orderdoc", "replay"]
    out = workdir / "replay"
    assert main(["replay", *(str(out) if a == "DIR" else a for a in argv[2:])]) == 0
    return pl.read_parquet(out / "outcomes.parquet").sort("event_id")


def _plan_and_rules(target: Target, csv: Path, interval_ns: int) -> tuple[JobPlan, EngineRules]:
    """The plan and rules translate used, built the same way the command builds them."""
    job = job_policy(read_job_definition(JOB), None)
    assert job.query is not None
    assert job.policy.timestamp_by is not None
    schema = dict(pl.read_csv(csv, try_parse_dates=False).schema)
    plan = plan_job(job.query.text, job.input.name, job.policy.timestamp_by, schema)
    window = measure_window(plan)
    assert window is not None
    rules = translate(job.policy, window.size_ns, target, plan=plan).rules
    if target is not Target.SPARK:
        rules = replace(rules, watermark_interval_ns=interval_ns)
    return plan, rules


def _ms(value: datetime) -> int:
    return int(value.replace(tzinfo=value.tzinfo or UTC).timestamp() * 1000)


def _predicted(frame: pl.DataFrame) -> list[tuple[Any, ...]]:
    """Rows as comparable tuples: keys, start and end (ms), values rounded."""
    rows = []
    for row in frame.iter_rows(named=True):
        rows.append(
            tuple(
                _ms(v)
                if isinstance(v, datetime)
                else round(float(v), 6)
                if isinstance(v, float | int)
                else v
                for v in row.values()
            )
        )
    return sorted(rows)


@pytest.mark.flink
def test_the_flink_sql_script_runs_in_flink_with_the_predicted_windows(tmp_path: Path) -> None:
    problem = flink_problem()
    if problem:
        pytest.skip(problem)
    capture, values = job_capture()
    csv = write_csv(capture, values, tmp_path / "capture.csv")
    data = _printed("flink-sql", csv, ["--watermark-interval", "1ms"])
    script = data["script"]
    # as printed: every identifier quoted, the watermark on the input, placeholders to fill
    assert "CREATE TABLE `telemetry-eh` (" in script
    assert "WATERMARK FOR `event_time` AS `event_time` - INTERVAL '0.001' SECOND" in script
    assert script.count("'connector' = 'FILL IN'") == 5  # input, reference, three outputs
    assert "JOIN `devices` FOR SYSTEM_TIME AS OF `r`.`event_time` AS `d`" in script
    assert (
        "HOP(TABLE `Readings`, DESCRIPTOR(`event_time`), INTERVAL '1' MINUTE, INTERVAL '5' MINUTE)"
        in script
    )
    source = tmp_path / "telemetry.json"
    source.write_text(
        "".join(json_line(e, values) + "\n" for e in capture.events), encoding="utf-8"
    )
    reference = write_reference(tmp_path / "devices.json")
    printed = run_flink_sql(fill_flink(script, source, reference), tmp_path / "flink")
    # the JOIN with the reference data: an event-time temporal join, every reading kept
    alerts = sorted((d, float(v), site, float(limit)) for d, v, site, limit in printed["alerts"])
    assert alerts == expected_alerts(capture, values)
    assert alerts
    outcomes = _replayed(data["measured"]["replay"], tmp_path)
    plan, rules = _plan_and_rules(Target.FLINK_SQL, csv, MS)
    assert int(outcomes["dropped"].sum()) > 0  # the fast clock makes events late
    for step in plan.sinks():
        assert step.into is not None
        predicted = _predicted(predicted_results(outcomes, step, rules))
        got = []
        for row in printed.get(step.into, []):
            got.append(
                tuple(
                    _ms(flink_time(v))
                    if name in ("window_start", "window_end")
                    else v
                    if column.type is not None and column.type.value == "STRING"
                    else round(float(v), 6)
                    for v, column, name in zip(
                        row, step.output, [c.name for c in step.output], strict=True
                    )
                )
            )
        assert sorted(got) == predicted, step.into
        assert predicted, step.into


def test_the_pyspark_script_runs_in_spark_with_the_predicted_windows(
    spark: object, tmp_path: Path
) -> None:
    capture, values = job_capture(seed=12)
    csv = write_csv(capture, values, tmp_path / "capture.csv")
    data = _printed("spark", csv, ["--trigger", "10s"])
    script = data["script"]
    assert "withWatermark('event_time', WATERMARK_DELAY)" in script
    outputs = run_pyspark(spark, script, capture, values, 10_000, tmp_path / "spark")
    outcomes = _replayed(data["measured"]["replay"], tmp_path)
    plan, rules = _plan_and_rules(Target.SPARK, csv, MS)
    # the JOIN with the reference data: a stream-static join, every reading kept
    alerts = sorted(
        (r["device_id"], r["value"], r["site"], r["max_value"]) for r in outputs["alerts"]
    )
    assert alerts == expected_alerts(capture, values)
    assert alerts
    assert int(outcomes["dropped"].sum()) > 0
    final_ms = max(e.event_ms for e in capture.events) - 0  # watermark delay 0 s
    from diagnostics.engines.script_spark import query_name

    for step in plan.sinks():
        assert step.into is not None
        frame = predicted_results(outcomes, step, rules)
        closed = frame.filter(pl.col("window_end").dt.epoch("ms") <= final_ms)
        predicted = _predicted(closed)
        names = [c.name for c in step.output]
        got = sorted(
            tuple(
                row["start_ms"]
                if n == "window_start"
                else row["end_ms"]
                if n == "window_end"
                else row[n]
                if isinstance(row[n], str)
                else round(float(row[n]), 6)
                for n in names
            )
            for row in outputs[query_name(step.into)]
        )
        assert got == predicted, step.into
        assert predicted, step.into
