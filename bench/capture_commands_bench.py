"""Every capture command on a warm capture cache: wall time and peak resident memory.

Runs, each in its own process (``orderdoc`` through ``capture_bench.run``: wall seconds,
``VmHWM``, CPU seconds), on an Event Hubs Capture shaped like a production hub
(``diagnostics.generate.fleet``) whose cache was filled by one ``replay`` first:

``explain --events``, ``explain --events --write-fix``, ``whatif``, ``impact``,
``translate --events``, ``cti`` and ``replay``; then the ratio of ``--write-fix`` to
``explain`` (issue 38: at most 1.5). The machine's load average is printed before and after
(the development machine is shared: wall times move with it, CPU seconds less so).

Usage::

    python bench/capture_commands_bench.py [--events 200000] [--capture DIR --job FILE]
        [--cache DIR] [--work DIR] [--runs 1] [--only NAME ...]

Without ``--capture`` a fleet of ``--events`` events is generated into ``--work``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from capture_bench import run

from diagnostics.generate.fleet import FleetConfig, fleet_events
from diagnostics.generate.fleet_files import job_template, write_capture

#: The issue's bound on ``explain --write-fix`` against ``explain``.
WRITE_FIX_RATIO = 1.5


def commands(capture: Path, job: Path, work: Path) -> dict[str, list[str]]:
    """Each capture command's arguments (without ``--cache``)."""
    cap, definition = str(capture), ["--job-definition", str(job)]
    return {
        "explain --events": ["explain", "--events", cap, *definition],
        "explain --events --write-fix": [
            "explain",
            "--events",
            cap,
            *definition,
            "--write-fix",
            str(work / "fix"),
        ],
        "impact": ["impact", cap, *definition, "--out", str(work / "impact")],
        "translate --events": [
            "translate",
            *definition,
            "--to",
            "flink-sql",
            "--window",
            "5m",
            "--events",
            cap,
        ],
        "cti": [
            "cti",
            cap,
            "--out",
            str(work / "cti"),
            "--timestamp-by",
            "eventTime",
            "--arrival-col",
            "EventEnqueuedUtcTime",
            "--cti-every",
            "1m",
        ],
        "replay": ["replay", cap, *definition, "--out", str(work / "replay")],
        "whatif": ["whatif", cap, *definition],
    }


def _fleet(events: int, work: Path) -> tuple[Path, Path]:
    capture, job = work / "capture", work / "job.arm.json"
    if not capture.is_dir():
        default = FleetConfig()
        config = default if events == default.events else default.scaled(events)
        write_capture(fleet_events(config), config, capture)
        job.write_text(json.dumps(job_template(), indent=2))
    return capture, job


def _load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.1f} / {five:.1f} / {fifteen:.1f} (1 / 5 / 15 min, {os.cpu_count()} cores)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=200_000, help="fleet size (generated)")
    parser.add_argument("--capture", type=Path, help="an existing Capture folder")
    parser.add_argument("--job", type=Path, help="its job definition (with --capture)")
    parser.add_argument("--cache", type=Path, help="the capture cache (default: WORK/cache)")
    parser.add_argument("--work", type=Path, help="scratch folder (default: a new temporary)")
    parser.add_argument("--runs", type=int, default=1, help="runs of each command (median)")
    parser.add_argument("--only", nargs="*", help="only these commands (names as printed)")
    args = parser.parse_args()
    if (args.capture is None) != (args.job is None):
        parser.error("--capture and --job go together")
    work = args.work or Path(tempfile.mkdtemp(prefix="capture-commands-"))
    work.mkdir(parents=True, exist_ok=True)
    capture, job = (args.capture, args.job) if args.capture else _fleet(args.events, work)
    cache = args.cache or work / "cache"
    listed = commands(capture, job, work)
    chosen = {k: v for k, v in listed.items() if not args.only or k in args.only}
    print(f"capture {capture}, job {job}, cache {cache}")
    print(f"load average before: {_load()}", flush=True)
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    run([*listed["replay"], "--cache", str(cache)])  # the cache filled: every run is warm
    rows: dict[str, tuple[float, float, float]] = {}
    for name, argv in chosen.items():
        walls, peaks, cpus = [], [], []
        for _ in range(args.runs):
            shutil.rmtree(work / "fix", ignore_errors=True)
            wall, peak, _, cpu = run([*argv, "--cache", str(cache)])
            walls.append(wall)
            peaks.append(peak)
            cpus.append(cpu)
        rows[name] = (statistics.median(walls), max(peaks), statistics.median(cpus))
        print(f"  {name}: {rows[name][0]:.1f} s, {rows[name][1] / 1e9:.2f} GB", flush=True)
    print(f"load average after: {_load()}")
    print()
    print(f"Warm capture cache, {started}, medians of {args.runs}:")
    print()
    print("| command | wall | CPU-s (user + system) | peak RSS |")
    print("| --- | ---: | ---: | ---: |")
    for name, (wall, peak, cpu) in rows.items():
        print(f"| `{name}` | {wall:.1f} s | {cpu:.1f} | {peak / 1e9:.2f} GB |")
    fix, plain = rows.get("explain --events --write-fix"), rows.get("explain --events")
    if fix and plain:
        ratio = fix[0] / plain[0]
        verdict = "met" if ratio <= WRITE_FIX_RATIO else "not met"
        print()
        print(
            f"explain --write-fix / explain: {ratio:.2f} wall, {fix[2] / plain[2]:.2f} CPU "
            f"(target <= {WRITE_FIX_RATIO}: {verdict})"
        )


if __name__ == "__main__":
    main()
