"""Benchmark: how fast the app's Overview appears on an aggregate folder with 1M rows.

Generates (once) ``bench/data/app-1m/`` (git-ignored), laid out as ``orderdoc aggregate``
writes it (hive-partitioned by ``date``): ``error_rollup`` and ``data_errors`` with
``--rows`` rows each (default 1,000,000: 20 jobs x 8 partitions, one row per job, partition
and minute over the days needed), ``metrics`` (one whole-job row per job and minute),
``partition_idle`` (a few thousand episodes), ``quarantine`` (200 rows) and ``summary.json``.

Then measures, each in a fresh process so that nothing is cached between runs:

1. ``data``: the Overview's data layer (open + signature + KPIs + errors over time + the
   figure), cold;
2. ``alerts``: evaluating the default rule pack (the "alerts firing" KPI), cold;
   ``script``: the whole Overview script (KPIs, chart, rules, the explainer's top finding)
   under Streamlit's AppTest, cold then warm (cached), without a browser;
3. ``browser``: ``orderdoc app`` in Debian's chromium (Playwright): the folder is opened on
   the Load page, then the time from the click on "Overview" until the KPI row and the
   chart are visible, until the alerts KPI is filled in, and until the top finding (the
   explainer) is shown; cold (first time for the folder) and warm (again, from the cache).

4. ``users`` (``--users N``): a team opening the app at once. ``orderdoc app FOLDER`` is
   started cold (fresh process, nothing imported or cached) on the late_senders scenario
   (built once into ``bench/data/app-users``, or ``--users-folder``), and N headless chromium
   sessions open it at the same moment; then each goes back and forth between Findings and
   Overview ``--visits`` times. Measured: the first load (the URL until the Overview's KPI
   row and chart are shown) with N users at once against one user alone on a cold server,
   each page visit's time (Findings: p50, p95, max), and the tracebacks any page showed
   (Streamlit's exception element; there must be none).

Usage::

    .venv/bin/python bench/app_bench.py [--rows 1000000] [--skip-browser]
    .venv/bin/python bench/app_bench.py --users 5 [--visits 10] [--users-folder DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import socket
import subprocess
import sys
import time
import urllib.request
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parent
START = datetime(2025, 3, 1, tzinfo=UTC)
JOBS, PARTITIONS = 20, 8
KINDS = np.array(["LateInputEvent", "OutOfOrderEvent", "EarlyInputEvent", "InvalidInputTimeStamp"])
KIND_P = [0.75, 0.24, 0.008, 0.002]
TS = pa.timestamp("us", tz="UTC")
USER_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
              "--disable-component-update", "--disable-sync"]  # fmt: skip


def _write(table: pa.Table, folder: Path, day: str) -> None:
    target = folder / f"date={day}"
    target.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, target / "part-00000.snappy.parquet", compression="snappy")


def generate(out: Path, rows: int, seed: int = 7) -> None:
    """Write the folder; one day at a time so memory stays small."""
    rng = np.random.default_rng(seed)
    per_minute = JOBS * PARTITIONS
    minutes_needed = -(-rows // per_minute)
    days = -(-minutes_needed // 1440)
    written = 0
    jobs = np.array([f"job-{j:02d}" for j in range(JOBS)])
    totals: dict[str, int] = {}
    for day in range(days):
        date = START + timedelta(days=day)
        n_min = min(1440, minutes_needed - day * 1440)
        start_us = int(date.timestamp() * 1e6)
        minute = np.repeat(start_us + np.arange(n_min, dtype=np.int64) * 60_000_000, per_minute)
        n = min(minute.size, rows - written)
        minute = minute[:n]
        job = np.tile(np.repeat(jobs, PARTITIONS), n_min)[:n]
        part = np.tile(np.arange(PARTITIONS, dtype=np.int64), JOBS * n_min)[:n]
        kind = KINDS[rng.choice(4, n, p=KIND_P)]
        count = rng.poisson(3, n).astype(np.int64) + 1
        late = np.where(
            kind == "EarlyInputEvent", -rng.uniform(300, 900, n), rng.exponential(20, n)
        )
        for k, c in zip(kind, count, strict=True):
            totals[k] = totals.get(k, 0) + int(c)
        day_s = date.date().isoformat()
        times = pa.array(minute, pa.int64()).cast(TS)
        _write(
            pa.table({
                "job": job, "kind": kind, "partition_id": part, "minute": times,
                "event_count": count, "records": np.ones(n, dtype=np.int64),
                "max_lateness_seconds": late,
            }),
            out / "error_rollup",
            day_s,
        )  # fmt: skip
        _write(
            pa.table({
                "job": job, "source": np.full(n, "input"), "partition_id": part, "kind": kind,
                "event_count": count, "record_time": times, "from_time": times, "to_time": times,
                "example_application_time": times, "example_arrival_time": times,
                "lateness_seconds": late, "idle_minutes": pa.nulls(n, pa.int64()),
                "level": np.full(n, "Information"), "correlation_id": np.full(n, "c"),
                "source_file": np.full(n, f"logs/{day_s}.json"),
                "source_line": np.arange(n, dtype=np.int64) + 1,
            }),
            out / "data_errors",
            day_s,
        )  # fmt: skip
        m_minutes = start_us + np.arange(n_min, dtype=np.int64) * 60_000_000
        m = m_minutes.size * JOBS
        _write(
            pa.table({
                "job": np.repeat(jobs, m_minutes.size),
                "partition_id": pa.nulls(m, pa.int64()),
                "minute": pa.array(np.tile(m_minutes, JOBS), pa.int64()).cast(TS),
                "input_events": rng.poisson(1000, m).astype(np.int64),
                "late_input_events": rng.poisson(3, m).astype(np.int64),
                "early_input_events": np.zeros(m, dtype=np.int64),
                "dropped_or_adjusted_events": rng.poisson(1, m).astype(np.int64),
                "output_watermark_delay_seconds": 5 + rng.exponential(1.0, m),
            }),
            out / "metrics",
            day_s,
        )  # fmt: skip
        k = 100
        starts = start_us + rng.integers(0, n_min * 60, k) * 1_000_000
        _write(
            pa.table({
                "job": jobs[rng.integers(0, JOBS, k)], "source": np.full(k, "input"),
                "partition_id": rng.integers(0, PARTITIONS, k),
                "start": pa.array(starts, pa.int64()).cast(TS),
                "end": pa.array(starts + 600_000_000, pa.int64()).cast(TS),
                "notices": np.full(k, 2, dtype=np.int64), "max_idle_minutes": np.full(k, 10, dtype=np.int64),
            }),
            out / "partition_idle",
            day_s,
        )  # fmt: skip
        written += n
    (out / "quarantine").mkdir(parents=True, exist_ok=True)
    q = 200
    pq.write_table(
        pa.table({
            "source_file": np.full(q, "logs/bad.json"), "source_line": np.arange(q, dtype=np.int64) + 1,
            "reason": np.full(q, "not valid JSON (Expecting value)"), "raw": np.full(q, "{oops"),
            "raw_bytes": np.full(q, 5, dtype=np.int64),
        }),
        out / "quarantine" / "part-00000.snappy.parquet",
    )  # fmt: skip
    end = START + timedelta(minutes=minutes_needed)
    summary = {
        "records_total": rows + q, "records_parsed": rows, "records_quarantined": q,
        "events_by_kind": dict(sorted(totals.items())), "idle_partitions": list(range(PARTITIONS)),
        "jobs": sorted(jobs.tolist()),
        "time_range": {"from": START.isoformat().replace("+00:00", "Z"), "to": end.isoformat().replace("+00:00", "Z")},
    }  # fmt: skip
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")


DATA_SNIPPET = """
import sys, time, json
t0 = time.perf_counter()
from diagnostics.appdata import figures, overview, store
t_import = time.perf_counter() - t0
t0 = time.perf_counter()
agg = store.open_aggregate(sys.argv[1]); store.signature(agg.path)
k = overview.kpis(agg)
table, bucket = overview.errors_over_time(agg)
fig = figures.errors_over_time(table, table.clear(), bucket)
fig.to_json()
print(json.dumps({"import": t_import, "seconds": time.perf_counter() - t0, "bars": table.height}))
"""

ALERTS_SNIPPET = """
import sys, time, json
from diagnostics.appdata.alerts import evaluate_pack, load_pack
from diagnostics.rules import default_rules_dir
from pathlib import Path
t0 = time.perf_counter()
view = evaluate_pack(load_pack([default_rules_dir()]), Path(sys.argv[1]))
print(json.dumps({"seconds": time.perf_counter() - t0, "alerts": view.alerts.height}))
"""


SCRIPT_SNIPPET = """
import sys, time, json
from streamlit.testing.v1 import AppTest
out = {}
for visit in ("cold", "warm"):
    t0 = time.perf_counter()
    at = AppTest.from_file(sys.argv[2], default_timeout=900)
    at.session_state["agg_dir"] = sys.argv[1]
    at.session_state["page"] = "Overview"
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    out[visit] = round(time.perf_counter() - t0, 2)
print(json.dumps(out))
"""


def _python(snippet: str, folder: Path, *extra: str) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", snippet, str(folder), *extra],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _overview(page, t0: float) -> dict:  # type: ignore[no-untyped-def]
    """Wait for the Overview's stages; seconds since ``t0`` for each."""
    page.get_by_text("Worst watermark delay").wait_for(timeout=300_000)
    kpis = time.perf_counter() - t0
    page.locator(".js-plotly-plot").first.wait_for(timeout=300_000)
    shown = time.perf_counter() - t0
    value = page.locator("[data-testid='stMetric']", has_text="Alerts firing").locator(
        "[data-testid='stMetricValue']"
    )
    while value.inner_text(timeout=300_000).strip() == "…":
        time.sleep(0.05)
    alerts = time.perf_counter() - t0
    page.get_by_text("Most likely cause").wait_for(timeout=600_000)
    done = time.perf_counter() - t0
    return {
        "kpis_seconds": round(kpis, 2),
        "kpis_and_chart_seconds": round(shown, 2),
        "alerts_kpi_seconds": round(alerts, 2),
        "top_finding_seconds": round(done, 2),
    }


