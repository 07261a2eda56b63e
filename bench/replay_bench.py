"""Benchmark: `orderdoc replay` as a whole process against DuckDB classification peers.

    python bench/replay_bench.py [--events 10000000] [--partitions 8] [--repeat 3] [--check]

Generates the capture once (bench/data/, git-ignored), then times each command as a separate
process (start-up, reading, writing included), interleaved, and reports for each the median
wall time, CPU time and peak RSS over the repeats, and the ratios orderdoc / peer.
orderdoc's run is the full replay: System.Timestamp, flags, watermarks, release times, output
order, plus diagnostics.jsonl and metrics.parquet (and ``--outcomes-only`` without them).

Peers: ``duckdb_fair`` (bench/replay_peer_fair.py, the yardstick: reads the capture as is,
orders by arrival and DuckDB's file row number, writes every input column plus late / early /
out_of_order / system_timestamp) and ``duckdb_old`` (bench/replay_peer_duckdb.py, the earlier
yardstick with casts and a row_number() over the whole input), so both ratios are visible.
``--check`` verifies that the fair peer's flags and System.Timestamp equal orderdoc's.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from make_events import make  # noqa: E402
from peers import measure  # noqa: E402


def check(outcomes: Path, peer: Path) -> bool:
    """Whether the fair peer's four columns equal orderdoc's, event by event.

    The peer's output has no defined row order, so both are sorted by their input columns
    (which identify an event in the bench capture) before comparing."""
    import polars as pl

    keys = ["arrival_time", "partition_id", "event_time", "device_key", "value"]
    cols = ["late", "early", "out_of_order", "system_timestamp"]
    ours = pl.read_parquet(outcomes, columns=[*keys, *cols]).with_columns(
        pl.col("system_timestamp").dt.replace_time_zone(None)
    )
    theirs = pl.read_parquet(peer, columns=[*keys, *cols])
    ours, theirs = ours.sort(keys), theirs.sort(keys)
    return ours.equals(theirs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--events", type=int, default=10_000_000)
    parser.add_argument("--partitions", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--late", default="5s")
    parser.add_argument("--out-of-order", default="1s")
    parser.add_argument("--check", action="store_true", help="compare the fair peer's flags")
    args = parser.parse_args()
    data = HERE / "data"
    data.mkdir(exist_ok=True)
    capture = data / f"events2_{args.events}_{args.partitions}p.parquet"
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
        "--late-arrival",
        args.late,
        "--out-of-order",
        args.out_of_order,
    ]
    late_s = str(int(args.late.rstrip("s")))
    ooo_s = str(int(args.out_of_order.rstrip("s")))
    old = [py, str(HERE / "replay_peer_duckdb.py"), str(capture), str(data / "peer_old.parquet"),
           late_s, ooo_s]  # fmt: skip
    fair = [py, str(HERE / "replay_peer_fair.py"), str(capture), str(data / "peer_fair.parquet"),
            late_s, ooo_s, str(os.cpu_count() or 1)]  # fmt: skip
    commands = {
        "orderdoc": ours,
        "orderdoc_outcomes_only": [*ours, "--outcomes-only"],
        "duckdb_fair": fair,
        "duckdb_old": old,
    }
    runs: dict[str, list] = {name: [] for name in commands}
    loads = [round(os.getloadavg()[0], 1)]
    for _ in range(args.repeat):
        for name, cmd in commands.items():
            runs[name].append(measure(cmd))
        loads.append(round(os.getloadavg()[0], 1))
    result = {
        "events": args.events,
        "partitions": args.partitions,
        "late": args.late,
        "out_of_order": args.out_of_order,
        "repeats": args.repeat,
        "cpus": os.cpu_count(),
        "load_average_1m_before_and_after_each_round": loads,
        "python": platform.python_version(),
    }
    med = {}
    for name, rs in runs.items():
        med[name] = statistics.median(r.seconds for r in rs)
        result[f"{name}_seconds_median"] = round(med[name], 2)
        result[f"{name}_seconds_all"] = [round(r.seconds, 2) for r in rs]
        result[f"{name}_cpu_seconds_median"] = round(
            statistics.median(r.cpu_seconds for r in rs), 2
        )
        result[f"{name}_peak_mb_max"] = round(max(r.peak_mb for r in rs))
    for name in ("orderdoc", "orderdoc_outcomes_only"):
        for peer in ("duckdb_fair", "duckdb_old"):
            result[f"ratio_{name}_over_{peer}"] = round(med[name] / med[peer], 2)
            result[f"cpu_ratio_{name}_over_{peer}"] = round(
                result[f"{name}_cpu_seconds_median"] / result[f"{peer}_cpu_seconds_median"], 2
            )
    if args.check:
        result["fair_peer_equals_orderdoc"] = check(
            data / "replay_out" / "outcomes.parquet", data / "peer_fair.parquet"
        )
    print(json.dumps(result, indent=2))
    (HERE / "results").mkdir(exist_ok=True)
    (HERE / "results" / f"replay_{args.events}.json").write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
