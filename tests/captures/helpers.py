"""Shared helpers: run the real CLI, write captures in the shapes users hold."""

from __future__ import annotations

import contextlib
import csv
import io
import json
from pathlib import Path
from typing import Any

import fastavro
import polars as pl

from diagnostics.captures.avro import EVENT_DATA_SCHEMA
from diagnostics.cli import main

DAY = "2024-01-01"

#: docs/semantics.md, "Worked examples", example A (late 10 min, out of order 3 min, adjust): application, arrival,
#: System.Timestamp, late, out of order beyond tolerance
EXAMPLE_A = [
    ("00:00:00", "00:10:01", "00:00:01", True, False),
    ("00:00:01", "00:10:01", "00:00:01", False, False),
    ("00:10:00", "00:10:02", "00:10:00", False, False),
    ("00:09:00", "00:10:03", "00:09:00", False, False),
    ("00:06:00", "00:10:04", "00:07:00", False, True),
]
POLICY_A = ["--late-arrival", "10m", "--out-of-order", "3m"]


def iso(clock: str) -> str:
    return f"{DAY}T{clock}Z"


def ms(clock: str) -> int:
    return int(pl.Series([iso(clock)]).str.to_datetime(time_zone="UTC").dt.epoch("ms")[0])


def run_cli(*argv: str) -> tuple[int, str, str]:
    """``orderdoc ARGV`` in this process: exit code, stdout, stderr."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def replay_json(capture: Path, out: Path, *flags: str) -> tuple[dict[str, Any], pl.DataFrame]:
    """Replay ``capture`` with ``--json``; the summary and the outcomes (exit 0 asserted)."""
    code, stdout, stderr = run_cli("replay", str(capture), "--out", str(out), "--json", *flags)
    assert code == 0, stderr
    return json.loads(stdout), pl.read_parquet(out / "outcomes.parquet")


def write_csv(path: Path, header: list[str], rows: list[list[Any]], **kw: Any) -> Path:
    with path.open("w", newline="", encoding=kw.pop("encoding", "utf-8")) as handle:
        writer = csv.writer(handle, **kw)
        writer.writerow(header)
        writer.writerows(rows)
    return path


def capture_record(seq: int, body: bytes | None, arrival_ms: int | None, text: str) -> dict:
    system: dict[str, Any] = {"x-opt-sequence-number": seq, "x-opt-offset": str(seq * 100)}
    if arrival_ms is not None:
        system["x-opt-enqueued-time"] = arrival_ms
    return {
        "SequenceNumber": seq,
        "Offset": str(seq * 100),
        "EnqueuedTimeUtc": text,
        "SystemProperties": system,
        "Properties": {"source": "test", "raw": b"\xff\x00"},
        "Body": body,
    }


def write_avro(path: Path, records: list[dict], codec: str = "null") -> Path:
    """A Capture file written with fastavro directly (not with orderdoc's writer)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as handle:
        fastavro.writer(handle, fastavro.parse_schema(EVENT_DATA_SCHEMA), records, codec=codec)
    return path


def body(**fields: Any) -> bytes:
    return json.dumps(fields).encode()
