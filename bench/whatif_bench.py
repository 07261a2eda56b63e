"""Benchmark ``diagnostics.whatif.sweep``: a grid of 50 settings on N events (default 1M).

Reads the first N rows of bench/data/events_10m.parquet (made by bench/make_events.py) and
times, in one process: reading, the sweep (parse + sort once per OVER key set, then each
setting), and writing CSV/JSON/HTML. Prints one JSON line; docs/performance.md quotes it.

    .venv/bin/python bench/whatif_bench.py [--events 1000000] [--grid plain|mixed]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import tempfile
import time
from pathlib import Path

import polars as pl

from diagnostics.durations import SECOND
from diagnostics.engine.policy import OrderingPolicy
from diagnostics.whatif import sweep, write_outputs

DATA = Path(__file__).resolve().parent / "data" / "events_10m.parquet"

GRIDS = {
    # 10 late x 5 out-of-order = 50 settings, merged partitions
    "plain": {
        "late": [0, 1, 2, 5, 10, 30, 60, 120, 300, None],
        "ooo": [0, 1, 5, 10, 60],
        "pby": [False],
        "over": [()],
    },
    # 5 late x 5 ooo x (merged, PARTITION BY) = 50 settings
    "mixed": {
        "late": [0, 5, 60, 300, None],
        "ooo": [0, 1, 5, 10, 60],
        "pby": [False, True],
        "over": [()],
    },
    # 5 late x 5 ooo x 2 OVER choices, PARTITION BY on = 50 settings (OVER device_id: ~40k timelines)
    "over": {
        "late": [0, 5, 60, 300, None],
        "ooo": [0, 1, 5, 10, 60],
        "pby": [True],
        "over": [(), ("device_id",)],
    },
}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--grid", choices=sorted(GRIDS), default="plain")
    args = parser.parse_args()
    grid = GRIDS[args.grid]
    started = time.perf_counter()
    events = pl.read_parquet(DATA, n_rows=args.events)
    read_s = time.perf_counter() - started
    t0, c0 = time.perf_counter(), time.process_time()
    result = sweep(
        events,
        OrderingPolicy(timestamp_by="event_time"),
        late_values=[None if v is None else v * SECOND for v in grid["late"]],
        ooo_values=[v * SECOND for v in grid["ooo"]],
        partition_by_values=grid["pby"],
        over_values=grid["over"],
    )
    sweep_s = time.perf_counter() - t0
    sweep_cpu_s = time.process_time() - c0
    t1 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        write_outputs(result, Path(tmp), png=False)
    write_s = time.perf_counter() - t1
    print(
        json.dumps(
            {
                "events": events.height,
                "grid": args.grid,
                "settings": result.table.height,
                "read_s": round(read_s, 2),
                "sweep_s": round(sweep_s, 2),
                "sweep_cpu_s": round(sweep_cpu_s, 2),
                "per_setting_s": round(sweep_s / max(result.table.height, 1), 3),
                "load_avg_1m": round(os.getloadavg()[0], 1),
                "write_s": round(write_s, 2),
                "total_s": round(time.perf_counter() - started, 2),
                "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
                "recommended": result.recommended,
            }
        )
    )


if __name__ == "__main__":
    main()
