"""Rebuild ``sample_logs/scenarios/`` and ``sample_logs/captures/``: for each scenario a small capture, its replay under ASA's
default policy (``TIMESTAMP BY event_time``, late 5 s, out-of-order 0 s, Adjust) and the
engine's diagnostics and metrics, plus the README saying what a correct analysis finds.

Usage: ``.venv/bin/python scripts/make_samples.py [--out sample_logs/scenarios]``. Everything is
made through the ``orderdoc`` command line, so the files are exactly what users get; the
output is deterministic (re-running changes no byte).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import shutil
from collections import Counter
from pathlib import Path

import polars as pl

from diagnostics.cli import main as orderdoc
from diagnostics.generate import CAUSES, Scenario
from diagnostics.impact import measure_impact, summarize
from diagnostics.jobdef import read_job_definition

EVENTS = 2_000
PARTITIONS = 4
DURATION = "30m"
SEED = 7
SOURCE = "telemetry"

#: What a correct analysis concludes from each scenario's diagnostics (and how to fix it).
FINDINGS: dict[Scenario, str] = {
    Scenario.HEALTHY: (
        "Nothing to fix: no data errors, no idle partition; watermark delay 5 s (the late "
        "tolerance), 10 s in the first minute only, before every partition has sent its first "
        "event (ASA's tau - 5 s estimate). An analysis that reports a problem here has a false "
        "positive."
    ),
    Scenario.IDLE_PARTITION: (
        "Partition 3 stopped sending (idle notices every 5 minutes while it is silent); every "
        "other partition is fine and there are no data errors. Cause: an idle input partition, "
        "not lateness. Check the sender feeding partition 3, or use PARTITION BY PartitionId so "
        "one idle partition cannot hold the others back when the late tolerance is large."
    ),
    Scenario.LATE_SENDERS: (
        "LateInputEvent every 2 minutes, always from the same devices (dev-00000, -00005, ...), "
        "with lateness spread from a few seconds up to about 120 s (see the orderdoc lateness "
        "statistics); the OutOfOrderEvent records are a consequence (late events adjusted to "
        "arrival - 5 s land behind the punctual devices). Cause: devices that batch their "
        "sends. Fix: a late-arrival tolerance above the batch interval (>= 2 min), or stop the "
        "batching."
    ),
    Scenario.CLOCK_SKEW: (
        "EarlyInputEvent only, all from device dev-00000, about 10 minutes early (lateness "
        "-600 s): those events are dropped. Cause: that device's clock runs fast. Fix: correct "
        "the device clock (no tolerance setting helps, the early window is fixed at 5 minutes)."
    ),
    Scenario.CROSS_DEVICE_DISORDER: (
        "OutOfOrderEvent in every partition, no late or early events; each record's example "
        "and the distinct-keys count show several devices interleaving, lateness below 5 s. "
        "Cause: device clocks skewed against each other (each device is in order). Fix: "
        "TIMESTAMP BY event_time OVER device_id with PARTITION BY PartitionId "
        "(diagnostics.over_device.jsonl, replayed that way, is empty), or an out-of-order "
        "tolerance of about 5 s."
    ),
    Scenario.HISTORICAL_REPLAY: (
        "Every event is a LateInputEvent, with lateness of 23 to 30 days: old data was pushed "
        "through a live job. Fix: replay history with TIMESTAMP BY removed or with an unlimited "
        "late tolerance in a separate job, not through the live one."
    ),
    Scenario.HOT_PARTITION: (
        "No data errors and no idle notices; metrics.parquet shows partition 0 with about 80% "
        "of InputEvents. Cause: a skewed partition key. Not an ordering problem: an analysis "
        "should report the skew, not change tolerances."
    ),
}

#: What the ordering does to each scenario's job results (``orderdoc impact``), reasoned
#: from the cause; the README adds the measured counts.
RESULTS: dict[Scenario, str] = {
    Scenario.HEALTHY: "No window changes: no event is adjusted or dropped.",
    Scenario.IDLE_PARTITION: (
        "No window changes: the silent partition delays when windows are emitted, but no "
        "event is moved or dropped."
    ),
    Scenario.LATE_SENDERS: (
        "Only the batching devices' one-minute counts are wrong (dev-00000 and dev-00005), "
        "every one of them: their readings are adjusted to arrival - 5 s, so the minute a "
        "batch lands in counts the readings of both minutes of the batch and the minute "
        "before it is not emitted at all. Every late event is in the right total, in the "
        "wrong minute."
    ),
    Scenario.CLOCK_SKEW: (
        "Every one-minute average of dev-00000 is missing (its events are dropped as early); "
        "no other device's result changes."
    ),
    Scenario.CROSS_DEVICE_DISORDER: (
        "A few one-minute averages are slightly off (under 4%): out-of-order events adjusted "
        "by a few seconds across a minute boundary."
    ),
    Scenario.HISTORICAL_REPLAY: (
        "Every window changes: the month-old events are counted at their arrival (adjusted to "
        "arrival - 5 s), in the minutes of the replay, and none where they happened."
    ),
    Scenario.HOT_PARTITION: "No window changes: the skew moves no event.",
}
JOBS = Path(__file__).resolve().parents[1] / "sample_logs" / "jobs"


def job_query(scenario: Scenario) -> tuple[str, str]:
    """The query whose results the README compares, and its file: the scenario's job's, or
    for the late senders (whose job joins reference data) the one-minute counts."""
    if scenario is Scenario.LATE_SENDERS:
        path = JOBS / "late_senders.counts.asaql"
        return path.read_text(encoding="utf-8"), path.name
    (path,) = (p for p in JOBS.glob(f"{scenario.value}.*.json") if "parameters" not in p.name)
    query = read_job_definition(path).query
    assert query is not None
    return query, path.name


def results_line(folder: Path, scenario: Scenario) -> str:
    """The README's results bullet: the expectation and the measured counts."""
    query, name = job_query(scenario)
    outcomes = pl.read_parquet(folder / "outcomes.parquet")
    summary = summarize(measure_impact(outcomes, query, SOURCE))
    causes = ", ".join(
        f"{c['cause']} {c['events']} events" for c in summary["causes"] if c["events"]
    )
    measured = (
        f"{summary['windows_compared']} windows compared, {summary['windows_changed']} "
        f"changed, interior windows off by more than 5 % {summary['interior']['off']}"
    )
    return (
        f"- **Results** (`orderdoc impact` with `../jobs/{name}`): {RESULTS[scenario]} "
        f"Measured: {measured}"
        + (f"; events in another window or missing: {causes}." if causes else ".")
    )


