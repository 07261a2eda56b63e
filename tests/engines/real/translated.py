"""The scripts ``orderdoc translate`` prints, run by the real engines: a capture for the
portal-export sample job (sample_logs/jobs/telemetry.portal-export.json), the connector
options filled in (a file source holding the capture, a print or memory sink), the Flink SQL
run by FlinkSqlScript.java on the apache-flink package's jars, the PySpark run on the test
session, and their outputs read back as rows.

What the tests set besides the connector options, and why: Flink's periodic watermark is
emitted on the wall clock (``pipeline.auto-watermark-interval``), so the Flink run sets it to
0 (a watermark after every record that moves it, as FlinkWindowCount.java's --tick-ms 0) and
orderdoc replays with a 1 ms interval, the same thing for arrivals whole milliseconds apart;
Spark's trigger runs on the wall clock too, so the PySpark run takes its micro-batches as
files one at a time (tests/engines/real/spark_engine.py) with the trigger set to 0 and the
files cut on the translated trigger's ticks.
"""

from __future__ import annotations

import importlib.util
import json
import os
import random
import re
import subprocess
import time
from datetime import datetime
from pathlib import Path
from typing import Any

from tests.engines.real.captures import T0_MS, Capture, Event, iso
from tests.engines.real.flink_engine import FLINK_CONFIG, JAVA_OPTS, compiled, flink_lib
from tests.engines.real.spark_engine import micro_batches, runs

ROOT = Path(__file__).resolve().parents[3]
JOB = ROOT / "sample_logs" / "jobs" / "telemetry.portal-export.json"
SOURCE = Path(__file__).with_name("FlinkSqlScript.java")
DEVICES = 6
FAST_DEVICE = "dev-3"
#: the fast clock: that device's times run this far ahead for a stretch
FAST_MS = 7 * 60_000


def job_capture(seed: int = 11, count: int = 600) -> tuple[Capture, dict[str, float | None]]:
    """Events of six devices, one reading every ~2 s each over ~3.5 minutes, sent 0.05-3 s
    after they happen (so some arrive behind others), a few readings without a value, some
    stamped exactly on a minute, and one device whose clock runs 7 minutes fast for a while
    (its events move the watermark forward). One split. Returns the capture and each
    event's value."""
    rng = random.Random(seed)
    pending: list[tuple[int, int, str, str]] = []
    for n in range(count):
        device = f"dev-{n % DEVICES}"
        happened = T0_MS + n * 350 + rng.randrange(0, 300)
        if n % 97 == 0:
            happened -= happened % 60_000  # exactly on a window boundary
        sent = happened + rng.choice((50, 120, 400, 900, 2_500))
        stamp = happened
        if device == FAST_DEVICE and 420 <= n < 470:
            stamp += FAST_MS
        pending.append((sent, stamp, f"e{n:04d}", device))
    pending.sort()
    events, values, last = [], {}, -1
    for sent, stamp, ident, _device in pending:
        arrival = max(sent, last + 1)  # whole milliseconds apart, in order
        last = arrival
        events.append(Event(ident, 0, stamp, arrival))
        values[ident] = None if rng.random() < 0.03 else round(rng.uniform(15, 30), 2)
    capture = Capture("portal_job", tuple(events))
    return capture, values


def device_of(event_id: str) -> str:
    return f"dev-{int(event_id[1:]) % DEVICES}"


def write_csv(capture: Capture, values: dict[str, float | None], path: Path) -> Path:
    """The capture as orderdoc reads it."""
    lines = ["id,device_id,partition_id,event_time,arrival_time,value"]
    for e in capture.events:
        value = values[e.id]
        lines.append(
            f"{e.id},{device_of(e.id)},{e.split},{iso(e.event_ms)},{iso(e.arrival_ms)},"
            f"{'' if value is None else value}"
        )
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def json_line(e: Event, values: dict[str, float | None]) -> str:
    return json.dumps(
        {
            "id": e.id,
            "device_id": device_of(e.id),
            "partition_id": str(e.split),
            "event_time": iso(e.event_ms),
            "value": values[e.id],
        }
    )


#: the reference data the sample job joins: each device's site and limit
REFERENCE = {f"dev-{i}": (("north", "south")[i % 2], 20.0 + i) for i in range(DEVICES)}


def write_reference(path: Path) -> Path:
    """The reference input ``devices`` as JSON lines."""
    path.write_text(
        "".join(
            json.dumps({"device_id": d, "site": site, "max_value": limit}) + "\n"
            for d, (site, limit) in REFERENCE.items()
        ),
        encoding="utf-8",
    )
    return path


def expected_alerts(capture: Capture, values: dict[str, float | None]) -> list[tuple[Any, ...]]:
    """The sample job's JOIN, by hand: every reading above its device's limit."""
    rows = []
    for e in capture.events:
        value, (site, limit) = values[e.id], REFERENCE[device_of(e.id)]
        if value is not None and value > limit:
            rows.append((device_of(e.id), value, site, limit))
    return sorted(rows)


