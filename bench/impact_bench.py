"""Benchmark: `orderdoc impact`'s comparison (as emitted against on time) per window kind.

    python bench/impact_bench.py [--events 1000000] [--repeat 3]

Makes the bench capture (bench/make_events.py: 8 partitions, 5,000 devices, lognormal
delays with late and early outliers), replays it once under late 5 s, out of order 1 s,
Adjust (not timed), then times ``diagnostics.impact.measure_impact`` on the outcomes for
one query per window kind, each grouped by device with COUNT(*) and AVG(value), and prints
the median wall and CPU time of each, the windows compared and changed.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from make_events import make  # noqa: E402

GROUPS = {
    "tumbling 1 min": "TumblingWindow(minute, 1)",
    "hopping 5 min / 1 min": "HoppingWindow(minute, 5, 1)",
    "sliding 10 s": "SlidingWindow(second, 10)",
    "session 30 s / 5 min": "SessionWindow(second, 30, 300) OVER (PARTITION BY device_id)",
}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    from diagnostics.durations import SECOND
    from diagnostics.engine.policy import OrderingPolicy
    from diagnostics.engine.replay import replay
    from diagnostics.impact import measure_impact, summarize

    events = make(args.events, 8, 7)
    policy = OrderingPolicy(timestamp_by="event_time", out_of_order_ns=SECOND)
    started = time.perf_counter()
    outcomes = replay(events, policy).outcomes
    replayed = time.perf_counter() - started
    print(
        f"{args.events:,} events; replay {replayed:.2f} s (not in the figures below); "
        f"{platform.machine()}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}"
    )
    for label, group in GROUPS.items():
        query = (
            "SELECT device_id, COUNT(*) AS n, AVG(value) AS v INTO o FROM input "
            f"GROUP BY device_id, {group}"
        )
        times, cpu = [], []
        for _ in range(args.repeat):
            started, started_cpu = time.perf_counter(), time.process_time()
            result = measure_impact(outcomes, query, "input")
            times.append(time.perf_counter() - started)
            cpu.append(time.process_time() - started_cpu)
        summary = summarize(result)
        median = statistics.median(times)
        print(
            f"{label:>22}: wall {median:6.2f} s, CPU {statistics.median(cpu):6.2f} s "
            f"(medians of {args.repeat}); windows compared {summary['windows_compared']:,}, "
            f"changed {summary['windows_changed']:,}; load {os.getloadavg()[0]:.1f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
