"""Scale benchmark of ``orderdoc replay --spark`` (issue 21, point 6; docs/spark-replay.md).

Generates captures of the given sizes in chunks (never the whole capture in memory: each
chunk covers the next stretch of arrival time, so the file is in arrival order as Event Hubs
hands it over), then times whole ``orderdoc replay --spark`` processes on ``local[1]`` and
``local[2]`` with the driver's memory capped, and with ``--local`` the local replay. Prints one
line per run (wall s; CPU s of all the run's processes, sampled from /proc; peak RSS of the
JVM and of all the run's processes, sampled from /proc; the load average, as other work on the
machine slows a run), the log-log slope of wall time over the sizes, the
``local[1]``/``local[2]`` speed-up, with ``--check`` whether the Spark outcomes equal the local
replay's on the first size, and with ``--check-partitions K`` whether, on the last size, the
outcomes of partitions 0..K-1 equal the local replay of those partitions' events alone (under
PARTITION BY each partition is replayed on its own: a slice of a capture too large for the
local replay). Every run is appended to ``bench/results/replay_spark.jsonl``; ``--plot PNG``
draws them (docs/replay-spark-scaling.png).

    .venv/bin/python bench/replay_spark_bench.py --sizes 10M,50M,200M --check   # hours
    .venv/bin/python bench/replay_spark_bench.py --sizes 200M --masters local[2] --check-partitions 1
    .venv/bin/python bench/replay_spark_bench.py --sizes 1M --masters local[2] --local
    .venv/bin/python bench/replay_spark_bench.py --sizes 20k --check            # smoke
    .venv/bin/python bench/replay_spark_bench.py --plot docs/replay-spark-scaling.png

The job replayed: TIMESTAMP BY event_time, late 5 s, out of order 1 s, Adjust, PARTITION BY
PartitionId (the jobs ``--spark`` replays so far), ``--outcomes-only``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow.parquet as pq

S = 1_000_000_000
BASE = 1_767_225_600 * S  # 2026-01-01T00:00:00Z
RATE = 2_000  # events per second over all partitions
CHUNK = 2_000_000
ROOT = Path(__file__).resolve().parents[1]
ORDERDOC = [sys.executable, "-m", "diagnostics"]
FLAGS = [
    "--timestamp-by", "event_time", "--late-arrival", "5s", "--out-of-order", "1s",
    "--partition-by", "--outcomes-only",
]  # fmt: skip


def size(text: str) -> int:
    """``10M``, ``200M``, ``20k`` or a plain number."""
    scale = {"k": 1_000, "m": 1_000_000}.get(text[-1].lower(), 1)
    return int(float(text[:-1] if scale > 1 else text) * scale)


def chunk(start: int, n: int, partitions: int, rng: np.random.Generator) -> pl.DataFrame:
    """Events ``start .. start + n``: arrivals over their own stretch of time, sorted."""
    first = BASE + start * S // RATE
    arrival = first + np.sort(rng.integers(0, max(n * S // RATE, 1), n, dtype=np.int64))
    delay = (rng.lognormal(mean=-0.2, sigma=0.8, size=n) * S).astype(np.int64)
    odd = rng.random(n)
    delay = np.where(odd < 0.002, rng.integers(10, 900, n) * S, delay)  # late outliers
    delay = np.where(odd > 0.9995, -rng.integers(301, 900, n) * S, delay)  # early outliers
    frame = pl.DataFrame(
        {
            "device_id": rng.integers(0, 5_000, n, dtype=np.int64),
            "partition_id": rng.integers(0, partitions, n, dtype=np.int64),
            "event_time": arrival - delay,
            "arrival_time": arrival,
            "value": rng.normal(20, 5, n),
        }
    )
    return frame.with_columns(
        pl.col("event_time", "arrival_time").cast(pl.Datetime("ns")).dt.replace_time_zone("UTC")
    )


def generate(path: Path, events: int, partitions: int, seed: int) -> Path:
    """The capture at ``path`` (kept between runs), written chunk by chunk."""
    if path.exists():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    tmp = path.with_name(f".{path.name}.tmp")
    writer = None
    for start in range(0, events, CHUNK):
        table = chunk(start, min(CHUNK, events - start), partitions, rng).to_arrow()
        writer = writer or pq.ParquetWriter(tmp, table.schema, compression="snappy")
        writer.write_table(table, row_group_size=1_000_000)
    assert writer is not None
    writer.close()
    tmp.replace(path)
    return path


def _tree(root: int) -> dict[int, tuple[str, int, float]]:
    """The processes under ``root`` (itself included): pid -> (name, RSS bytes, CPU s so
    far), from /proc."""
    parents: dict[int, int] = {}
    names: dict[int, tuple[str, int, float]] = {}
    tick = os.sysconf("SC_CLK_TCK")
    page = os.sysconf("SC_PAGE_SIZE")
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            statm = Path(f"/proc/{entry}/statm").read_text().split()
        except OSError:
            continue
        name = stat[stat.index("(") + 1 : stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2 :].split()
        parents[int(entry)] = int(fields[1])
        cpu = (int(fields[11]) + int(fields[12])) / tick
        names[int(entry)] = (name, int(statm[1]) * page, cpu)
    tree, frontier = {root}, [root]
    while frontier:
        pid = frontier.pop()
        children = [c for c, parent in parents.items() if parent == pid and c not in tree]
        tree.update(children)
        frontier.extend(children)
    return {pid: names[pid] for pid in tree if pid in names}


def timed(command: list[str]) -> dict[str, float]:
    """Run ``command``: wall s, CPU s of its process tree (children reaped by it), and, sampled
    from /proc every 0.25 s, the peak RSS (MB) of its JVM (the Spark driver; in local mode the
    executors too) and of the whole tree (the Python driver, the JVM, Spark's Python workers).
    The load average (1 min) at the end: other work on the machine slows a run down."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    env = {**os.environ, "SPARK_LOCAL_IP": os.environ.get("SPARK_LOCAL_IP", "127.0.0.1")}
    jvm = total = 0
    cpu_of: dict[int, float] = {}  # the last CPU seconds seen of every process of the tree
    with tempfile.TemporaryFile() as err:
        process = subprocess.Popen(
            command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=err
        )
        while process.poll() is None:
            tree = _tree(process.pid)
            jvm = max(jvm, sum(rss for name, rss, _ in tree.values() if name == "java"))
            total = max(total, sum(rss for _, rss, _ in tree.values()))
            cpu_of.update({pid: cpu for pid, (_, _, cpu) in tree.items()})
            time.sleep(0.25)
        wall = time.monotonic() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if process.returncode != 0:
            err.seek(0)
            sys.exit(f"{' '.join(command)} failed:\n{err.read().decode()[-2000:]}")
    reaped = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    cpu = max(reaped, sum(cpu_of.values()))  # sampled: misses at most the last 0.25 s
    return {
        "wall": wall,
        "cpu": cpu,
        "jvm_mb": jvm / 2**20,
        "tree_mb": total / 2**20,
        "load": os.getloadavg()[0],
    }


def spark_run(capture: Path, out: Path, master: str, driver_memory: str) -> dict[str, float]:
    return timed(
        [*ORDERDOC, "replay", str(capture), "--out", str(out), *FLAGS, "--spark",
         "--master", master, "--conf", f"spark.driver.memory={driver_memory}",
         "--conf", "spark.ui.enabled=false"]
    )  # fmt: skip


def local_run(capture: Path, out: Path) -> dict[str, float]:
    return timed([*ORDERDOC, "replay", str(capture), "--out", str(out), *FLAGS])


def slope(points: list[tuple[int, float]]) -> float | None:
    """Least-squares slope of log(time) over log(events)."""
    if len(points) < 2:
        return None
    x = np.log([p[0] for p in points])
    y = np.log([p[1] for p in points])
    return float(np.polyfit(x, y, 1)[0])


def same_outcomes(local: Path, spark: Path) -> bool:
    """Every outcome column equal, event for event (read lazily, column by column)."""
    columns = pl.read_parquet_schema(local)
    for name in columns:
        a = pl.scan_parquet(local).select(name).collect()
        b = pl.scan_parquet(spark / "*.parquet").select(name).collect()
        if not a.equals(b):
            print(f"column {name} differs")
            return False
    return True


def slice_check(capture: Path, spark_out: Path, partitions: int, data: Path) -> bool:
    """Under PARTITION BY each partition is replayed on its own: the Spark outcomes of the
    partitions below ``partitions`` equal the local replay of those partitions' events alone
    (cut from the capture as a stream), column by column. Event ids and output ranks are the
    capture's there and the slice's here: the ids must keep their order, and the ranks must
    order the slice's events as the local ranks do."""
    cut = data / f"slice_{capture.stem}_{partitions}.parquet"
    if not cut.exists():
        pl.scan_parquet(capture).filter(pl.col("partition_id") < partitions).sink_parquet(cut)
    out = data / f"local_out_{cut.stem}"
    print(line(pl.scan_parquet(cut).select(pl.len()).collect().item(), "local replay (slice)",
               local_run(cut, out)), flush=True)  # fmt: skip
    local = out / "outcomes.parquet"
    spark = pl.scan_parquet(spark_out / "*.parquet").filter(pl.col("partition_id") < partitions)
    for name in pl.read_parquet_schema(local):
        a = pl.scan_parquet(local).select(name).collect().to_series()
        if name == "event_id":
            b = spark.select(pl.col(name).diff().drop_nulls().min()).collect().item()
            same = b is None or b > 0
        elif name == "output_rank":
            ranks = spark.select(pl.col(name).rank("ordinal") - 1).collect().to_series()
            same = a.equals(ranks.cast(a.dtype), check_names=False)
        else:
            same = a.equals(spark.select(name).collect().to_series())
        if not same:
            print(f"column {name} differs")
            return False
    return True


def record(results: Path, n: int, what: str, figures: dict[str, float]) -> None:
    """One run appended to ``results`` (JSON lines), for ``--plot``."""
    results.parent.mkdir(parents=True, exist_ok=True)
    with results.open("a", encoding="utf-8") as out:
        out.write(json.dumps({"events": n, "run": what, **figures}) + "\n")


def plot(results: Path, png: Path) -> None:
    """Wall time over events (log-log, with the fitted slopes) and peak memory over events
    (from 0), of every run kind in ``results`` (the last figure of each size)."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    runs: dict[str, dict[int, dict[str, float]]] = {}
    for text in results.read_text(encoding="utf-8").splitlines():
        row = json.loads(text)
        runs.setdefault(row["run"], {})[int(row["events"])] = row
    panels = (
        ("wall", "wall time (s)"),
        ("jvm_mb", "JVM peak (MB)"),
        ("tree_mb", "all processes peak (MB)"),
    )
    fig = make_subplots(rows=1, cols=3, subplot_titles=[title for _, title in panels])
    palette = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728")
    for i, (what, by_size) in enumerate(sorted(runs.items())):
        sizes = sorted(by_size)
        fitted = slope([(n, by_size[n]["wall"]) for n in sizes])
        label = what + (f" (wall slope {fitted:.2f})" if fitted is not None else "")
        for col, (key, _) in enumerate(panels, start=1):
            fig.add_trace(
                go.Scatter(x=sizes, y=[by_size[n][key] or None for n in sizes],  # no JVM: no point
                           mode="lines+markers", name=label, legendgroup=what,
                           line={"color": palette[i % len(palette)]}, showlegend=col == 1),
                row=1, col=col,
            )  # fmt: skip
    fig.update_xaxes(type="log", title_text="events in the capture")
    fig.update_yaxes(type="log", row=1, col=1)
    fig.update_yaxes(rangemode="tozero", row=1, col=2)  # memory from 0: flat reads as flat
    fig.update_yaxes(rangemode="tozero", row=1, col=3)
    fig.update_layout(
        title="orderdoc replay --spark (driver 4 GB) and the local replay on 2 cores, 24 GB; "
        "slope 1 = linear",
        width=1300,
        height=550,
        legend={"orientation": "h", "x": 0, "y": -0.2},
        margin={"b": 120},
    )
    fig.write_image(png)


def line(n: int, what: str, figures: dict[str, float]) -> str:
    return (
        f"{n:>12,} events  {what:<16}: wall {figures['wall']:8.1f} s  "
        f"CPU {figures['cpu']:8.1f} s  JVM peak {figures['jvm_mb']:6.0f} MB  "
        f"all processes peak {figures['tree_mb']:6.0f} MB  load {figures['load']:5.1f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="10M,50M,200M")
    parser.add_argument("--masters", default="local[2],local[1]")
    parser.add_argument("--partitions", type=int, default=8)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--driver-memory", default="4g")
    parser.add_argument("--data", type=Path, default=ROOT / "bench" / "data")
    parser.add_argument("--local", action="store_true", help="time the local replay too")
    parser.add_argument(
        "--check", action="store_true", help="outcomes equal to the local replay's (first size)"
    )
    parser.add_argument(
        "--check-partitions",
        type=int,
        metavar="K",
        help="on the last size, the outcomes of partitions 0..K-1 equal their local replay",
    )
    parser.add_argument(
        "--spark-out", type=Path, help="with --check-partitions: a finished run's outcomes"
    )
    parser.add_argument(
        "--results", type=Path, default=ROOT / "bench" / "results" / "replay_spark.jsonl",
        help="every run is appended here (JSON lines)",
    )  # fmt: skip
    parser.add_argument(
        "--plot", type=Path, metavar="PNG", help="only draw the runs in --results into PNG"
    )
    args = parser.parse_args()
    if args.plot is not None:
        plot(args.results, args.plot)
        return
    sizes = [size(s) for s in args.sizes.split(",")]
    if args.spark_out is not None:  # only the slice check, on a finished run
        capture = args.data / f"spark_events_{sizes[-1]}.parquet"
        equal = slice_check(capture, args.spark_out, args.check_partitions or 1, args.data)
        print(f"partitions below {args.check_partitions or 1}: outcomes equal: {equal}")
        return
    masters = args.masters.split(",")
    walls: dict[str, list[tuple[int, float]]] = {m: [] for m in masters}
    for n in sizes:
        capture = generate(args.data / f"spark_events_{n}.parquet", n, args.partitions, args.seed)
        spark_out = {}
        for master in masters:
            spark_out[master] = args.data / f"spark_out_{n}_{master[6:-1]}"
            figures = spark_run(capture, spark_out[master], master, args.driver_memory)
            walls[master].append((n, figures["wall"]))
            print(line(n, f"--spark {master}", figures), flush=True)
            record(args.results, n, f"--spark {master}", figures)
        if args.local or (args.check and n == sizes[0]):
            out = args.data / f"local_out_{n}"
            figures = local_run(capture, out)
            print(line(n, "local replay", figures), flush=True)
            record(args.results, n, "local replay", figures)
            if args.check and n == sizes[0]:
                equal = same_outcomes(out / "outcomes.parquet", spark_out[masters[0]] / "outcomes")
                print(f"outcomes equal to the local replay's: {equal}", flush=True)
    if args.check_partitions:
        last = sizes[-1]
        capture = args.data / f"spark_events_{last}.parquet"
        equal = slice_check(
            capture, spark_out[masters[0]] / "outcomes", args.check_partitions, args.data
        )
        print(f"{last:,} events, partitions below {args.check_partitions}: outcomes equal "
              f"to their local replay's: {equal}", flush=True)  # fmt: skip
    for master, points in walls.items():
        fitted = slope(points)
        if fitted is not None:
            print(f"log-log slope of wall time, {master}: {fitted:.2f}")
    if "local[1]" in walls and "local[2]" in walls:
        for (n, one), (_, two) in zip(walls["local[1]"], walls["local[2]"], strict=True):
            print(f"{n:>12,} events  local[1] / local[2]: {one / two:.2f}x")


if __name__ == "__main__":
    main()
