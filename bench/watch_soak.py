"""Soak benchmark: ``orderdoc watch`` on live logs for a long time; does anything grow?

A writer appends to the hourly ``PT1H.json`` of several jobs every second, in ASA's folder
layout (tests/watch/livelogs.py: data errors with bursts, a partition idle twice every two
hours, malformed lines, new hour files, an AzureMetrics export of the watermark delay), with
simulated time running ``--speed`` times faster than real time and some lines split across two
writes. ``orderdoc watch LOGS --state STATE --interval 2s --webhook URL --metrics-port P
--evaluate-at data-end`` runs on it as a user would start it, posting to a loopback receiver.

Every minute it records: the state folder's files (in all, and in agg/data_errors,
agg/quarantine, jobs/, checkpoint/), its bytes, the ticks' times (from
``orderdoc_watch_tick_seconds``), the RSS of the watcher's Python process and of its JVM, and
the JVM's heap (used, and used after a full GC, from ``jcmd``). Minutes count from the end of
the first tick (Spark's start and a first pass over what was written meanwhile). At the end
it prints the least-squares slope of each per minute over the second half of the run (the
first minutes are warm-up: the JVM compiles, the first hour files arrive), and checks what
was told against ``orderdoc alerts`` on one aggregate of the final logs: the same episodes of
every alert, told once each, and ``orderdoc_alerts_firing`` equal to the alerts firing.

Usage::

    .venv/bin/python bench/watch_soak.py [--minutes 30] [--speed 30] [--jobs 4]
        [--interval 2s] [--json out.json] [--keep DIR]
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections import Counter
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from diagnostics.aggregates import write_tables  # noqa: E402
from diagnostics.logs.aggregate import aggregate_files  # noqa: E402
from diagnostics.logs.inputs import expand_inputs  # noqa: E402
from diagnostics.rules.evaluate import evaluate_detailed  # noqa: E402
from diagnostics.rules.loader import load_rules  # noqa: E402
from diagnostics.rules.model import AlertState  # noqa: E402
from diagnostics.watch.alertstate import AlertStore  # noqa: E402
from tests.watch import livelogs  # noqa: E402
from tests.watch.servers import free_port, receiver  # noqa: E402

JOBS = ("orders", "payments", "sensors", "billing")
#: Share of the writes that stop in the middle of a line (the issue's run: 508 of 3,434).
SPLIT = 0.15
SAMPLED = ("files", "bytes", "data_errors_files", "quarantine_files", "jobs_files",
           "checkpoint_files", "tick_s", "python_rss_mb", "jvm_rss_mb", "jvm_heap_mb",
           "jvm_live_mb")  # fmt: skip


@dataclass
class Ticks:
    """The ticks' durations, read from /metrics (one per tick end)."""

    seen: dict[float, float] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, ended: float, seconds: float) -> None:
        with self.lock:
            self.seen[ended] = seconds

    def since(self, moment: float) -> list[float]:
        with self.lock:
            return [s for ended, s in self.seen.items() if ended >= moment]


