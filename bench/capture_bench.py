"""Reading an Event Hubs Capture: every capture command against fastavro's decode of the same
folder, on a production-shaped Capture (diagnostics.generate.fleet; FleetConfig() by default:
2M readings, 8 partitions, maps and JSON bodies, empty files).

Medians of ``--runs`` runs, all in one run of this script (docs/performance.md, "Reading an
Event Hubs Capture"):

- ``fastavro``: fastavro decodes every record of every file (nothing else): the reference;
- cold ``orderdoc replay CAPTURE --job-definition JOB --out DIR`` (an empty cache) and its
  peak resident memory (``VmHWM`` of the child process), wall and CPU seconds (user +
  system: the machine may be shared);
- warm replay (the cache filled), and the read of each other capture command (the time its
  cache line reports: explain --events, whatif, impact, translate --events, cti), each
  command run up to that read (the child ends there: the rest of the command is not the
  read, and ``bench/capture_commands_bench.py`` times the whole commands);

The children run as on a user's machine: Python keeps the modules' bytecode (a shell's
``PYTHONDONTWRITEBYTECODE`` is dropped, and one import before the runs compiles them).
- ``replay --spark`` once, its ratio to the local replay.

Usage: python bench/capture_bench.py [--events N] [--runs 3] [--work DIR] [--no-spark]
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import fastavro

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from diagnostics.captures.footprint import estimate  # noqa: E402
from diagnostics.generate.fleet import FleetConfig, fleet_events  # noqa: E402
from diagnostics.generate.fleet_files import job_template, write_capture  # noqa: E402

_CHILD = """
import os, sys, time
started = time.perf_counter()
argv = sys.argv[1:]
read_only = argv[:1] == ["--read-only"]
if read_only:  # the command up to its read of the capture, then the process ends
    import diagnostics.cli.capture_args as capture_args
    said = capture_args.note

    def note(line):
        said(line)
        if line.startswith("capture cache:"):
            peak = [l for l in open("/proc/self/status") if l.startswith("VmHWM:")][0].split()[1]
            print(line, file=sys.stderr)
            print(f"BENCH {time.perf_counter() - started} {int(peak) * 1024}", file=sys.stderr)
            sys.stderr.flush()
            os._exit(0)

    capture_args.note = note
    argv = argv[1:]
