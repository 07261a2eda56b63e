"""Scaling picture: time and peak memory of replay, whatif and aggregate at 4 sizes, log-log.

    python bench/scaling_bench.py [--events 500000 1000000 2000000 4000000]
                                  [--log-mb 32 64 128 256] [--png docs/scaling.png]

Each command runs as a whole process (start-up included) on inputs that double in size:

* ``replay``: ``orderdoc replay`` (default outputs: outcomes, diagnostics.jsonl,
  metrics.parquet) on the bench capture of N events (bench/make_events.py, 8 partitions);
* ``whatif``: ``orderdoc whatif`` on the same capture, 3 late x 2 out-of-order settings,
  without the PNG chart (``--no-png``; the chart's browser start is a constant);
* ``aggregate``: ``orderdoc aggregate --master local[2]`` on the first files of
  bench/data/asa-logs (bench/aggregate_generate.py) up to the given MB.

For each command it fits ``log(seconds) = a + slope * log(size)`` (least squares) over the 4
sizes, and the same for peak memory: a slope near 1 means linear, so a 100x larger input takes
about 100^slope times as long. Peak memory: the largest resident set the kernel reports for
the process (replay, whatif); for ``aggregate`` the sum over the process tree (driver, JVM,
Python workers) sampled every 0.25 s, and its CPU likewise from /proc. Results: bench/results/scaling.json and the PNG (plotly + kaleido).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from peers import measure, measure_tree  # noqa: E402

DATA = HERE / "data"
LOGS = DATA / "asa-logs"


def slope(xs: list[float], ys: list[float]) -> float:
    """The least-squares slope of log(ys) over log(xs)."""
    lx, ly = [math.log(x) for x in xs], [math.log(y) for y in ys]
    mx, my = sum(lx) / len(lx), sum(ly) / len(ly)
    num = sum((a - mx) * (b - my) for a, b in zip(lx, ly, strict=True))
    return num / sum((a - mx) ** 2 for a in lx)


def capture(events: int) -> Path:
    """The bench capture of ``events`` events, made in a child process if missing: a child
    forked from a large parent would inherit its resident set into its own peak."""
    path = DATA / f"events2_{events}_8p.parquet"
    if not path.exists():
        cmd = [
            sys.executable,
            str(HERE / "make_events.py"),
            "--events",
            str(events),
            "--out",
            str(path),
        ]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return path


def log_files(mb: float) -> tuple[list[str], int]:
    files, total = [], 0
    for path in sorted(LOGS.rglob("*.json")):
        if total >= mb * 1e6:
            break
        files.append(str(path))
        total += path.stat().st_size
    return files, total


def commands(args: argparse.Namespace) -> list[tuple[str, float, list[str]]]:
    py, out = sys.executable, str(DATA / "scaling_out")
    runs: list[tuple[str, float, list[str]]] = []
    for n in args.events:
        ev = str(capture(n))
        runs.append(("replay", n, [py, "-m", "diagnostics", "replay", ev, "--out", out,
                                   "--timestamp-by", "event_time", "--out-of-order", "1s"]))  # fmt: skip
        runs.append(("whatif", n, [py, "-m", "diagnostics", "whatif", ev, "--out", out,
                                   "--timestamp-by", "event_time", "--late-arrival", "0s,5s,1m",
                                   "--out-of-order", "0s,1s", "--no-png"]))  # fmt: skip
    if not LOGS.exists() or log_files(max(args.log_mb))[1] < max(args.log_mb) * 1e6 * 0.98:
        gb = str(max(args.log_mb) / 1000 * 1.02)
        subprocess.run([py, str(HERE / "aggregate_generate.py"), "--gb", gb], check=True)
    for mb in args.log_mb:
        files, size = log_files(mb)
        runs.append(("aggregate", size / 1e6, [py, "-m", "diagnostics", "aggregate", *files,
                                               "--out", out, "--master", "local[2]"]))  # fmt: skip
    return runs


def figure(results: dict, png: Path) -> None:
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    units = {"replay": "events", "whatif": "events", "aggregate": "MB of logs"}
    colors = {"replay": "#1f77b4", "whatif": "#2ca02c", "aggregate": "#d62728"}
    panels = (("seconds", "wall time (s)"), ("cpu_seconds", "CPU time (s)"),
              ("peak_mb", "peak memory (MB)"))  # fmt: skip
    fig = make_subplots(rows=1, cols=3, subplot_titles=[title for _, title in panels])
    for name, rows in results["commands"].items():
        base = rows[0]["size"]
        sizes = ", ".join(f"{r['size']:,.0f}" for r in rows)
        slopes = results["slopes"][name]
        label = (f"{name} ({sizes} {units[name]}); slopes: wall {slopes['seconds']:.2f}, "
                 f"CPU {slopes['cpu_seconds']:.2f}, memory {slopes['peak_mb']:.2f}")  # fmt: skip
        for col, (key, _) in enumerate(panels, start=1):
            fig.add_trace(
                go.Scatter(x=[r["size"] / base for r in rows], y=[r[key] for r in rows],
                           mode="lines+markers", name=label, legendgroup=name,
                           line={"color": colors[name]}, showlegend=col == 1),
                row=1, col=col,
            )  # fmt: skip
    fig.update_xaxes(type="log", title_text="input size / smallest size", tickvals=[1, 2, 4, 8])
    fig.update_yaxes(type="log")
    loads = [r["load"] for rows in results["commands"].values() for r in rows]
    fig.update_layout(
        title=f"orderdoc scaling on 2 shared cores (1-minute load {min(loads)}-{max(loads)}); "
        "slope 1 = linear: a 100x input takes 100^slope x",
        width=1300,
        height=600,
        legend={
            "orientation": "h",
            "x": 0,
            "y": -0.25,
            "entrywidth": 1,
            "entrywidthmode": "fraction",
        },
        margin={"b": 150},
    )
    fig.write_image(png)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--events", type=int, nargs=4, default=[500_000, 1_000_000, 2_000_000, 4_000_000]
    )
    parser.add_argument("--log-mb", type=float, nargs=4, default=[32, 64, 128, 256])
    parser.add_argument("--png", type=Path, default=HERE.parent / "docs" / "scaling.png")
    parser.add_argument("--replot", action="store_true", help="redraw from results/scaling.json")
    args = parser.parse_args()
    if args.replot:
        figure(json.loads((HERE / "results" / "scaling.json").read_text()), args.png)
        return
    DATA.mkdir(exist_ok=True)
    runs = commands(args)
    env = dict(os.environ, SPARK_LOCAL_IP="127.0.0.1")
    results: dict = {"load_before": round(os.getloadavg()[0], 1), "commands": {}}
    for name, size, cmd in runs:
        run = (measure_tree if name == "aggregate" else measure)(cmd, env=env)
        row = {"size": size, "seconds": round(run.seconds, 2), "cpu_seconds": round(run.cpu_seconds, 2),
               "peak_mb": round(run.peak_mb), "load": round(os.getloadavg()[0], 1)}  # fmt: skip
        results["commands"].setdefault(name, []).append(row)
        print(json.dumps({"command": name, **row}), flush=True)
    results["load_after"] = round(os.getloadavg()[0], 1)
    results["slopes"] = {
        name: {key: round(slope([r["size"] for r in rows], [r[key] for r in rows]), 2)
               for key in ("seconds", "cpu_seconds", "peak_mb")}
        for name, rows in results["commands"].items()
    }  # fmt: skip
    (HERE / "results").mkdir(exist_ok=True)
    (HERE / "results" / "scaling.json").write_text(json.dumps(results, indent=2))
    print(json.dumps(results["slopes"], indent=2))
    figure(results, args.png)
    print(f"wrote {args.png}")


if __name__ == "__main__":
    main()