def scrape(port: int) -> dict[str, float]:
    """The unlabelled samples and the sum of each labelled metric at /metrics."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as response:
        text = response.read().decode()
    values: Counter = Counter()
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, value = line.rsplit(" ", 1)
            values[name.split("{")[0]] += float(value)
    return dict(values)


def state_files(state: Path) -> dict[str, float]:
    """Files and bytes of the state folder, in all and by the parts that grew by pass."""
    counts: Counter = Counter()
    for path in state.rglob("*"):
        if not path.is_file():
            continue
        counts["files"] += 1
        counts["bytes"] += path.stat().st_size
        part = path.relative_to(state).parts
        if part[:2] == ("agg", "data_errors"):
            counts["data_errors_files"] += 1
        elif part[:2] == ("agg", "quarantine"):
            counts["quarantine_files"] += 1
        elif part[0] in ("jobs", "checkpoint"):
            counts[f"{part[0]}_files"] += 1
    return {key: float(counts[key]) for key in SAMPLED[:6]}


def rss_mb(pid: int) -> float:
    status = Path(f"/proc/{pid}/status").read_text()
    match = re.search(r"VmRSS:\s+(\d+) kB", status)
    return int(match.group(1)) / 1024 if match else float("nan")


def java_child(pid: int) -> int | None:
    """The JVM the watcher started (a child process named java)."""
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            stat = (proc / "stat").read_text()
        except OSError:
            continue
        name = stat[stat.index("(") + 1 : stat.rindex(")")]
        ppid = int(stat[stat.rindex(")") + 2 :].split()[1])
        if ppid == pid and name == "java":
            return int(proc.name)
    return None


def heap_mb(jvm: int, *, collect: bool) -> float:
    """The JVM's used heap (after a full GC when ``collect``), from jcmd."""
    if collect:
        subprocess.run(["jcmd", str(jvm), "GC.run"], capture_output=True, timeout=60, check=False)
    out = subprocess.run(
        ["jcmd", str(jvm), "GC.heap_info"], capture_output=True, text=True, timeout=60, check=False
    ).stdout
    match = re.search(r"used (\d+)K", out)
    return int(match.group(1)) / 1024 if match else float("nan")


def slope(points: list[tuple[float, float]]) -> float:
    """Least-squares slope of (minute, value) points (per minute)."""
    points = [(x, y) for x, y in points if y == y]  # no NaN
    if len(points) < 2:
        return float("nan")
    mx = sum(x for x, _ in points) / len(points)
    my = sum(y for _, y in points) / len(points)
    den = sum((x - mx) ** 2 for x, _ in points)
    return sum((x - mx) * (y - my) for x, y in points) / den if den else float("nan")


class LiveWriter(threading.Thread):
    """Appends the lines up to the simulated time every second, sometimes half a line."""

    def __init__(self, logs: Path, lines: list[livelogs.Line], speed: float, seed: int) -> None:
        super().__init__(daemon=True)
        self.writer = livelogs.Writer(logs)
        self.lines = lines
        self.speed = speed
        self.rng = random.Random(seed)
        self.stop = threading.Event()
        self.written = 0
        self.splits = 0

    def run(self) -> None:
        start = time.monotonic()
        first = self.lines[0].at
        while not self.stop.wait(1.0):
            now = first + timedelta(seconds=(time.monotonic() - start) * self.speed)
            upto = self.written
            while upto < len(self.lines) and self.lines[upto].at <= now:
                upto += 1
            batch = self.lines[self.written : upto]
            cut = None
            if batch and self.rng.random() < SPLIT:
                cut = self.rng.randrange(1, len(batch[-1].text))
                self.splits += 1
            self.writer.write(batch, cut)
            self.written = upto

    def finish(self) -> None:
        self.stop.set()
        self.join(timeout=10)
        self.writer.write([])  # the half-written line, completed


def one_shot_check(logs: Path, state: Path, work: Path, firing_gauge: float) -> dict[str, Any]:
    """Compare the alert store and what was told with ``orderdoc alerts`` on one aggregate of
    the final logs (the aggregate in-process: the reference the Spark job equals)."""
    files = expand_inputs([str(logs)])
    write_tables(aggregate_files(files.logs, files.metrics), work / "one-shot")
    rules = load_rules([ROOT / "rules"])
    alerts = list(evaluate_detailed(rules, work / "one-shot").alerts)
    wanted = Counter(
        (a.fingerprint, a.state.value) for a in alerts if a.state is not AlertState.PENDING
    )
    with AlertStore(state / "alerts") as store:
        history = store.history()
        notes = store.notifications()
    got = Counter(
        (e.fingerprint, e.state.value) for e in history if e.state is not AlertState.PENDING
    )
    told = Counter((n.fingerprint, n.active_at, n.status.value) for n in notes)
    open_ = Counter(e.fingerprint for e in history if e.state is not AlertState.RESOLVED)
    firing = sum(a.state is AlertState.FIRING for a in alerts)
    return {
        "episodes_one_shot": sum(wanted.values()),
        "episodes_stored": sum(got.values()),
        "episodes_match": wanted == got,
        "firing_told": sum(1 for key in told if key[2] == "firing"),
        "resolved_told": sum(1 for key in told if key[2] == "resolved"),
        "told_twice": sum(1 for count in told.values() if count > 1),
        "unsent": sum(n.sent_at is None for n in notes),
        "most_open_of_one_alert": max(open_.values(), default=0),
        "firing_one_shot": firing,
        "firing_gauge": firing_gauge,
    }


