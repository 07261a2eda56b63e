"""Benchmark ``orderdoc aggregate`` (Spark local[2]) against polars and DuckDB peers.

Same files, same run, one process per engine and size (2 threads each). The data comes from
``bench/aggregate_generate.py`` (git-ignored ``bench/data/asa-logs``); a size of X GB takes the
first files of the sorted listing until X GB. Results go to ``bench/results/aggregate.json``
and a Markdown table is printed for ``docs/performance.md``.

    .venv/bin/python bench/aggregate_generate.py --gb 1.0
    .venv/bin/python bench/aggregate_bench.py --sizes 0.25 0.5 1.0
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = HERE / "data" / "asa-logs"
RESULTS = HERE / "results" / "aggregate.json"
ENGINES = ("spark", "polars", "duckdb")
AGREE_KEYS = ("records_total", "events_by_kind", "idle_partitions", "jobs")


def pick(files: list[Path], gb: float) -> tuple[list[str], int]:
    chosen, total = [], 0
    for path in files:
        if total >= gb * 1e9:
            break
        chosen.append(str(path))
        total += path.stat().st_size
    return chosen, total


def run_one(engine: str, files: list[str], out: Path) -> dict:
    env = dict(os.environ, POLARS_MAX_THREADS="2", SPARK_LOCAL_IP="127.0.0.1")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, str(HERE / "aggregate_peers.py"), engine, str(out), *files],
        capture_output=True, text=True, env=env, check=False,
    )  # fmt: skip
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    shutil.rmtree(out, ignore_errors=True)
    if done.returncode != 0:
        msg = f"{engine} failed:\n{done.stderr[-3000:]}"
        raise SystemExit(msg)
    result = json.loads(done.stdout.strip().splitlines()[-1])
    result["process_s"] = wall
    # CPU of the whole process tree, start-up included; for Spark the peer measures the JVM
    # and its Python workers itself (they are not reaped children of the peer process)
    result["process_cpu_s"] = result.get("tree_cpu_s", cpu)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=float, nargs="+", default=[0.25, 0.5, 1.0])
    parser.add_argument("--engines", nargs="+", default=list(ENGINES), choices=ENGINES)
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--results", type=Path, default=RESULTS)
    args = parser.parse_args()
    files = sorted(args.data.rglob("*.json"))
    if not files:
        raise SystemExit(f"no data under {args.data}: run bench/aggregate_generate.py first")
    rows = []
    for gb in args.sizes:
        chosen, size = pick(files, gb)
        results = {}
        for engine in args.engines:
            load = os.getloadavg()[0]
            result = run_one(engine, chosen, HERE / "data" / f"out-{engine}")
            result |= {"gb": gb, "bytes": size, "files": len(chosen), "load_before": load}
            results[engine] = result
            print(f"{gb:5.2f} GB {engine:12s} job {result['job_s']:8.1f}s  start-up "
                  f"{result['startup_s']:6.1f}s  process CPU {result['process_cpu_s']:7.1f}s  "
                  f"load {load:4.1f}", flush=True)  # fmt: skip
        summaries = [{k: r["summary"][k] for k in AGREE_KEYS} for r in results.values()]
        agree = all(s == summaries[0] for s in summaries)
        for result in results.values():
            result["agree"] = agree
            rows.append(result)
        args.results.parent.mkdir(parents=True, exist_ok=True)
        args.results.write_text(json.dumps(rows, indent=1) + "\n")
    print()
    print(
        "| GB | files | records | engine | job s | JVM start-up s | process CPU s "
        "| × fastest peer | load | agree |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for gb in args.sizes:
        at = [r for r in rows if r["gb"] == gb]
        fastest = min((r["job_s"] for r in at if not r["engine"].startswith("spark")), default=None)
        for r in at:
            ratio = f"{r['job_s'] / fastest:.1f}" if fastest else "-"
            startup = f"{r['startup_s']:.1f}" if r["engine"].startswith("spark") else "-"
            print(f"| {r['bytes'] / 1e9:.2f} | {r['files']} | {r['summary']['records_total']:,} | "
                  f"{r['engine']} | {r['job_s']:.1f} | {startup} | {r['process_cpu_s']:.1f} | {ratio} | "
                  f"{r['load_before']:.1f} | {r['agree']} |")  # fmt: skip


if __name__ == "__main__":
    main()
