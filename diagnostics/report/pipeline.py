"""The demo pipeline: generate → replay → aggregate → explain → alerts → what-if, per scenario.

Everything goes through the library functions the commands use (the generator, the capture
reader, the engine's replay and the instrumented outputs, the aggregation,
:func:`diagnostics.explain.explain`, the rules pack, :func:`diagnostics.whatif.recommend.recommend`), with
the settings of the bundled samples
(``sample_logs/scenarios``: 2000 events, 4 partitions, 30 minutes, seed 7, ASA's default
policy), so the demo's captures equal the bundled ones byte for byte.

Layout of ``OUT``: ``<scenario>/capture.csv``, ``<scenario>/replay/`` (outcomes,
diagnostics.jsonl, metrics.parquet), ``<scenario>/agg/`` (the aggregate folder the app
opens), ``<scenario>/explain.json``, ``<scenario>/alerts.jsonl``, ``<scenario>/whatif/``,
``<scenario>/fix/`` (the corrected job definition from ``sample_logs/jobs``, as
``orderdoc explain --job-definition ... --write-fix`` writes it).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from diagnostics.aggregates import write_tables
from diagnostics.captures.reader import Capture, read_capture
from diagnostics.durations import MS, parse_duration
from diagnostics.engine.outcomes_files import OUTCOMES_FILE, outcomes_in, read_outcomes
from diagnostics.engine.policy import OrderingPolicy
from diagnostics.engine.replay import ReplayResult, declared_partitions, replay
from diagnostics.explain import Report, explain
from diagnostics.generate import GenerateConfig, Scenario, generate, write_capture
from diagnostics.instrument import InstrumentOptions
from diagnostics.instrument.outputs import write_outputs as write_replay_outputs
from diagnostics.jobdef import job_policy, read_job_definition
from diagnostics.jobdef.job import name_the_input
from diagnostics.jobdef.roundtrip import RoundTrip, fix_and_verify
from diagnostics.logs.aggregate import aggregate_files
from diagnostics.logs.inputs import InputFiles, expand_inputs
from diagnostics.resources import samples_dir
from diagnostics.whatif import SweepResult, write_outputs
from diagnostics.whatif.evaluate import Evaluator, evaluate_locally
from diagnostics.whatif.recommend import recommend

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from diagnostics.spark.session import SparkTarget

EVENTS, PARTITIONS, DURATION, SEED, SOURCE = 2_000, 4, "30m", 7, "telemetry"
POLICY = OrderingPolicy(timestamp_by="event_time")
Say = Callable[[str], None]

#: Top causes a tolerance or OVER fixes: the demo measures them with the what-if search.
TUNED_BY_TOLERANCES = ("late_arrivals", "out_of_order", "batching_senders", "slow_clocks")


@dataclass(frozen=True)
class ScenarioRun:
    """What the demo produced for one scenario."""

    scenario: str
    folder: Path
    agg_dir: Path
    logs_report: Report
    report: Report
    alerts: list[dict[str, Any]]
    whatif: SweepResult | None
    outcomes: pl.DataFrame
    fix: RoundTrip | None = None


def write_capture_file(scenario: str, capture: Path) -> pl.DataFrame:
    """Generate ``scenario`` with the demo's settings and write it to ``capture``."""
    config = GenerateConfig(
        events=EVENTS,
        partitions=PARTITIONS,
        duration_ms=parse_duration(DURATION) // MS,
        seed=SEED,
    )
    frame = generate(scenario, config)
    write_capture(frame, capture)
    return frame


def replay_capture(source: Capture, out: Path, job: str) -> ReplayResult:
    """Replay ``source`` under :data:`POLICY` on :data:`PARTITIONS` partitions and write
    ``outcomes.parquet``, ``diagnostics.jsonl`` and ``metrics.parquet`` into ``out``."""
    events, policy = source.apply(POLICY)
    result = replay(
        events, policy, partitions=declared_partitions(PARTITIONS), columns=source.columns
    )
    out.mkdir(parents=True, exist_ok=True)
    result.outcomes.write_parquet(out / OUTCOMES_FILE, compression="snappy")
    write_replay_outputs(result, out, InstrumentOptions(job=job, source=SOURCE))
    return result


def write_agg_dir(
    logs: Sequence[str | Path],
    metrics: Sequence[str | Path],
    out: Path,
    skipped: Sequence[str] = (),
) -> dict[str, Any]:
    """Aggregate with the polars reference (the same tables as the Spark job) into ``out``;
    ``skipped``: the files the input expansion left out, listed in the summary."""
    tables = aggregate_files(logs, metrics, skipped=skipped)
    write_tables(tables, out)
    return tables.summary


def _aggregate_spark(spark: SparkSession, files: InputFiles, out: Path, say: Say) -> None:
    from diagnostics.spark.job import run_aggregate

    run_aggregate(spark, files, out, progress=lambda message: say(f"  spark: {message}"))


def job_definition_for(scenario: str, jobs_dir: Path | None = None) -> Path | None:
    """The bundled ``sample_logs/jobs/<scenario>.<shape>.json``, if there is one."""
    if jobs_dir is None:
        samples = samples_dir()
        if samples is None:
            return None
        jobs_dir = samples / "jobs"
    found = sorted(
        p for p in jobs_dir.glob(f"{scenario}.*.json") if not p.name.endswith(".parameters.json")
    )
    return found[0] if found else None