def browser(folder: Path) -> dict:
    """In chromium: open the app, load ``folder`` on the Load page, then time the Overview from
    the click on "Overview" (cold: first time for this folder; warm: after going back to
    Load, served from the cache)."""
    from playwright.sync_api import sync_playwright

    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "diagnostics", "app", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "ORDERDOC_APP_WORKDIR": str(ROOT / "data" / "app-work")},
    )
    url = f"http://127.0.0.1:{port}/"
    try:
        for _ in range(240):
            try:
                with urllib.request.urlopen(url + "_stcore/health", timeout=2):
                    break
            except OSError:
                time.sleep(0.25)
        results: dict = {}
        with sync_playwright() as pw:
            chromium = pw.chromium.launch(executable_path="/usr/bin/chromium", args=USER_FLAGS)
            page = chromium.new_page(viewport={"width": 1400, "height": 1000})
            t0 = time.perf_counter()
            page.goto(url)
            page.get_by_role("heading", name="Load", exact=True).wait_for(timeout=300_000)
            results["page_boot_seconds"] = round(time.perf_counter() - t0, 2)
            page.get_by_label("Folder written by").fill(str(folder))
            page.get_by_label("Folder written by").press("Enter")
            page.get_by_role("button", name="Open the folder").click()
            page.get_by_text("Opened ").wait_for(timeout=300_000)
            sidebar = page.get_by_test_id("stSidebar")
            for visit in ("cold", "warm"):
                t0 = time.perf_counter()
                sidebar.get_by_text("Overview", exact=True).click()
                results[visit] = _overview(page, t0)
                sidebar.get_by_text("Load", exact=True).click()
                page.get_by_role("heading", name="Load", exact=True).wait_for(timeout=300_000)
            chromium.close()
        return results
    finally:
        _stop(proc)


