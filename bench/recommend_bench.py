"""Benchmark the one recommender (``diagnostics.whatif.recommend``) on the capture of issue
25 (3,977 events, 12 devices, 4 partitions) and on the bundled scenarios: wall and CPU time
of the whole search, settings measured by the engine, the setting found. Results go to
``bench/results/recommend.json``; a Markdown table is printed for ``docs/performance.md``.

    .venv/bin/python bench/recommend_bench.py
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import polars as pl

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

from diagnostics.captures.reader import read_capture  # noqa: E402
from diagnostics.engine.policy import OrderingPolicy  # noqa: E402
from diagnostics.whatif.recommend import recommend  # noqa: E402
from tests.whatif.usercapture import write_user_files  # noqa: E402

RESULTS = HERE / "results" / "recommend.json"


def run(name: str, events: pl.DataFrame, policy: OrderingPolicy, **kwargs: object) -> dict:
    wall, cpu = time.perf_counter(), time.process_time()
    rec = recommend(events, policy, **kwargs)  # type: ignore[arg-type]
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    row = rec.row
    return {
        "capture": name,
        "events": events.height,
        "wall_s": round(wall, 3),
        "cpu_s": round(cpu, 3),
        "measured": rec.table.height,
        "setting": rec.policy.describe(),
        "adjusted": row["adjusted"],
        "dropped": row["dropped"],
        "p95_s": row["delay_p95_s"],
    }


def main() -> None:
    out = []
    folder = HERE / "data" / "issue25"
    folder.mkdir(parents=True, exist_ok=True)
    capture, _ = write_user_files(folder)
    cap = read_capture(capture)
    events, policy = cap.apply(OrderingPolicy(timestamp_by="eventTime"))
    run("warm-up", events, policy, columns=cap.columns)
    out.append(run("issue 25", events, policy, columns=cap.columns))
    for path in sorted((ROOT / "sample_logs" / "scenarios").glob("*/capture.csv")):
        frame = pl.read_csv(path)
        policy = OrderingPolicy(timestamp_by="event_time")
        out.append(run(path.parent.name, frame, policy, partitions=(0, 1, 2, 3)))
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    print(
        "| capture | events | wall | CPU | settings measured | setting | adjusted + dropped | p95 |"
    )
    print("|---|---:|---:|---:|---:|---|---:|---:|")
    for r in out:
        print(
            f"| {r['capture']} | {r['events']:,} | {r['wall_s']:.2f} s | {r['cpu_s']:.2f} s | "
            f"{r['measured']} | {r['setting']} | {r['adjusted'] + r['dropped']} | {r['p95_s']:.1f} s |"
        )


if __name__ == "__main__":
    main()
