"""Benchmark: the instrumentation (records, idle notices, metrics) on a large outcomes frame.

Usage: ``.venv/bin/python bench/generate_instrument.py [--events 10000000]``. Builds a
synthetic outcomes frame (no engine run: arrivals over an hour on 8 partitions, 2% late, 0.5%
out of order, 0.1% early, 64 devices), then times :func:`diagnostics.instrument.instrument`
without the engine's watermark delay, and the writing of both files. Prints one JSON line and
appends it to ``bench/results/instrument.jsonl``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import tempfile
import time
from pathlib import Path

import numpy as np
import polars as pl

from diagnostics.instrument import InstrumentOptions, instrument, write_diagnostics, write_metrics

START_NS = 1_704_067_200_000_000_000


def outcomes(n: int, seed: int = 1) -> pl.DataFrame:
    """A frame with the columns the instrument reads, in arrival order."""
    rng = np.random.default_rng(seed)
    arrival = START_NS + np.sort(rng.integers(0, 3_600 * 10**9, n))
    lateness = rng.exponential(2 * 10**9, n).astype(np.int64)
    draw = rng.random(n)
    return pl.DataFrame(
        {
            "device_id": pl.Series(rng.integers(0, 64, n)).cast(pl.String),
            "value": rng.normal(20, 2, n),
            "event_id": np.arange(n, dtype=np.int64),
            "partition": rng.integers(0, 8, n),
            "application_time": pl.Series(arrival - lateness).cast(pl.Datetime("ns", "UTC")),
            "arrival": pl.Series(arrival).cast(pl.Datetime("ns", "UTC")),
            "late": draw < 0.02,
            "early": (draw >= 0.02) & (draw < 0.021),
            "out_of_order": (draw >= 0.015) & (draw < 0.02),
            "invalid_timestamp": np.zeros(n, dtype=bool),
            "invalid_key": np.zeros(n, dtype=bool),
        }
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=10_000_000)
    args = parser.parse_args()
    frame = outcomes(args.events)
    started, cpu = time.perf_counter(), time.process_time()
    result = instrument(frame, InstrumentOptions(), policy_text="bench")
    computed = time.perf_counter() - started
    computed_cpu = time.process_time() - cpu
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        write_diagnostics(Path(tmp) / "diagnostics.jsonl", result.records)
        write_metrics(Path(tmp) / "metrics.parquet", result.metrics)
        written = time.perf_counter() - started
    row = {
        "events": args.events,
        "records": len(result.records),
        "metric_rows": result.metrics.height,
        "instrument_s": round(computed, 2),
        "instrument_cpu_s": round(computed_cpu, 2),
        "load_1m": round(os.getloadavg()[0], 1),
        "write_s": round(written, 2),
        "machine": f"{platform.machine()} {platform.python_version()}",
    }
    print(json.dumps(row))
    results = Path("bench/results")
    results.mkdir(parents=True, exist_ok=True)
    with (results / "instrument.jsonl").open("a") as handle:
        handle.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