def fill_flink(script: str, source: Path, reference: Path) -> str:
    """The connector options filled in: the input read from ``source`` and the reference
    input from ``reference`` (JSON lines), every output printed with its name; the watermark
    emitted after every record."""
    filled = []
    for statement in script.split(";\n"):
        table = re.search(r"CREATE TABLE `([^`]+)`", statement)
        if table and "'connector' = 'FILL IN'" in statement:
            if "PRIMARY KEY" in statement:
                options = f"'connector' = 'filesystem', 'path' = '{reference}', 'format' = 'json'"
            elif "WATERMARK FOR" in statement:
                options = (
                    f"'connector' = 'filesystem', 'path' = '{source}', 'format' = 'json', "
                    "'json.timestamp-format.standard' = 'ISO-8601'"
                )
            else:
                options = f"'connector' = 'print', 'print-identifier' = '{table.group(1)}'"
            statement = statement.replace("'connector' = 'FILL IN'", options)
        filled.append(statement)
    text = ";\n".join(filled)
    interval = "SET 'pipeline.auto-watermark-interval' = '0';"
    text, n = re.subn(r"SET 'pipeline\.auto-watermark-interval' = '[^']*';", interval, text)
    assert n == 1, "the script sets the watermark interval once"
    return text


def run_flink_sql(script: str, workdir: Path, timeout_s: float = 600) -> dict[str, list[list[str]]]:
    """The filled script run by Flink; the rows each output printed (``+I`` rows only)."""
    workdir.mkdir(parents=True, exist_ok=True)
    classes = compiled(SOURCE, workdir)
    path = workdir / "job.sql"
    path.write_text(script, encoding="utf-8")
    (workdir / "config.yaml").write_text(FLINK_CONFIG, encoding="utf-8")
    done = subprocess.run(
        ["java", *JAVA_OPTS, "-cp", f"{classes}:{flink_lib()}/*", "FlinkSqlScript", str(path)],
        capture_output=True,
        text=True,
        timeout=timeout_s,
        env={**os.environ, "FLINK_CONF_DIR": str(workdir)},
        check=False,
    )
    if done.returncode != 0:
        msg = f"the Flink SQL job failed (exit {done.returncode}):\n{done.stderr[-4000:]}"
        raise RuntimeError(msg)
    rows: dict[str, list[list[str]]] = {}
    for line in done.stdout.splitlines():
        match = re.match(r"^(.+?)(?::\d+)?> ([+-][IUD])\[(.*)\]$", line)
        if match:
            assert match.group(2) == "+I", line  # append-only outputs
            rows.setdefault(match.group(1), []).append(match.group(3).split(", "))
    return rows


def flink_time(text: str) -> datetime:
    """A printed TIMESTAMP(3) (``2024-01-01T00:05``), as UTC."""
    from datetime import UTC

    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def run_pyspark(
    spark: Any,
    script: str,
    capture: Capture,
    values: dict[str, float | None],
    trigger_ms: int,
    workdir: Path,
) -> dict[str, list[dict[str, Any]]]:
    """The printed PySpark script run on ``spark`` with the options filled in: a JSON file
    source taking one file per micro-batch, files cut on the trigger's ticks and put in place
    run by run; every output to a memory table. Returns each output's rows."""
    workdir.mkdir(parents=True, exist_ok=True)
    path = workdir / "translated_job.py"
    path.write_text(script, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("translated_job", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # imported as a module: __main__'s block does not run
    namespace = module.__dict__
    source = workdir / "source"
    stage = workdir / "stage"
    source.mkdir(parents=True)
    stage.mkdir()
    namespace["SOURCE"] = {
        "format": "json",
        "options": {"path": str(source / "*" / "*.json"), "maxFilesPerTrigger": "1"},
    }
    namespace["SINKS"] = {name: {"format": "memory", "options": {}} for name in namespace["SINKS"]}
    namespace["CHECKPOINTS"] = str(workdir / "checkpoints")
    reference = write_reference(workdir / "devices.json")
    namespace["REFERENCES"] = {"devices": {"format": "json", "options": {"path": str(reference)}}}
    namespace["TRIGGER"] = "0 seconds"
    batches = micro_batches(capture, trigger_ms)
    mtime = time.time() - len(batches) - 10
    queries: list[Any] = []
    written = 0
    try:
        for r, run in enumerate(runs(batches, trigger_ms)):
            folder = stage / f"run-{r:05d}"
            folder.mkdir()
            for members in run:
                path = folder / f"batch-{written:06d}.json"
                path.write_text(
                    "".join(json_line(capture.events[i], values) + "\n" for i in members),
                    encoding="utf-8",
                )
                mtime += 1
                os.utime(path, (mtime, mtime))
                written += 1
            folder.rename(source / folder.name)
            if not queries:
                queries = namespace["start"](spark)
            for query in queries:
                query.processAllAvailable()
        out: dict[str, list[dict[str, Any]]] = {}
        for query in queries:
            table = spark.table(query.name)
            if "window_start" in table.columns:  # the times as ms, whatever the local zone
                table = table.selectExpr(
                    "*",
                    "unix_millis(window_start) AS start_ms",
                    "unix_millis(window_end) AS end_ms",
                )
            out[query.name] = [row.asDict() for row in table.collect()]
        return out
    finally:
        for query in queries:
            query.stop()
