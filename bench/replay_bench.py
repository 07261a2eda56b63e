"""Benchmark: `orderdoc replay` as a whole process against a DuckDB classification peer.

    python bench/replay_bench.py [--events 10000000] [--partitions 8] [--repeat 1]

Generates the capture once (bench/data/, git-ignored), then times each command as a separate
process (start-up, reading, writing included) and reports wall time, peak RSS and the ratio
orderdoc / peer. orderdoc's run is the full replay: System.Timestamp, flags, watermarks,
release times, output order, plus diagnostics.jsonl and metrics.parquet.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from make_events import make  # noqa: E402
from peers import measure  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--events", type=int, default=10_000_000)
    parser.add_argument("--partitions", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--out-of-order", default="5s")
    args = parser.parse_args()
    data = HERE / "data"
    data.mkdir(exist_ok=True)
    capture = data / f"events_{args.events}_{args.partitions}p.parquet"
    if not capture.exists():
        make(args.events, args.partitions, seed=7).write_parquet(capture)
    py = sys.executable
    ours = [
        py,
        "-m",
        "diagnostics",
        "replay",
        str(capture),
        "--out",
        str(data / "replay_out"),
        "--timestamp-by",
        "event_time",
        "--out-of-order",
        args.out_of_order,
    ]
    ooo_s = int(args.out_of_order.rstrip("s"))
    peer = [
        py, str(HERE / "replay_peer_duckdb.py"), str(capture), str(data / "peer.parquet"),
        "5", str(ooo_s),
    ]  # fmt: skip
    commands = {
        "orderdoc": ours,
        "orderdoc_outcomes_only": [*ours, "--outcomes-only"],
        "duckdb": peer,
    }
    runs: dict[str, list] = {name: [] for name in commands}
    for _ in range(args.repeat):
        for name, cmd in commands.items():
            runs[name].append(measure(cmd))
    best = {name: min(rs, key=lambda r: r.seconds) for name, rs in runs.items()}
    load = os.getloadavg()[0]
    result = {
        "events": args.events,
        "partitions": args.partitions,
        "cpus": os.cpu_count(),
        "load_average_1m_after": round(load, 1),
        "python": platform.python_version(),
    }
    for name, run in best.items():
        result[f"{name}_seconds"] = round(run.seconds, 2)
        result[f"{name}_cpu_seconds"] = round(run.cpu_seconds, 2)
        result[f"{name}_peak_mb"] = round(run.peak_mb)
    for name in ("orderdoc", "orderdoc_outcomes_only"):
        result[f"ratio_{name}_over_duckdb"] = round(best[name].seconds / best["duckdb"].seconds, 2)
        result[f"cpu_ratio_{name}_over_duckdb"] = round(
            best[name].cpu_seconds / best["duckdb"].cpu_seconds, 2
        )
    print(json.dumps(result, indent=2))
    (HERE / "results").mkdir(exist_ok=True)
    (HERE / "results" / f"replay_{args.events}.json").write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
