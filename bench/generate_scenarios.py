"""Benchmark: ``orderdoc generate`` building and writing large captures.

Usage: ``.venv/bin/python bench/generate_scenarios.py [--events 10000000] [--scenarios a,b]
[--formats parquet,csv] [--out bench/data]``. Prints one line per measurement (seconds, wall
clock, and CPU seconds of all threads, with the 1-minute load average) and appends them as JSON lines to ``bench/results/generate.jsonl``.
Numbers go in ``docs/performance.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path

from diagnostics.generate import GenerateConfig, Scenario, generate, write_capture


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=10_000_000)
    parser.add_argument("--partitions", type=int, default=8)
    parser.add_argument("--scenarios", default="healthy,late_senders,historical_replay")
    parser.add_argument("--formats", default="parquet")
    parser.add_argument("--out", type=Path, default=Path("bench/data"))
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    results = Path("bench/results")
    results.mkdir(parents=True, exist_ok=True)
    config = GenerateConfig(events=args.events, partitions=args.partitions, seed=1)
    for name in args.scenarios.split(","):
        scenario = Scenario(name)
        started, cpu = time.perf_counter(), time.process_time()
        frame = generate(scenario, config)
        built = time.perf_counter() - started
        row = {
            "scenario": name,
            "events": args.events,
            "build_s": round(built, 2),
            "build_cpu_s": round(time.process_time() - cpu, 2),
            "load_1m": round(os.getloadavg()[0], 1),
        }
        for fmt in args.formats.split(","):
            path = args.out / f"{name}.{fmt}"
            started, cpu = time.perf_counter(), time.process_time()
            write_capture(frame, path)
            row[f"write_{fmt}_s"] = round(time.perf_counter() - started, 2)
            row[f"write_{fmt}_cpu_s"] = round(time.process_time() - cpu, 2)
            row[f"{fmt}_mb"] = round(path.stat().st_size / 1e6, 1)
            path.unlink()
        row["machine"] = f"{platform.machine()} {platform.python_version()}"
        print(json.dumps(row))
        with (results / "generate.jsonl").open("a") as handle:
            handle.write(json.dumps(row) + "\n")
        del frame


if __name__ == "__main__":
    main()