from diagnostics.cli import main
code = main(argv)
took = time.perf_counter() - started
peak = [l for l in open("/proc/self/status") if l.startswith("VmHWM:")][0].split()[1]
print(f"BENCH {took} {int(peak) * 1024}", file=sys.stderr)
sys.exit(code)
"""
#: The children's environment: Python writes and reads bytecode as on a user's machine (a
#: shell that sets PYTHONDONTWRITEBYTECODE would compile every module on every command).
_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
_CACHE_LINE = re.compile(r"capture cache: .*\(([\d.]+) s\)")


#: CPU seconds (user + system) of the children that ended so far
def _children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def run(argv: list[str]) -> tuple[float, int, float | None, float]:
    """``orderdoc ARGV`` in a child: wall seconds, peak bytes, the read's seconds (its cache
    line), CPU seconds (user + system)."""
    os.sync()  # the previous run's files on disk: their write-back is not this run's time
    cpu = _children_cpu()
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, *argv], capture_output=True, text=True, cwd=ROOT, env=_ENV
    )
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"orderdoc {' '.join(argv)} failed:\n{done.stderr[-2000:]}")
    peak = int(re.findall(r"BENCH \S+ (\d+)", done.stderr)[-1])
    read = _CACHE_LINE.findall(done.stderr)
    return wall, peak, float(read[-1]) if read else None, _children_cpu() - cpu


def fastavro_decode(folder: Path) -> tuple[float, float]:
    """fastavro decoding every record of every file: wall and CPU seconds."""
    os.sync()
    cpu = time.process_time()
    started = time.perf_counter()
    records = 0
    for path in sorted(folder.rglob("*.avro")):
        with path.open("rb") as handle:
            for _ in fastavro.reader(handle):
                records += 1
    return time.perf_counter() - started, time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=FleetConfig().events)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--work", type=Path, default=None)
    parser.add_argument("--no-spark", action="store_true")
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="capture-bench-"))
    capture, job = work / "capture", work / "job.arm.json"
    if not capture.is_dir():
        config = (
            FleetConfig().scaled(args.events)
            if args.events != FleetConfig().events
            else FleetConfig()
        )
        write_capture(fleet_events(config), config, capture)
        import json

        job.write_text(json.dumps(job_template(), indent=2))
    cache = work / "cache"
    files = len(list(capture.rglob("*.avro")))
    print(
        f"capture {capture}: {files} files, {sum(p.stat().st_size for p in capture.rglob('*.avro')) / 1e6:.1f} MB"
    )
    replay = ["replay", str(capture), "--job-definition", str(job), "--cache", str(cache)]
    decode, cold, cold_peak, warm, warm_peak = [], [], [], [], []
    reads: dict[str, list[float]] = {}
    others = {
        "explain --events": ["explain", "--events", str(capture), "--job-definition", str(job)],
        "whatif": ["whatif", str(capture), "--job-definition", str(job)],
        "impact": [
            "impact",
            str(capture),
            "--job-definition",
            str(job),
            "--out",
            str(work / "impact"),
        ],
        "translate --events": [
            "translate",
            "--job-definition",
            str(job),
            "--to",
            "flink-sql",
            "--window",
            "5m",
            "--events",
            str(capture),
        ],
        "cti": [
            "cti",
            str(capture),
            "--out",
            str(work / "cti"),
            "--timestamp-by",
            "eventTime",
            "--arrival-col",
            "EventEnqueuedUtcTime",
            "--cti-every",
            "1m",
        ],
    }
    subprocess.run(  # the modules' bytecode, as a user's first command leaves it
        [sys.executable, "-c", "import diagnostics.cli.replay, diagnostics.cli.explain"],
        check=True,
        cwd=ROOT,
        env=_ENV,
    )
    decode_cpu: list[float] = []
    cold_cpu: list[float] = []
    warm_cpu: list[float] = []
    for i in range(args.runs):
        seconds, cpu = fastavro_decode(capture)
        decode.append(seconds)
        decode_cpu.append(cpu)
        shutil.rmtree(cache, ignore_errors=True)
        seconds, peak, _, cpu = run([*replay, "--out", str(work / f"cold{i}")])
        cold.append(seconds)
        cold_peak.append(peak)
        cold_cpu.append(cpu)
        seconds, peak, _, cpu = run([*replay, "--out", str(work / f"warm{i}")])
        warm.append(seconds)
        warm_peak.append(peak)
        warm_cpu.append(cpu)
        for name, argv in others.items():
            try:
                _, _, read, _ = run(["--read-only", *argv, "--cache", str(cache)])
            except SystemExit as exc:
                print(f"  {name}: {str(exc).splitlines()[0]}")
                continue
            if read is not None:
                reads.setdefault(name, []).append(read)
        print(
            f"run {i + 1}: fastavro {decode[-1]:.1f} s ({decode_cpu[-1]:.1f} CPU-s), "
            f"cold {cold[-1]:.1f} s ({cold_cpu[-1]:.1f} CPU-s), "
            f"warm {warm[-1]:.1f} s ({warm_cpu[-1]:.1f} CPU-s)",
            flush=True,
        )
    base = statistics.median(decode)
    base_cpu = statistics.median(decode_cpu)
    estimated = estimate(capture).needed
    print()
    print(f"{'what':34s} {'median s':>9s} {'x fastavro':>11s} {'CPU-s':>7s} {'x CPU':>6s}  target")
    print(f"{'fastavro decode (reference)':34s} {base:9.2f} {1.0:11.2f} {base_cpu:7.2f} {1.0:6.2f}")
    for name, values, cpus, target in (
        ("replay, cold", cold, cold_cpu, "<= 1.0"),
        ("replay, warm", warm, warm_cpu, "<= 0.35"),
    ):
        value, cpu = statistics.median(values), statistics.median(cpus)
        print(
            f"{name:34s} {value:9.2f} {value / base:11.2f} {cpu:7.2f} {cpu / base_cpu:6.2f}  {target}"
        )
    for name, values in reads.items():
        value = statistics.median(values)
        print(
            f"{name + ' (its read)':34s} {value:9.2f} {value / base:11.2f} {'':7s} {'':6s}  <= 0.35"
        )
    print(
        f"peak resident memory: cold replay {statistics.median(cold_peak) / 1e9:.2f} GB, warm "
        f"{statistics.median(warm_peak) / 1e9:.2f} GB (target <= 1.2 GB); memory check's "
        f"estimate {estimated / 1e9:.2f} GB"
    )
    if not args.no_spark:
        seconds, _, _, cpu = run(
            [*replay, "--out", str(work / "spark"), "--spark", "--master", "local[2]"]
        )
        print(
            f"replay --spark --master local[2]: {seconds:.1f} s ({cpu:.1f} CPU-s), "
            f"{seconds / statistics.median(warm):.1f}x the warm local replay, "
            f"{seconds / statistics.median(cold):.1f}x the cold one"
        )


if __name__ == "__main__":
    main()