def _run(argv: list[str]) -> None:
    with contextlib.redirect_stdout(io.StringIO()):
        code = orderdoc(argv)
    if code != 0:
        msg = f"orderdoc {' '.join(argv)} failed with exit code {code}"
        raise SystemExit(msg)


def _replay(capture: Path, out: Path, job: str, *extra: str) -> None:
    _run(
        [
            "replay",
            str(capture),
            "--out",
            str(out),
            "--timestamp-by",
            "event_time",
            "--partitions",
            str(PARTITIONS),
            "--job",
            job,
            "--source",
            SOURCE,
            *extra,
        ]
    )


def _summary(folder: Path) -> dict[str, object]:
    kinds: Counter[str] = Counter()
    idle: set[int] = set()
    records = 0
    for line in (folder / "diagnostics.jsonl").read_text().splitlines():
        record = json.loads(line)
        records += 1
        props = record["properties"]
        if props["Type"] == "InputPartitionNotProgressing":
            idle.add(record["orderdoc"]["partition_id"])
        else:
            kinds[props["DataErrorType"]] += props["EventCount"]
    metrics = pl.read_parquet(folder / "metrics.parquet")
    per_partition = (
        metrics.filter(pl.col("partition_id").is_not_null())
        .group_by("partition_id")
        .agg(pl.col("InputEvents").sum())
        .sort("partition_id")
    )
    return {
        "records": records,
        "events_by_kind": dict(sorted(kinds.items())),
        "idle_partitions": sorted(idle),
        "input_events_by_partition": dict(per_partition.iter_rows()),
        "max_watermark_delay_s": metrics["OutputWatermarkDelaySeconds"].max(),
    }


