"""Benchmark: the replay under Flink's and Spark's rules (``replay_rules``) on a synthetic
capture.

Events: arrivals uniform over an hour on 16 partitions, each event's time 0 to a few seconds
before its arrival (exponential, mean 2 s). Rules: a 10 s tumbling window; Flink with
``forBoundedOutOfOrderness(2s)``, ``withIdleness(5s)``, watermarks every 200 ms; Spark with a
2 s watermark delay and a 1 s trigger. Timed: the whole replay from a polars frame (columns
read, arrival sort, the engine's decisions, the outcome columns in input order).

Usage::

    .venv/bin/python bench/engines_bench.py [--events 1000000] [--partitions 16] [--seed 0]

Prints one JSON object per rule set; the numbers go in docs/performance.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time

import numpy as np
import polars as pl

from diagnostics.durations import SECOND
from diagnostics.engines import FlinkRules, SparkRules, replay_rules

EPOCH_2024 = 1_704_067_200 * SECOND


def make_frame(n: int, partitions: int, seed: int) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    arrival = np.sort(rng.integers(0, 3_600 * SECOND, n)) + EPOCH_2024
    event = arrival - rng.exponential(2 * SECOND, n).astype(np.int64)
    utc = pl.Datetime("ns", "UTC")
    return pl.DataFrame(
        {
            "ts": pl.Series(event).cast(utc),
            "arrival_time": pl.Series(arrival).cast(utc),
            "partition_id": rng.integers(0, partitions, n),
        }
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--partitions", type=int, default=16)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    frame = make_frame(args.events, args.partitions, args.seed)
    rule_sets = (
        FlinkRules("ts", 10 * SECOND, out_of_orderness_ns=2 * SECOND, idleness_ns=5 * SECOND),
        SparkRules("ts", 10 * SECOND, watermark_delay_ns=2 * SECOND, trigger_ns=SECOND),
    )
    for rules in rule_sets:
        start = time.perf_counter()
        out = replay_rules(frame, rules).outcomes
        seconds = time.perf_counter() - start
        print(
            json.dumps(
                {
                    "rules": rules.describe(),
                    "events": args.events,
                    "partitions": args.partitions,
                    "seconds": round(seconds, 2),
                    "events_per_second": round(args.events / seconds),
                    "dropped": int(out["dropped"].sum()),
                    "python": platform.python_version(),
                    "polars": pl.__version__,
                    "load_average": os.getloadavg()[0],
                }
            )
        )


if __name__ == "__main__":
    main()
