"""Benchmark: ``orderdoc whatif --rules flink|spark`` (the default search) on a generated
capture, against the reference: every measured setting replayed in full (``replay_rules``,
the outcome columns built, the counts and quantiles taken from them), which is what the
what-if did per setting before it read the capture once and measured from the decisions.

The capture: ``orderdoc generate late_senders --events 2000000 --partitions 8 --seed 1``
(Parquet), made once under bench/data/. The what-if runs as a user runs it: the command in a
subprocess, window 1m on ``event_time``, the job's settings the defaults; wall time and the
command's CPU time. The reference replays the settings of the command's whatif.csv in this
process (all, or ``--reference N`` spread evenly over them, then the total is an estimate:
N × the mean) and checks that each row equals the command's.

Usage::

    .venv/bin/python bench/engines_whatif_bench.py [--events 2000000] [--partitions 8] \\
        [--scenario late_senders] [--seed 1] [--rules flink,spark] [--reference all|N|0]

Prints one JSON object per rule set; the numbers go in docs/performance.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import polars as pl

from diagnostics.cli import main as orderdoc
from diagnostics.durations import SECOND
from diagnostics.engines import FlinkRules, SparkRules, replay_rules
from diagnostics.engines.policy import EngineRules

DATA = Path(__file__).resolve().parent / "data"
WINDOW = "1m"
COLUMN = "event_time"
#: The row columns a reference replay reproduces.
MEASURED = ("events", "dropped", "pct_dropped", "never_emitted", "delay_p50_s", "delay_p95_s")


def capture_path(scenario: str, events: int, partitions: int, seed: int) -> Path:
    """The generated capture, made once."""
    path = DATA / f"{scenario}_{events}_{partitions}p_seed{seed}.parquet"
    if not path.exists():
        DATA.mkdir(parents=True, exist_ok=True)
        argv = ["generate", scenario, "--out", str(path), "--events", str(events)]
        code = orderdoc([*argv, "--partitions", str(partitions), "--seed", str(seed)])
        if code != 0:
            sys.exit(code)
    return path


def run_whatif(path: Path, rules: str, out: Path) -> tuple[float, float]:
    """The command's wall and CPU seconds."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "diagnostics.cli", "whatif", str(path), "--rules", rules,
         "--timestamp-by", COLUMN, "--window", WINDOW, "--out", str(out)],
        check=True,
        stdout=subprocess.DEVNULL,
    )  # fmt: skip
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def _ns(seconds: float | None) -> int | None:
    return None if seconds is None else round(seconds * SECOND)


def rules_of(row: dict, rules: str) -> EngineRules:
    """The setting of a whatif.csv row."""
    if rules == "flink":
        return FlinkRules(
            COLUMN,
            60 * SECOND,
            out_of_orderness_ns=_ns(row["out_of_orderness_s"]) or 0,
            idleness_ns=_ns(row["idleness_s"]),
            allowed_lateness_ns=_ns(row["allowed_lateness_s"]) or 0,
        )
    return SparkRules(
        COLUMN,
        60 * SECOND,
        watermark_delay_ns=_ns(row["watermark_delay_s"]) or 0,
        trigger_ns=_ns(row["trigger_s"]) or 0,
    )


def reference_row(events: pl.DataFrame, rules: EngineRules) -> dict:
    """A full replay's outcome columns, and the row's counts and quantiles from them."""
    out = replay_rules(events, rules).outcomes
    n = out.height
    dropped = int(out["dropped"].sum())
    kept = out.filter(~pl.col("dropped"))
    emitted = kept["release_time"].fill_null(out["arrival"].max())
    delay = (emitted - kept["arrival"]).dt.total_nanoseconds().to_numpy() / SECOND
    empty = not len(delay)
    return {
        "events": n,
        "dropped": dropped,
        "pct_dropped": round(100 * dropped / n, 4) if n else 0.0,
        "never_emitted": int(kept["release_time"].is_null().sum()),
        "delay_p50_s": None if empty else round(float(np.quantile(delay, 0.5)), 3),
        "delay_p95_s": None if empty else round(float(np.quantile(delay, 0.95)), 3),
    }


def reference(path: Path, table: pl.DataFrame, rules: str, sample: int | None) -> dict:
    """The reference over the table's settings (``sample`` of them, or all): its time per
    setting, and that every row is the same."""
    events = pl.read_parquet(path)
    rows = list(table.iter_rows(named=True))
    picked = (
        rows
        if sample is None or sample >= len(rows)
        else [rows[i] for i in np.unique(np.linspace(0, len(rows) - 1, sample).round().astype(int))]
    )
    cpu0, started = time.process_time(), time.perf_counter()
    for row in picked:
        got = reference_row(events, rules_of(row, rules))
        want = {k: row[k] for k in MEASURED}
        if got != want:
            msg = f"the reference differs on {row}: {got}"
            raise SystemExit(msg)
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu0
    factor = len(rows) / len(picked)
    return {
        "reference_settings": len(picked),
        "reference_identical": True,
        "reference_s_per_setting": round(wall / len(picked), 2),
        "reference_cpu_s_per_setting": round(cpu / len(picked), 2),
        ("reference_s" if factor == 1 else "reference_s_estimated"): round(wall * factor, 1),
        ("reference_cpu_s" if factor == 1 else "reference_cpu_s_estimated"): round(cpu * factor, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--events", type=int, default=2_000_000)
    parser.add_argument("--partitions", type=int, default=8)
    parser.add_argument("--scenario", default="late_senders")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--rules", default="flink,spark")
    parser.add_argument("--reference", default="0", help="all, or how many settings (0: none)")
    args = parser.parse_args()
    path = capture_path(args.scenario, args.events, args.partitions, args.seed)
    sample = None if args.reference == "all" else int(args.reference)
    for rules in args.rules.split(","):
        with tempfile.TemporaryDirectory() as tmp:
            load = os.getloadavg()[0]
            wall, cpu = run_whatif(path, rules, Path(tmp))
            table = pl.read_csv(Path(tmp) / "whatif.csv")
        result = {
            "command": f"orderdoc whatif {path.name} --rules {rules} --timestamp-by {COLUMN} "
            f"--window {WINDOW}",
            "events": args.events,
            "partitions": args.partitions,
            "settings": table.height,
            "seconds": round(wall, 1),
            "cpu_seconds": round(cpu, 1),
            "load_average_before": round(load, 2),
        }
        if sample != 0:
            result |= reference(path, table, rules, sample)
            key = "reference_s" if "reference_s" in result else "reference_s_estimated"
            result["speedup_wall"] = round(result[key] / wall, 1)
        result |= {"python": platform.python_version(), "polars": pl.__version__}
        print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