def from_log(samples: list[dict[str, float]], said: str, args: argparse.Namespace) -> None:
    """Tick times from the watcher's output when it has no ``orderdoc_watch_tick_seconds``
    (an older watcher): the time between two evaluations, less the interval (1 s steps)."""
    from datetime import UTC, datetime

    from diagnostics.durations import SECOND, parse_duration

    interval = parse_duration(args.interval) / SECOND
    today = datetime.now(UTC).date()
    stamps = [
        datetime.combine(today, datetime.strptime(m, "%H:%M:%S").time(), UTC).timestamp()
        for m in re.findall(r"^\[(\d\d:\d\d:\d\d)\] rules evaluated", said, re.M)
    ]
    steps = [(b, b - a - interval) for a, b in itertools.pairwise(stamps)]
    for sample in samples:
        inside = [d for at, d in steps if sample["wall"] - args.every < at <= sample["wall"]]
        sample["tick_s"] = sum(inside) / len(inside) if inside else float("nan")
        sample["ticks"] = float(len(inside))


def _is_json(text: bytes) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def empty_parquet_files(state: Path) -> int:
    import pyarrow.parquet as pq

    return sum(pq.read_metadata(p).num_rows == 0 for p in (state / "agg").rglob("*.parquet"))


def run(args: argparse.Namespace) -> dict[str, Any]:
    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="watch-soak-"))
    shutil.rmtree(work, ignore_errors=True)
    logs, state = work / "logs", work / "state"
    logs.mkdir(parents=True)
    sim_minutes = int(args.minutes * args.speed) + 60
    lines = livelogs.lines(args.seed, sim_minutes, jobs=JOBS[: args.jobs])
    port = free_port()
    samples: list[dict[str, float]] = []
    ticks = Ticks()
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "PYTHONUNBUFFERED": "1"}
    with receiver() as hook:
        command = [
            *(shlex.split(args.command) if args.command else [str(Path(sys.executable).parent / "orderdoc")]),
            "watch", str(logs), "--state", str(state),
            "--interval", args.interval, "--webhook", hook.url, "--metrics-port", str(port),
            "--evaluate-at", "data-end", *args.watch_args,
        ]  # fmt: skip
        log = (work / "watch.log").open("wb")
        watcher = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env)
        writer = LiveWriter(logs, lines, args.speed, args.seed)
        stop_scrape = threading.Event()

        def poll() -> None:
            while not stop_scrape.wait(1.0):
                try:
                    values = scrape(port)
                except OSError:
                    continue
                ended = values.get("orderdoc_watch_last_tick_timestamp_seconds", 0.0)
                if ended > 0:  # 0 until the first tick ends
                    ticks.add(ended, values.get("orderdoc_watch_tick_seconds", float("nan")))

        poller = threading.Thread(target=poll, daemon=True)
        try:
            writer.start()
            poller.start()
            # the run is timed from the end of the first tick (Spark's start, a first pass
            # over what was written meanwhile); the writer goes on from the start
            while not ticks.since(0.0):
                if watcher.poll() is not None:
                    raise SystemExit(f"the watcher stopped: see {work / 'watch.log'}")
                time.sleep(1.0)
            started = time.monotonic()
            for step in range(1, int(args.minutes * 60 / args.every) + 1):
                due = started + step * args.every
                minute = step * args.every / 60
                while (left := due - time.monotonic()) > 0:
                    if watcher.poll() is not None:
                        raise SystemExit(f"the watcher stopped: see {work / 'watch.log'}")
                    time.sleep(min(left, 1.0))
                jvm = java_child(watcher.pid)
                durations = ticks.since(time.time() - args.every)
                sample = {
                    "minute": float(minute),
                    "wall": time.time(),
                    **state_files(state),
                    "tick_s": sum(durations) / len(durations) if durations else float("nan"),
                    "ticks": float(len(durations)),
                    "python_rss_mb": rss_mb(watcher.pid),
                    "jvm_rss_mb": rss_mb(jvm) if jvm else float("nan"),
                    "jvm_heap_mb": heap_mb(jvm, collect=False) if jvm else float("nan"),
                    "jvm_live_mb": heap_mb(jvm, collect=True) if jvm else float("nan"),
                    "lines_written": float(writer.written),
                }
                samples.append(sample)
                print(" ".join(f"{k}={v:.1f}" for k, v in sample.items()), flush=True)
            writer.finish()
            # two more ticks: the completed line is read, resolved notifications go out
            settle_from = time.time()
            while len(ticks.since(settle_from)) < 3 and watcher.poll() is None:
                time.sleep(1.0)
            firing_gauge = scrape(port).get("orderdoc_alerts_firing", float("nan"))
        finally:
            stop_scrape.set()
            writer.stop.set()
            if watcher.poll() is None:
                watcher.send_signal(signal.SIGINT)
                try:
                    watcher.wait(timeout=120)
                except subprocess.TimeoutExpired:
                    watcher.kill()
                    watcher.wait(timeout=30)
            log.close()
        posted = sum(len(post) for post in hook.received())
    half = [s for s in samples if s["minute"] > args.minutes / 2]
    result: dict[str, Any] = {
        "minutes": args.minutes,
        "speed": args.speed,
        "jobs": args.jobs,
        "interval": args.interval,
        "lines_written": writer.written,
        "lines_split": writer.splits,
        "hour_files": len(list(logs.rglob("PT1H.json"))),
        "malformed_lines": sum(
            not _is_json(line.text)
            for line in lines[: writer.written]
            if line.path != livelogs.METRICS_FILE
        ),
        "notifications_posted": posted,
        "empty_parquet_files": empty_parquet_files(state),
        "samples": samples,
        "slopes_second_half": {
            key: slope([(s["minute"], s[key]) for s in half]) for key in SAMPLED
        },
        "max": {key: max((s[key] for s in samples), default=float("nan")) for key in SAMPLED},
        "watch_exit": watcher.returncode,
    }
    said = (work / "watch.log").read_text(encoding="utf-8", errors="replace")
    if all(s["tick_s"] != s["tick_s"] for s in samples):  # a watcher without the gauge
        from_log(samples, said, args)
    result["passes"] = len(re.findall(r"\] pass \d+: \d+ read", said))
    result["compactions"] = said.count(" compacted ")
    result["tracebacks"] = said.count("Traceback")
    result["alerts"] = one_shot_check(logs, state, work, firing_gauge)
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=30.0, help="real minutes (default 30)")
    parser.add_argument("--speed", type=float, default=30.0, help="simulated per real second")
    parser.add_argument("--jobs", type=int, default=4, choices=range(1, len(JOBS) + 1))
    parser.add_argument("--interval", default="2s", help="the watcher's --interval")
    parser.add_argument("--every", type=float, default=60.0, help="seconds between samples")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--json", type=Path, help="write the result here")
    parser.add_argument("--keep", help="work in this folder and keep it")
    parser.add_argument(
        "--command",
        help="the orderdoc command to run (default: this venv's orderdoc), e.g. an older "
        "checkout's: 'env PYTHONPATH=/tmp/old .venv/bin/python -m diagnostics'",
    )
    parser.add_argument(
        "--watch-arg", dest="watch_args", action="append", default=[],
        help="an extra flag for orderdoc watch (repeatable), e.g. --watch-arg=--conf=...",
    )  # fmt: skip
    args = parser.parse_args()
    result = run(args)
    summary = {k: v for k, v in result.items() if k != "samples"}
    print(json.dumps(summary, indent=2))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
