"""Where a default ``orderdoc replay`` spends its time: each stage alone, one after another.

    python bench/replay_stages.py [--events 5000000]

Runs, in one process and *sequentially* (the command overlaps some of them on threads), the
stages of ``orderdoc replay CAPTURE --timestamp-by event_time --out-of-order 1s`` on the bench
capture and prints, per stage, wall and CPU seconds (all threads of the process), plus the
floor measurements: reading the capture and writing it back unchanged (what any peer that
keeps every input column pays), and writing the outcome frame alone.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

STAGES: list[dict] = []


class stage:
    def __init__(self, name: str) -> None:
        self.name = name

    def __enter__(self) -> None:
        self.wall, self.cpu = time.perf_counter(), time.process_time()

    def __exit__(self, *exc: object) -> None:
        row = {"stage": self.name, "wall_s": round(time.perf_counter() - self.wall, 2),
               "cpu_s": round(time.process_time() - self.cpu, 2),
               "load": round(os.getloadavg()[0], 1)}  # fmt: skip
        STAGES.append(row)
        print(json.dumps(row), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=5_000_000)
    args = parser.parse_args()
    capture_path = HERE / "data" / f"events2_{args.events}_8p.parquet"
    if not capture_path.exists():
        from make_events import make

        make(args.events, 8, seed=7).write_parquet(capture_path)
    with stage("imports"):
        import polars as pl

        from diagnostics.cli import build_parser
        from diagnostics.cli.diagnostics_args import options_from_args
        from diagnostics.cli.replay import run_replay
        from diagnostics.engine.summary import summarize
        from diagnostics.engine.watermarks import watermark_delay_per_minute
        from diagnostics.instrument.aggregate import aggregate_errors, example_payloads
        from diagnostics.instrument.correlation import input_digest
        from diagnostics.instrument.metrics import metrics_frame
        from diagnostics.instrument.run import (
            _notices,
            instrument,
            write_diagnostics,
            write_metrics,
        )
    out = Path(tempfile.mkdtemp(prefix="replay-stages-"))
    cli = build_parser().parse_args(["replay", str(capture_path), "--out", str(out),
                                     "--timestamp-by", "event_time", "--out-of-order", "1s"])  # fmt: skip
    with stage("floor: read capture (polars)"):
        raw = pl.read_parquet(capture_path)
    with stage("floor: write capture unchanged (snappy)"):
        raw.write_parquet(out / "copy.parquet", compression="snappy")
    with stage("read + replay (engine, outcome frame)"):
        result = run_replay(cli)
    outcomes = result.outcomes
    with stage(f"write outcomes.parquet ({outcomes.width} columns, snappy)"):
        outcomes.write_parquet(out / "outcomes.parquet", compression="snappy")
    with stage("write outcome columns only (no input columns)"):
        added = [c for c in outcomes.columns if c not in raw.columns]
        outcomes.select(added).write_parquet(out / "added.parquet", compression="snappy")
    options = options_from_args(cli)
    with stage("diagnostics: input digest"):
        input_digest(outcomes)
    with stage("diagnostics: idle notices"):
        _notices(outcomes, options, tuple(result.partitions))
    with stage("diagnostics: error aggregates + examples"):
        aggregates = aggregate_errors(outcomes, options.error_window_ns, [])
        example_payloads(outcomes, aggregates["example_event_id"].to_list())
    with stage("diagnostics: watermark delay per minute"):
        delay = watermark_delay_per_minute(result)
    with stage("diagnostics: metrics frame"):
        metrics_frame(outcomes, options.job, tuple(result.partitions), delay)
    with stage("diagnostics: whole instrument() (threads as in the command)"):
        done = instrument(outcomes, options, policy_text="x", partitions=tuple(result.partitions),
                          watermark_delay=lambda: watermark_delay_per_minute(result))  # fmt: skip
    with stage("diagnostics: write jsonl + metrics.parquet"):
        write_diagnostics(out / "diagnostics.jsonl", done.records)
        write_metrics(out / "metrics.parquet", done.metrics)
    with stage("summary"):
        summarize(result)
    sizes = {p.name: round(p.stat().st_size / 2**20) for p in out.iterdir()}
    print(json.dumps({"events": args.events, "file_mb": sizes}))
    for path in out.iterdir():
        path.unlink()
    out.rmdir()


if __name__ == "__main__":
    main()