def users_folder() -> Path:
    """The late_senders scenario replayed and aggregated as the Load page does (made once)."""
    folder = ROOT / "data" / "app-users"
    if not (folder / "summary.json").is_file():
        sys.path.insert(0, str(ROOT.parent))
        from tests.app.conftest import scenario_folder

        built = scenario_folder(folder.parent / "app-users-build", "late_senders")
        built.rename(folder)
    return folder


def _start_app(folder: Path) -> tuple[subprocess.Popen, str]:
    """``orderdoc app FOLDER`` on a free port, cold; returns the process and its URL once it
    answers."""
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "diagnostics", "app", str(folder), "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "ORDERDOC_APP_WORKDIR": str(ROOT / "data" / "app-work")},
    )
    url = f"http://127.0.0.1:{port}/"
    for _ in range(480):
        try:
            with urllib.request.urlopen(url + "_stcore/health", timeout=2):
                return proc, url
        except OSError:
            time.sleep(0.25)
    proc.kill()
    raise SystemExit(f"orderdoc app did not answer on {url}")


def _stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=30)


async def _settled(page) -> None:  # type: ignore[no-untyped-def]
    """Wait until the page's script run is over (Streamlit's "running" widget is gone)."""
    await page.wait_for_timeout(100)
    await page.get_by_test_id("stStatusWidget").wait_for(state="hidden", timeout=600_000)