def _alerts(agg_dir: Path) -> list[dict[str, Any]]:
    from diagnostics.rules import default_rules_dir, evaluate, load_rules

    rules = load_rules([default_rules_dir()])
    return [alert.to_dict() for alert in evaluate(rules, agg_dir)]


def run_scenario(
    scenario: str, out: Path, *, spark: SparkSession | None = None, say: Say = print
) -> ScenarioRun:
    """The whole pipeline for one scenario under ``out/<scenario>``; with ``spark``, the
    replay, the aggregation and the recommender's settings run on it
    (:mod:`diagnostics.report.spark_demo`)."""
    evaluator: Evaluator = evaluate_locally
    if spark is None:
        return _run_scenario(scenario, out, None, evaluator, say)
    from diagnostics.spark.whatif import SparkEvaluator

    spark_evaluator = SparkEvaluator(spark, out)
    try:
        return _run_scenario(scenario, out, spark, spark_evaluator, say)
    finally:
        spark_evaluator.close()


def _run_scenario(
    scenario: str, out: Path, spark: SparkSession | None, evaluator: Evaluator, say: Say
) -> ScenarioRun:
    folder = out / scenario
    folder.mkdir(parents=True, exist_ok=True)
    capture = folder / "capture.csv"
    say(f"[{scenario}] generate -> {capture}")
    write_capture_file(scenario, capture)
    replay_dir = folder / "replay"
    say(f"[{scenario}] replay (TIMESTAMP BY event_time, late 5s, out-of-order 0s, adjust)")
    read = read_capture(capture)  # the reader every command uses (renames, column detection)
    job_name = f"sample-{scenario.replace('_', '-')}"
    replayed = None
    if spark is None:
        replay_capture(read, replay_dir, job_name)
    else:
        from diagnostics.report.spark_demo import replay_on_spark

        say(f"[{scenario}] replay on Spark -> {replay_dir}")
        (replay_dir / OUTCOMES_FILE).unlink(missing_ok=True)  # would hide outcomes/
        options = InstrumentOptions(job=job_name, source=SOURCE)
        replayed = replay_on_spark(
            spark, read, POLICY, PARTITIONS, folder, replay_dir, options, say
        )
    agg_dir = folder / "agg"
    # both producers read the same expansion of the replay's files (and list what it skips)
    files = expand_inputs(
        [str(replay_dir / "diagnostics.jsonl"), str(replay_dir / "metrics.parquet")]
    )
    say(f"[{scenario}] aggregate ({'Spark' if spark else 'polars reference'}) -> {agg_dir}")
    if spark is not None:
        _aggregate_spark(spark, files, agg_dir, say)
    else:
        write_agg_dir(files.logs, files.metrics, agg_dir, skipped=files.skipped)
    events, policy = read.apply(POLICY)
    partitions = tuple(range(PARTITIONS))
    say(f"[{scenario}] explain (logs only, then with the capture)")
    logs_report = explain(agg_dir, policy=POLICY)
    report = explain(
        agg_dir,
        events=events,
        policy=policy,
        columns=read.columns,
        partitions=partitions,
        replayed=replayed,
        evaluator=evaluator,
    )
    definition = job_definition_for(scenario)
    job = job_policy(read_job_definition(definition)) if definition is not None else None
    if job is not None:  # the suggestions name the job's input (FROM telemetry ...)
        logs_report = replace(
            logs_report, findings=name_the_input(logs_report.findings, job.input.name)
        )
        report = replace(report, findings=name_the_input(report.findings, job.input.name))
    (folder / "explain.json").write_text(json.dumps(report.to_dict(), indent=2, default=str) + "\n")
    say(f"[{scenario}] alerts")
    alerts = _alerts(agg_dir)
    with (folder / "alerts.jsonl").open("w", encoding="utf-8") as handle:
        handle.writelines(json.dumps(a, default=str) + "\n" for a in alerts)
    whatif = None
    if report.top is not None and report.top.cause.value in TUNED_BY_TOLERANCES:
        say(f"[{scenario}] what-if: the recommender's search")
        whatif = recommend(
            events, policy, columns=read.columns, partitions=partitions, evaluator=evaluator
        ).as_sweep()
        write_outputs(whatif, folder / "whatif", png=False)
    outcomes = read_outcomes(outcomes_in(replay_dir) or replay_dir / OUTCOMES_FILE)
    fix = None
    if definition is not None and job is not None:
        say(f"[{scenario}] fix the job definition {definition.name} -> {folder / 'fix'}")
        fix = fix_and_verify(
            job, report.findings, folder / "fix", current=read.apply(job.policy)[1],
            events=read, partitions=partitions,
        )  # fmt: skip
    return ScenarioRun(
        scenario, folder, agg_dir, logs_report, report, alerts, whatif, outcomes, fix
    )


def run_demo(
    out: Path,
    scenarios: Sequence[str] | None = None,
    *,
    spark: SparkTarget | None = None,
    say: Say = print,
) -> list[ScenarioRun]:
    """Run every scenario (default: all seven, in the order the generator lists them); with
    ``spark``, on one session on that target (stopped at the end if this started it)."""
    chosen = list(scenarios) if scenarios else [s.value for s in Scenario]
    if spark is None:
        return [run_scenario(name, out, say=say) for name in chosen]
    from diagnostics.spark.session import spark_session

    with spark_session(spark) as session:
        return [run_scenario(name, out, spark=session, say=say) for name in chosen]
