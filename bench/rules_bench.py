"""Benchmark: evaluate the default rule pack on a year of per-minute rollups for 100 jobs.

Generates (once) into ``bench/data/rules-j<JOBS>-d<DAYS>[-m]/`` (git-ignored), hive-partitioned by
date:

- ``error_rollup``: one row per job and minute for a year (100 x 525,600 = 52,560,000 rows);
  kinds 79.85% LateInputEvent, 20% OutOfOrderEvent, 0.1% EarlyInputEvent, 0.05%
  InvalidInputTimeStamp;
  partition 0..7; event counts mostly small with rare spikes;
- ``metrics`` (with ``--metrics``): one whole-job row per job and minute (another 52,560,000);
- ``partition_idle`` (a few thousand episodes) and ``quarantine`` (a few hundred rows).

Then times ``evaluate_detailed`` of ``rules/`` and prints the numbers recorded in
``docs/performance.md``. Usage::

    .venv/bin/python bench/rules_bench.py [--jobs 100] [--days 365] [--metrics] [--threads N]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import time
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from diagnostics.rules import RuleSet, evaluate_detailed, load_rules

ROOT = Path(__file__).resolve().parent
START = datetime(2025, 1, 1, tzinfo=UTC)
KINDS = np.array(["LateInputEvent", "OutOfOrderEvent", "EarlyInputEvent", "InvalidInputTimeStamp"])
KIND_P = [0.7985, 0.20, 0.001, 0.0005]


def _day_minutes(day: int) -> np.ndarray:
    start_us = int((START + timedelta(days=day)).timestamp() * 1_000_000)
    return start_us + np.arange(1440, dtype=np.int64) * 60_000_000


def generate(out: Path, jobs: int, days: int, metrics: bool, seed: int = 7) -> int:
    """Write the tables; return the number of rows written."""
    rng = np.random.default_rng(seed)
    names = np.array([f"job-{j:03d}" for j in range(jobs)])
    total = 0
    ts = pa.timestamp("us", tz="UTC")
    for day in range(days):
        date = (START + timedelta(days=day)).date().isoformat()
        minutes = np.tile(_day_minutes(day), jobs)
        job = np.repeat(names, 1440)
        n = minutes.size
        counts = rng.poisson(3, n).astype(np.int64)
        spikes = rng.random(n) < 0.002
        counts[spikes] += rng.integers(100, 2000, spikes.sum())
        kinds = KINDS[rng.choice(4, n, p=KIND_P)]
        table = pa.table(
            {
                "job": job,
                "kind": kinds,
                "partition_id": rng.integers(0, 8, n),
                "minute": pa.array(minutes, ts),
                "event_count": counts,
                "records": np.maximum(1, counts // 10),
                "max_lateness_seconds": rng.exponential(20.0, n),
            }
        )
        folder = out / "error_rollup" / f"date={date}"
        folder.mkdir(parents=True, exist_ok=True)
        pq.write_table(table, folder / "part-0.parquet")
        total += n
        if metrics:
            delay = rng.exponential(2.0, n)
            slow = rng.random(n) < 0.001
            delay[slow] += 30.0
            mtable = pa.table(
                {
                    "job": job,
                    "partition_id": pa.nulls(n, pa.int64()),
                    "minute": pa.array(minutes, ts),
                    "input_events": rng.poisson(1000, n),
                    "late_input_events": counts,
                    "early_input_events": np.zeros(n, np.int64),
                    "dropped_or_adjusted_events": counts // 5,
                    "output_watermark_delay_seconds": delay,
                }
            )
            folder = out / "metrics" / f"date={date}"
            folder.mkdir(parents=True, exist_ok=True)
            pq.write_table(mtable, folder / "part-0.parquet")
            total += n
    episodes = jobs * 30
    start = START.timestamp() + rng.uniform(0, days * 86_400, episodes)
    idle = rng.integers(5, 60, episodes)
    idle_tbl = pa.table(
        {
            "job": names[rng.integers(0, jobs, episodes)],
            "source": np.full(episodes, "input"),
            "partition_id": rng.integers(0, 8, episodes),
            "start": pa.array((start * 1e6).astype(np.int64), ts),
            "end": pa.array(((start + idle * 60) * 1e6).astype(np.int64), ts),
            "notices": idle // 5,
            "max_idle_minutes": idle,
        }
    )
    (out / "partition_idle").mkdir(parents=True, exist_ok=True)
    pq.write_table(idle_tbl, out / "partition_idle" / "part-0.parquet")
    q = 300
    quarantine = pa.table(
        {
            "source_file": np.array([f"logs/PT1H-{i % 7}.json" for i in range(q)]),
            "source_line": np.arange(q, dtype=np.int64),
            "reason": np.full(q, "invalid JSON"),
            "raw": np.full(q, '{"time": '),
            "raw_bytes": np.full(q, 9, dtype=np.int64),
        }
    )
    (out / "quarantine").mkdir(parents=True, exist_ok=True)
    pq.write_table(quarantine, out / "quarantine" / "part-0.parquet")
    return total + episodes + q


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=100)
    parser.add_argument("--days", type=int, default=365)
    parser.add_argument("--metrics", action="store_true", help="also a year of job metrics")
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--regenerate", action="store_true")
    parser.add_argument("--per-rule", action="store_true", help="also time each rule alone")
    args = parser.parse_args()
    tag = f"j{args.jobs}-d{args.days}{'-m' if args.metrics else ''}"
    data = ROOT / "data" / f"rules-{tag}"
    if args.regenerate and data.exists():
        shutil.rmtree(data)
    if not data.exists():
        began = time.perf_counter()
        rows = generate(data, args.jobs, args.days, args.metrics)
        print(f"generated {rows:,} rows in {time.perf_counter() - began:.1f} s into {data}")
    rules = load_rules([ROOT.parent / "rules"])
    began = time.perf_counter()
    cpu = time.process_time()
    result = evaluate_detailed(rules, data, threads=args.threads)
    elapsed = time.perf_counter() - began
    cpu = time.process_time() - cpu
    per_rule = {}
    if args.per_rule:
        for rule in rules:
            one = time.perf_counter()
            one_cpu = time.process_time()
            evaluate_detailed(RuleSet((rule,)), data, now=result.now, threads=args.threads)
            per_rule[rule.id] = {
                "seconds": round(time.perf_counter() - one, 2),
                "cpu_seconds": round(time.process_time() - one_cpu, 2),
            }
    by_rule = Counter(a.rule_id for a in result.alerts)
    by_state = Counter(a.state.value for a in result.alerts)
    report = {
        "dataset": tag,
        "rules": len(rules),
        "evaluate_seconds": round(elapsed, 2),
        "evaluate_cpu_seconds": round(cpu, 2),
        "load_average_1m": round(os.getloadavg()[0], 2),
        "cpus": os.cpu_count(),
        "per_rule": per_rule,
        "alerts": len(result.alerts),
        "by_state": dict(by_state),
        "by_rule": dict(sorted(by_rule.items())),
        "skipped": [r for r, _ in result.skipped],
        "now": result.now.isoformat(),
        "machine": f"{platform.machine()}, {platform.python_version()}",
    }
    print(json.dumps(report, indent=2))
    results = ROOT / "results"
    results.mkdir(exist_ok=True)
    (results / f"rules-{tag}.json").write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