def build(out: Path) -> dict[str, dict[str, object]]:
    """Write every scenario's folder under ``out`` and return their summaries."""
    summaries: dict[str, dict[str, object]] = {}
    for scenario in Scenario:
        folder = out / scenario.value
        if folder.exists():
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
        capture = folder / "capture.csv"
        _run(
            [
                "generate",
                scenario.value,
                "--out",
                str(capture),
                "--events",
                str(EVENTS),
                "--partitions",
                str(PARTITIONS),
                "--duration",
                DURATION,
                "--seed",
                str(SEED),
            ]
        )
        job = f"sample-{scenario.value.replace('_', '-')}"
        _replay(capture, folder, job)
        if scenario in (Scenario.LATE_SENDERS, Scenario.IDLE_PARTITION):
            side = folder / "activity"
            _replay(capture, side, job, "--log-format", "activity")
            (side / "diagnostics.jsonl").replace(folder / "diagnostics.activity.jsonl")
            shutil.rmtree(side)
        if scenario == Scenario.CROSS_DEVICE_DISORDER:
            side = folder / "over"
            _replay(capture, side, job, "--over", "device_id", "--partition-by")
            (side / "diagnostics.jsonl").replace(folder / "diagnostics.over_device.jsonl")
            shutil.rmtree(side)
        summaries[scenario.value] = {**_summary(folder), "results": results_line(folder, scenario)}
    return summaries


CAPTURE_EVENTS = 400
CAPTURE_SCENARIO = Scenario.LATE_SENDERS


def build_captures(out: Path) -> None:
    """``sample_logs/captures/``: one scenario's events as an Event Hubs Capture folder and as
    the CSV a ``SELECT * INTO blob`` passthrough job writes (ASA's column names)."""
    shutil.rmtree(out / "eventhubs-capture", ignore_errors=True)
    out.mkdir(parents=True, exist_ok=True)
    common = ["--events", str(CAPTURE_EVENTS), "--partitions", str(PARTITIONS)]
    common += ["--duration", DURATION, "--seed", str(SEED)]
    _run(["generate", CAPTURE_SCENARIO.value, "--format", "avro", *common,
          "--out", str(out / "eventhubs-capture")])  # fmt: skip
    plain = out / ".plain.csv"
    _run(["generate", CAPTURE_SCENARIO.value, "--out", str(plain), *common])
    frame = pl.read_csv(plain)
    plain.unlink()
    enqueued = pl.col("arrival_time").str.to_datetime(time_zone="UTC")
    asa_time = "%Y-%m-%dT%H:%M:%S%.3f0000Z"  # ASA writes 7 fractional digits
    frame.select(
        "message_id",
        "device_id",
        "event_time",
        "value",
        (enqueued + pl.duration(seconds=1)).dt.strftime(asa_time).alias("EventProcessedUtcTime"),
        pl.col("partition_id").alias("PartitionId"),
        enqueued.dt.strftime(asa_time).alias("EventEnqueuedUtcTime"),
    ).write_csv(out / "passthrough.csv")
    (out / "README.md").write_text(captures_readme())


def captures_readme() -> str:
    """What ``sample_logs/captures/`` holds and how to replay it."""
    return "\n".join(
        [
            "# Captures as Azure writes them",
            "",
            "Made by `scripts/make_samples.py` (do not edit by hand; re-run it). The same "
            f"{CAPTURE_EVENTS} events",
            f"of the `{CAPTURE_SCENARIO.value}` scenario ({CAUSES[CAPTURE_SCENARIO]}), "
            f"{PARTITIONS} partitions, {DURATION}, seed {SEED},",
            "in the two shapes users hold:",
            "",
            "| file | what it is |",
            "|---|---|",
            "| `eventhubs-capture/` | an Event Hubs Capture folder: "
            "`orderdoc/late-senders/{PartitionId}/{Year}/{Month}/{Day}/{Hour}/{Minute}/"
            "{Second}.avro`, schema `EventData`, deflate; the JSON `Body` holds `message_id`, "
            "`device_id`, `event_time`, `value`; `x-opt-enqueued-time` the arrival in ms |",
            "| `passthrough.csv` | what `SELECT * INTO blob` writes for the same events: the "
            "payload columns, then ASA's `EventProcessedUtcTime`, `PartitionId`, "
            "`EventEnqueuedUtcTime` |",
            "",
            "Both replay with no column flags (arrival and partition are found as "
            'docs/schemas.md, "Input contract", describes) and give the same outcomes:',
            "",
            "```bash",
            "orderdoc replay sample_logs/captures/eventhubs-capture --out out/capture "
            "--timestamp-by event_time",
            "orderdoc replay sample_logs/captures/passthrough.csv --out out/passthrough "
            "--timestamp-by event_time",
            "```",
            "",
            f"A correct analysis finds: {FINDINGS[CAPTURE_SCENARIO]}",
            "",
        ]
    )