async def _user(browser, url: str, visits: int) -> dict:  # type: ignore[no-untyped-def]
    """One user: open the app on the Overview, then Findings and Overview in turn."""
    context = await browser.new_context(viewport={"width": 1400, "height": 1000})
    page = await context.new_page()
    t0 = time.perf_counter()
    await page.goto(url + "?page=overview")
    await page.get_by_text("Worst watermark delay").wait_for(timeout=600_000)
    await page.locator(".js-plotly-plot").first.wait_for(timeout=600_000)
    first = time.perf_counter() - t0
    await _settled(page)
    errors = await page.get_by_test_id("stException").count()
    sidebar = page.get_by_test_id("stSidebar")
    times: dict[str, list[float]] = {"Findings": [], "Overview": []}
    for _ in range(visits):
        for name in ("Findings", "Overview"):
            t0 = time.perf_counter()
            await sidebar.get_by_text(name, exact=True).click()
            await page.get_by_role("heading", name=name, exact=True).wait_for(timeout=600_000)
            await _settled(page)
            times[name].append(time.perf_counter() - t0)
            errors += await page.get_by_test_id("stException").count()
    await context.close()
    return {"first_load": first, "visits": times, "tracebacks": errors}


async def _users(url: str, count: int, visits: int) -> list[dict]:
    from playwright.async_api import async_playwright

    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path="/usr/bin/chromium", args=USER_FLAGS)
        try:
            return list(await asyncio.gather(*(_user(browser, url, visits) for _ in range(count))))
        finally:
            await browser.close()


def _p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 2) if ordered else 0.0


def users(count: int, visits: int, folder: Path) -> dict:
    """A cold server and one user, then a cold server and ``count`` users at once."""
    report: dict = {"folder": str(folder), "users": count, "visits_each": visits}
    for label, n in (("alone", 1), ("together", count)):
        proc, url = _start_app(folder)
        try:
            runs = asyncio.run(_users(url, n, visits))
        finally:
            _stop(proc)
        first = [r["first_load"] for r in runs]
        findings = [t for r in runs for t in r["visits"]["Findings"]]
        overview = [t for r in runs for t in r["visits"]["Overview"]]
        report[label] = {
            "first_load_max_s": round(max(first), 2),
            "first_load_median_s": _p(first, 0.5),
            "findings_p50_s": _p(findings, 0.5),
            "findings_p95_s": _p(findings, 0.95),
            "findings_max_s": round(max(findings, default=0.0), 2),
            "overview_p95_s": _p(overview, 0.95),
            "page_visits": len(findings) + len(overview) + n,
            "tracebacks": sum(r["tracebacks"] for r in runs),
        }
    report["load_average_1m"] = round(os.getloadavg()[0], 1)
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--skip-browser", action="store_true")
    parser.add_argument("--users", type=int, help="only the team run: N users at once")
    parser.add_argument("--visits", type=int, default=10, help="Findings visits per user")
    parser.add_argument("--users-folder", type=Path, help="aggregate folder for --users")
    args = parser.parse_args()
    if args.users:
        report = users(args.users, args.visits, args.users_folder or users_folder())
        out = ROOT / "results" / f"app-users-{args.users}.json"
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(report, indent=2) + "\n")
        print(json.dumps(report, indent=2))
        return
    folder = ROOT / "data" / f"app-{args.rows}"
    if not (folder / "summary.json").is_file():
        t0 = time.perf_counter()
        generate(folder, args.rows)
        print(f"generated {folder} in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    report = {
        "rows": args.rows,
        "data": _python(DATA_SNIPPET, folder),
        "alerts": _python(ALERTS_SNIPPET, folder),
        "script": _python(SCRIPT_SNIPPET, folder, str(ROOT.parent / "app" / "streamlit_app.py")),
        "machine": f"{platform.machine()}, {platform.python_version()}, {os.cpu_count()} cpu",
        "load_average_1m": round(os.getloadavg()[0], 1),
    }
    if not args.skip_browser:
        report["browser"] = browser(folder)
    out = ROOT / "results" / f"app-{args.rows}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
