"""Benchmark: ``orderdoc generate`` building and writing large captures.

Usage: ``.venv/bin/python bench/generate_scenarios.py [--events 10000000] [--scenarios a,b]
[--formats parquet,csv] [--out bench/data]``. Prints one line per measurement (seconds, wall
clock, single process) and appends them as JSON lines to ``bench/results/generate.jsonl``.
Numbers go in ``docs/performance.md``.
"""

from __future__ import annotations

import argparse
import json
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
        started = time.perf_counter()
        frame = generate(scenario, config)
        built = time.perf_counter() - started
        row = {"scenario": name, "events": args.events, "build_s": round(built, 2)}
        for fmt in args.formats.split(","):
            path = args.out / f"{name}.{fmt}"
            started = time.perf_counter()
            write_capture(frame, path)
            row[f"write_{fmt}_s"] = round(time.perf_counter() - started, 2)
            row[f"{fmt}_mb"] = round(path.stat().st_size / 1e6, 1)
            path.unlink()
        row["machine"] = f"{platform.machine()} {platform.python_version()}"
        print(json.dumps(row))
        with (results / "generate.jsonl").open("a") as handle:
            handle.write(json.dumps(row) + "\n")
        del frame


if __name__ == "__main__":
    main()