def readme(summaries: dict[str, dict[str, object]]) -> str:
    """The folder's README: files, settings, and per scenario the cause and the findings."""
    lines = [
        "# Scenario samples",
        "",
        "Made by `scripts/make_samples.py` (do not edit by hand; re-run it). Each folder holds one",
        "synthetic capture with one known cause and what `orderdoc replay` writes for it under",
        "ASA's default policy: `TIMESTAMP BY event_time`, late arrival 5 s, out-of-order 0 s,",
        "Adjust, early window 5 min, no OVER, no PARTITION BY; errors aggregated per 1-minute",
        "window, idle notices after 5 minutes.",
        "",
        f"Capture settings: {EVENTS} events, {PARTITIONS} partitions (declared), {DURATION}, "
        f"seed {SEED}, first arrival 2024-01-01T00:00:00Z; input name `{SOURCE}`, job",
        "`sample-<scenario>` (in `resourceId`).",
        "",
        "| file | what it is |",
        "|---|---|",
        "| `capture.csv` | the events: `message_id`, `device_id`, `partition_id`, `event_time` "
        "(application time), `arrival_time` (broker enqueue time), `value` |",
        "| `outcomes.parquet` | the replay: every event with its flags and System.Timestamp "
        "(docs/schemas.md) |",
        "| `diagnostics.jsonl` | ASA resource-log records: data errors and "
        "InputPartitionNotProgressing (docs/diagnostics.md) |",
        "| `metrics.parquet` | per-minute metrics per partition and for the job |",
        "| `late_senders/diagnostics.activity.jsonl`, `idle_partition/diagnostics.activity.jsonl` "
        "| the same records in the activity-log form (`--log-format activity`) |",
        "| `cross_device_disorder/diagnostics.over_device.jsonl` | the diagnostics of a replay "
        "with `OVER device_id` and `PARTITION BY PartitionId` (the fix) |",
        "",
        "Counts below are sums of `EventCount` per kind; they equal the flagged events in",
        "`outcomes.parquet`.",
        "",
    ]
    for scenario in Scenario:
        summary = summaries[scenario.value]
        lines += [
            f"## {scenario.value}",
            "",
            f"- **Cause built in:** {CAUSES[scenario]}.",
            f"- **A correct analysis finds:** {FINDINGS[scenario]}",
            f"- **Records:** {summary['records']}; events by kind: "
            f"{json.dumps(summary['events_by_kind']) if summary['events_by_kind'] else 'none'}; "
            f"idle partitions: {summary['idle_partitions'] or 'none'}; input events per "
            f"partition: {json.dumps(summary['input_events_by_partition'])}; max watermark "
            f"delay: {summary['max_watermark_delay_s']} s.",
            str(summary["results"]),
            "",
        ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(
        description="Rebuild sample_logs/scenarios/ and sample_logs/captures/"
    )
    parser.add_argument("--out", type=Path, default=Path("sample_logs/scenarios"))
    parser.add_argument("--captures-out", type=Path, default=Path("sample_logs/captures"))
    args = parser.parse_args()
    build_captures(args.captures_out)
    args.out.mkdir(parents=True, exist_ok=True)
    summaries = build(args.out)
    (args.out / "README.md").write_text(readme(summaries))
    total = sum(p.stat().st_size for p in args.out.rglob("*") if p.is_file())
    print(f"{args.out}: {len(summaries)} scenarios, {total / 1e6:.2f} MB")


if __name__ == "__main__":
    main()
