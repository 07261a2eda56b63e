"""The app's Findings page on a loaded Event Hubs Capture: the data it computes, first visit.

The capture is loaded as the Load page loads a path with a job definition (read through the
capture cache, replayed under the job's policy into an app folder, the definition saved
beside it), once. Then, each in a fresh process, what the Findings page works out on its
first visit: the explainer's report and the corrected job (``jobfix.build_fix``), with the
capture's replays kept between them (``diagnostics.appdata.replays``: the load's replay
reused, the report, replays and measured settings shared with the corrected job) when the
code has them, else as the page did before (the report, then ``build_fix`` explaining the
folder again). A second visit reads both from the app's caches (``tests/app/
test_findings_reuse.py`` counts that nothing is worked out again).

Usage::

    python bench/findings_bench.py --capture DIR --job FILE [--cache DIR] [--work DIR] [--page]
    python bench/findings_bench.py --events 200000 [--work DIR] [--runs 3] [--page]

``--page`` also times the whole page in a fresh process under Streamlit's AppTest (the
report, its evidence charts and the corrected job, as a person opening Findings sees them),
``--runs`` times: the Load page is shown first (where the capture was loaded, so the app's
own modules are imported, as in a running server), then Findings is timed.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

_CHILD = """
import sys, time
from pathlib import Path
import polars as pl
from diagnostics.appdata import jobfix
from diagnostics.appdata.build import capture_context
agg = Path(sys.argv[1])
try:  # as the app's server does (diagnostics.freed_memory), where the code has it
    from diagnostics.freed_memory import keep_freed_memory
except ImportError:
    pass
else:
    keep_freed_memory()
started = time.perf_counter()
try:
    from diagnostics.appdata.replays import loaded_replays
    from diagnostics.engine.outcomes_files import read_outcomes
except ImportError:
    report = jobfix.explain_folder(agg)
    view = jobfix.build_fix(agg)
    how = "before: the report, then build_fix explaining the folder again"
else:
    ctx = capture_context(agg)
    events = pl.read_parquet(ctx.events_path)
    try:  # as the app reads them: the engine's columns beside the events
        from diagnostics.appdata.replays import loaded_outcomes
    except ImportError:
        outcomes = read_outcomes(ctx.outcomes_path)
    else:
        outcomes = loaded_outcomes(agg, events)
    replays = loaded_replays(agg, events, outcomes)
    report = jobfix.explain_folder(agg, events, replays=replays)
    view = jobfix.build_fix(agg, explained=lambda job: report, replays=replays, events=events)
    how = "now: from the load's replay, the report and replays shared with the fix"
took = time.perf_counter() - started
peak = [l for l in open("/proc/self/status") if l.startswith("VmHWM:")][0].split()[1]
print(f"BENCH {took} {int(peak) * 1024} {how}")
print(f"FIX {view.policy_after}")
"""


_PAGE = """
import sys, time
from pathlib import Path
from streamlit.testing.v1 import AppTest
agg, app = sys.argv[1], sys.argv[2]
at = AppTest.from_file(app, default_timeout=600)
at.session_state["agg_dir"] = agg
at.session_state["source_label"] = Path(agg).name
at.session_state["page"] = "Load"  # where the capture was loaded: the app's modules in
at.run()
at.session_state["page"] = "Findings"
started = time.perf_counter()
at.run()
took = time.perf_counter() - started
assert not at.exception, [e.value for e in at.exception]
assert [h.value for h in at.header] == ["The corrected job"], [h.value for h in at.header]
peak = [l for l in open("/proc/self/status") if l.startswith("VmHWM:")][0].split()[1]
print(f"BENCH {took} {int(peak) * 1024} the whole page (AppTest): report, charts, corrected job")
print(f"FIX {at.caption[0].value if at.caption else ''}")
"""


def load(capture: Path, job: Path, agg: Path) -> None:
    """The capture loaded as the Load page does with a path and a job definition."""
    from diagnostics.appdata import jobfix
    from diagnostics.appdata.build import CaptureSettings
    from diagnostics.appdata.capture_input import build_from_reader, read_path

    kept = jobfix.read_uploaded(job.name, job.read_bytes())
    settings = CaptureSettings(policy=kept.policy, job=kept.definition.name or "capture")
    build_from_reader(read_path(str(capture), settings), settings, agg)
    jobfix.save(agg, job.name, job.read_bytes())


def first_visit(agg: Path, root: Path, *, page: bool = False) -> tuple[float, float, int, str, str]:
    """Wall and CPU seconds, peak bytes, how, and the fix's policy of one first visit's data
    with the code under ``root`` (``page``: the whole page under AppTest)."""
    before = os.times()
    child = (
        [_PAGE, str(agg), str(root / "app" / "streamlit_app.py")] if page else [_CHILD, str(agg)]
    )
    env = {**os.environ, "ORDERDOC_APP_WORKDIR": str(agg.parent / "app-work")}
    env.pop("ORDERDOC_AGG_DIR", None)
    done = subprocess.run(
        [sys.executable, "-c", *child], capture_output=True, text=True, cwd=root, env=env
    )
    after = os.times()
    if done.returncode != 0:
        raise SystemExit(done.stderr[-3000:])
    line = next(x for x in done.stdout.splitlines() if x.startswith("BENCH "))
    _, took, peak, how = line.split(" ", 3)
    fix = next(x for x in done.stdout.splitlines() if x.startswith("FIX ")).removeprefix("FIX ")
    cpu = (after.children_user - before.children_user) + (
        after.children_system - before.children_system
    )
    return float(took), cpu, int(peak), how, fix


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--capture", type=Path)
    parser.add_argument("--job", type=Path)
    parser.add_argument("--events", type=int, default=200_000, help="fleet size (generated)")
    parser.add_argument("--cache", type=Path, help="the capture cache (ORDERDOC_CACHE)")
    parser.add_argument("--work", type=Path)
    parser.add_argument("--root", type=Path, default=ROOT, help="the code to measure")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument(
        "--page", action="store_true", help="also time the whole page under Streamlit's AppTest"
    )
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="findings-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    if args.cache is not None:
        os.environ["ORDERDOC_CACHE"] = str(args.cache)
    capture, job = args.capture, args.job
    if capture is None or job is None:
        from diagnostics.generate.fleet import FleetConfig, fleet_events
        from diagnostics.generate.fleet_files import job_template, write_capture

        capture, job = work / "capture", work / "job.arm.json"
        if not capture.is_dir():
            config = FleetConfig().scaled(args.events)
            write_capture(fleet_events(config), config, capture)
            job.write_text(json.dumps(job_template(), indent=2))
    agg = work / "agg"
    if not (agg / "capture" / "source.json").is_file():
        started = time.perf_counter()
        load(capture, job, agg)
        print(f"loaded {capture} into {agg} ({time.perf_counter() - started:.1f} s)")
    print(f"load average: {' / '.join(f'{x:.1f}' for x in os.getloadavg())} (1 / 5 / 15 min)")
    for _ in range(args.runs):
        took, cpu, peak, how, fix = first_visit(agg, args.root)
        print(f"Findings, first visit ({how}): {took:.1f} s, {cpu:.1f} CPU-s, {peak / 1e9:.2f} GB")
        print(f"  corrected: {fix}")
    for _ in range(args.runs if args.page else 0):
        took, cpu, peak, how, _ = first_visit(agg, args.root, page=True)
        print(f"Findings, first visit ({how}): {took:.1f} s, {cpu:.1f} CPU-s, {peak / 1e9:.2f} GB")


if __name__ == "__main__":
    main()
