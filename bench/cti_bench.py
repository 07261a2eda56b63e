"""Benchmark: the CTI engine and the whole CTI replay on a synthetic point stream.

Events: one point a millisecond of application time, arriving 0-2 s after it (uniform), with
a seeded 2% of events delayed by a further 0-10 s so that some violate the CTIs. Policy:
a CTI every 100 events, delay 2 s (only the 2% delayed events can violate), Adjust, flush at +inf. Timed:

- ``engine``: :class:`CtiEngine` fed pre-built events in batches of 100,000 (the core loop);
- ``replay``: :func:`replay_cti` from a polars frame (parsing, ordering, engine, outcome frame);
- ``join``: the same events split into two inputs of a join.

Usage::

    .venv/bin/python bench/cti_bench.py [--events 1000000] [--seed 7]

Prints one JSON object with events/second; the numbers go in docs/performance.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time

import numpy as np
import polars as pl

from diagnostics.cti import CtiEngine, CtiPolicy, Event, Operator, replay_cti
from diagnostics.cti.frames import CtiColumns

MS = 1_000_000
EPOCH_2024 = 1_704_067_200 * 1_000_000_000


def make_frame(n: int, seed: int) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    start = EPOCH_2024 + np.arange(n, dtype=np.int64) * MS
    delay = rng.integers(0, 2_000, n) * MS
    late = rng.random(n) < 0.02
    delay[late] += rng.integers(0, 10_000, int(late.sum())) * MS
    arrival = start + delay
    return pl.DataFrame(
        {
            "start_time": pl.Series(start).cast(pl.Datetime("ns")).dt.replace_time_zone("UTC"),
            "arrival_time": pl.Series(arrival).cast(pl.Datetime("ns")).dt.replace_time_zone("UTC"),
            "stream": pl.Series(rng.integers(0, 2, n)),
        }
    )


def timed(label: str, fn) -> tuple[float, object]:  # type: ignore[no-untyped-def]
    begin = time.perf_counter()
    value = fn()
    seconds = time.perf_counter() - begin
    print(f"{label}: {seconds:.2f}s", flush=True)
    return seconds, value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    n = args.events
    frame = make_frame(n, args.seed)
    policy = CtiPolicy(
        every_events=100, delay_ns=2_000 * MS, violation="adjust", flush_at_infinity=True
    )
    columns = CtiColumns(start="start_time", arrival="arrival_time")

    ordered = frame.with_row_index("id").sort("arrival_time", "id")
    starts = ordered["start_time"].dt.epoch("ns").to_list()
    arrivals = ordered["arrival_time"].dt.epoch("ns").to_list()
    ids = ordered["id"].to_list()
    events = [
        Event(i, s, None, arrival_ns=a) for i, s, a in zip(ids, starts, arrivals, strict=True)
    ]

    def engine_only() -> CtiEngine:
        engine = CtiEngine([policy])
        for lo in range(0, n, 100_000):
            engine.feed(events[lo : lo + 100_000])
        engine.close()
        return engine

    engine_s, engine = timed("engine", engine_only)
    replay_s, result = timed("replay", lambda: replay_cti([frame], policy, columns))
    left = frame.filter(pl.col("stream") == 0)
    right = frame.filter(pl.col("stream") == 1)
    join_s, _ = timed(
        "join", lambda: replay_cti([left, right], policy, columns, operator=Operator.JOIN)
    )
    violations = len(engine.violations())  # type: ignore[union-attr]
    print(
        json.dumps(
            {
                "events": n,
                "violations": violations,
                "engine_seconds": round(engine_s, 2),
                "engine_events_per_second": round(n / engine_s),
                "replay_seconds": round(replay_s, 2),
                "replay_events_per_second": round(n / replay_s),
                "join_seconds": round(join_s, 2),
                "join_events_per_second": round(n / join_s),
                "replay_violations": len(result.violations),  # type: ignore[union-attr]
                "python": platform.python_version(),
                "cpu_count": os.cpu_count(),
            }
        )
    )


if __name__ == "__main__":
    main()
