"""Seeded mutations of captures (CSV, JSON Lines, Parquet, an Event Hubs Capture file) and
of ASA log files in every shape the bundled samples hold. Every run of ``orderdoc replay``
(in this process) exits 0 or 2 with one line, within a bound on its work (per-minute rows
bounded by the minutes with data), and every log record is parsed or quarantined.

The seed is fixed: a failure names its case (format, mutation, seed), which replays alone.
"""

from __future__ import annotations

import contextlib
import csv
import datetime as dt
import gzip
import io
import json
import random
from pathlib import Path

import fastavro
import polars as pl
import pytest

from diagnostics.captures.avro import EVENT_DATA_SCHEMA
from diagnostics.cli import main
from diagnostics.errors import OrderdocError
from diagnostics.logs.aggregate import aggregate_files
from diagnostics.minutes import GAP_FILL_MINUTES

SEED = 20261126
ROOT = Path(__file__).resolve().parents[2]
HEADER = ["message_id", "device_id", "partition_id", "event_time", "arrival_time", "value"]
START = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)

MUTATIONS = (
    "none", "truncate", "flip_bytes", "garbage_lines", "repeat_header", "nul_bytes",
    "long_line", "bom_crlf", "far_years", "huge_partition", "negative_partition",
    "times_as_numbers", "empty", "header_only",
)  # fmt: skip
FORMATS = ("csv", "jsonl", "parquet", "avro")
LOG_SAMPLES = (
    "asa/PT1H.json", "asa/activity-log.json", "asa/bare-array.json",
    "asa/eventhubs-records.json", "asa/loganalytics-azurediagnostics.csv",
    "asa/mixed-malformed.json", "asa-real/PT1H.json", "asa-real/activity-log.json",
    "asa-real/loganalytics-azurediagnostics.csv", "asa-real/loganalytics-azurediagnostics.json",
    "asa-real/portal-notifications.txt",
)  # fmt: skip
LOG_MUTATIONS = (
    "truncate", "flip_bytes", "garbage_lines", "nul_bytes", "long_line", "bom_crlf",
    "far_years", "huge_partition", "negative_partition", "times_as_numbers", "empty",
    "repeat_first_line",
)  # fmt: skip


def _rows(rng: random.Random, n: int = 30) -> list[list[object]]:
    rows = []
    for i in range(n):
        event = START + dt.timedelta(milliseconds=i * 1500 + rng.randint(-4000, 0))
        arrival = START + dt.timedelta(milliseconds=i * 1500 + rng.randint(0, 300))
        rows.append([i, f"dev-{rng.randint(0, 4)}", rng.randint(0, 3),
                     event.isoformat().replace("+00:00", "Z"),
                     arrival.isoformat().replace("+00:00", "Z"), round(rng.random() * 50, 2)])  # fmt: skip
    return rows


def _value_mutation(rows: list[list[object]], mutation: str, rng: random.Random) -> None:
    """Mutations of values (all formats): in place on a few rows."""
    picks = rng.sample(range(len(rows)), k=min(3, len(rows)))
    for i in picks:
        if mutation == "far_years":
            year = rng.choice(["0001", "1850", "2099", "9999"])
            rows[i][rng.choice([3, 4])] = f"{year}-12-31T23:59:59Z"
        elif mutation == "huge_partition":
            rows[i][2] = rng.choice([2**40, 2**63 - 1, 10**30])
        elif mutation == "negative_partition":
            rows[i][2] = rng.choice([-1, -(2**40)])
        elif mutation == "times_as_numbers":
            rows[i][rng.choice([3, 4])] = rng.choice([1704067200, 1704067200123, 0.5])


def _csv_bytes(rows: list[list[object]]) -> bytes:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(HEADER)
    writer.writerows(rows)
    return out.getvalue().encode()


def _jsonl_bytes(rows: list[list[object]]) -> bytes:
    return "".join(json.dumps(dict(zip(HEADER, r, strict=True))) + "\n" for r in rows).encode()


def _byte_mutation(data: bytes, mutation: str, rng: random.Random, header: bytes) -> bytes:
    """Mutations of the file's bytes."""
    if mutation == "truncate":
        return data[: rng.randint(0, max(0, len(data) - 1))]
    if mutation == "flip_bytes":
        buf = bytearray(data)
        for _ in range(rng.randint(1, 8)):
            if buf:
                buf[rng.randrange(len(buf))] ^= 1 << rng.randrange(8)
        return bytes(buf)
    if mutation in {"garbage_lines", "repeat_header", "nul_bytes", "long_line"}:
        lines = data.split(b"\n")
        at = rng.randint(1, max(1, len(lines) - 1))
        extra = {
            "garbage_lines": bytes(rng.randrange(256) for _ in range(rng.randint(1, 80))),
            "repeat_header": header,
            "nul_bytes": b"\x00" * rng.randint(1, 5),
            "long_line": b"x" * (3 << 20),
        }[mutation]
        lines.insert(at, extra)
        return b"\n".join(lines)
    if mutation == "bom_crlf":
        return b"\xef\xbb\xbf" + data.replace(b"\n", b"\r\n")
    if mutation == "empty":
        return b""
    if mutation == "header_only":
        return header + b"\n" if header else b""
    return data


def _avro_bytes(rows: list[list[object]], compact: bool) -> bytes:
    records = []
    for seq, row in enumerate(rows):
        fields = dict(zip(HEADER, row, strict=True))
        arrival = fields["arrival_time"]
        try:
            ms = int(
                dt.datetime.fromisoformat(str(arrival).replace("Z", "+00:00")).timestamp() * 1000
            )
        except (ValueError, OverflowError):
            ms = int(arrival) if isinstance(arrival, int) else 0
        system = {"x-opt-sequence-number": seq, "x-opt-enqueued-time": ms}
        records.append({
            "SequenceNumber": seq, "Offset": str(seq), "EnqueuedTimeUtc": "1/1/2024 12:00:00 AM",
            "SystemProperties": system, "Properties": {},
            "Body": json.dumps(fields).encode(),
        })  # fmt: skip
    out = io.BytesIO()
    schema = fastavro.parse_schema(EVENT_DATA_SCHEMA)
    fastavro.writer(out, schema, records if not compact else records[:0], codec="null")
    return out.getvalue()


def _capture(fmt: str, mutation: str, rng: random.Random, folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    rows = _rows(rng)
    _value_mutation(rows, mutation, rng)
    if fmt == "parquet":
        path = folder / "capture.parquet"
        table = {h: [r[i] for r in rows] for i, h in enumerate(HEADER)}
        try:
            frame = pl.DataFrame(table, strict=False)
        except (OverflowError, pl.exceptions.PolarsError):
            frame = pl.DataFrame({k: [str(v) for v in vs] for k, vs in table.items()})
        if mutation == "header_only":
            frame = frame.clear()
        raw = io.BytesIO()
        frame.write_parquet(raw)
        path.write_bytes(_byte_mutation(raw.getvalue(), mutation, rng, b""))
        return path
    if fmt == "avro":
        path = folder / "ns" / "hub" / "1" / "2024" / "01" / "01" / "00" / "00" / "00.avro"
        path.parent.mkdir(parents=True)
        data = _avro_bytes(rows, compact=mutation == "header_only")
        path.write_bytes(_byte_mutation(data, mutation, rng, b""))
        return path
    if fmt == "csv":
        data, header = _csv_bytes(rows), ",".join(HEADER).encode()
        if mutation == "header_only":
            data = header + b"\n"
    else:
        data, header = _jsonl_bytes(rows), b""
        if mutation == "repeat_header":
            header = _jsonl_bytes(rows[:1]).rstrip()
    path = folder / f"capture.{fmt}"
    gz = rng.random() < 0.15 and mutation not in {"long_line"}
    data = _byte_mutation(data, mutation, rng, header)
    if gz:
        path = path.with_name(path.name + ".gz")
        data = gzip.compress(data)
    path.write_bytes(data)
    return path


def _run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


CAPTURE_CASES = [
    (fmt, mutation, SEED + i)
    for i, (fmt, mutation) in enumerate(
        (f, m) for m in MUTATIONS for f in FORMATS for _ in range(3)
    )
]


@pytest.mark.timeout(60)
@pytest.mark.parametrize(("fmt", "mutation", "seed"), CAPTURE_CASES,
                         ids=[f"{f}-{m}-{s}" for f, m, s in CAPTURE_CASES])  # fmt: skip
def test_a_mutated_capture_replays_or_is_refused_in_one_line(
    fmt: str, mutation: str, seed: int, tmp_path: Path
) -> None:
    rng = random.Random(seed)
    path = _capture(fmt, mutation, rng, tmp_path / "in")
    flags = ["--timestamp-by", "event_time"]
    if fmt == "avro":  # Capture's own partition (the path) and arrival
        path = tmp_path / "in"
    code, _, err = _run("replay", str(path), "--out", str(tmp_path / "out"), *flags)
    assert code in (0, 2), err
    if code == 2:
        assert err.count("\n") == 1, err
        assert "Traceback" not in err
        return
    metrics = pl.read_parquet(tmp_path / "out" / "metrics.parquet")
    outcomes = pl.read_parquet(tmp_path / "out" / "outcomes.parquet")
    arrival = outcomes["arrival"].dt.epoch("ns")
    minutes = (arrival - arrival % 60_000_000_000).n_unique()
    keys = outcomes["partition"].n_unique() + 1
    assert metrics.height <= minutes * (GAP_FILL_MINUTES + 1) * max(keys, 5)
    assert metrics.filter(pl.col("partition_id").is_null())["InputEvents"].sum() == outcomes.height


def _log_mutation(data: bytes, mutation: str, rng: random.Random) -> bytes:
    text = data.decode("utf-8", errors="replace")
    if mutation == "far_years":
        return text.replace("2024-", rng.choice(["0001-", "9999-", "2099-"]), 2).encode()
    if mutation == "huge_partition":
        for key in ('"PartitionId":', '"partitionId":'):
            text = text.replace(key + " ", key).replace(key + "0", key + str(2**70), 1)
        return text.encode()
    if mutation == "negative_partition":
        return text.replace('"PartitionId":', '"PartitionId": -', 1).encode()
    if mutation == "times_as_numbers":
        return (
            text.replace('"time": "', '"time": 1709632860, "x": "', 1)
            .replace('"time":"', '"time":1709632860,"x":"', 1)
            .encode()
        )
    if mutation == "repeat_first_line":
        lines = data.split(b"\n")
        return b"\n".join([lines[0], *lines])
    return _byte_mutation(data, mutation, rng, b"")


LOG_CASES = [
    (sample, mutation, SEED + 1000 + i)
    for i, (sample, mutation) in enumerate((s, m) for m in LOG_MUTATIONS for s in LOG_SAMPLES)
]


def _line_shaped(data: bytes) -> bool:
    """A file of one JSON object per line (every non-blank line starts an object)."""
    lines = [x for x in data.split(b"\n") if x.strip()]
    return bool(lines) and all(x.lstrip(b"\xef\xbb\xbf \t").startswith(b"{") for x in lines[:5])


@pytest.mark.timeout(60)
@pytest.mark.parametrize(("sample", "mutation", "seed"), LOG_CASES,
                         ids=[f"{s}-{m}-{n}" for s, m, n in LOG_CASES])  # fmt: skip
def test_a_mutated_log_file_loses_no_record(
    sample: str, mutation: str, seed: int, tmp_path: Path
) -> None:
    rng = random.Random(seed)
    original = (ROOT / "sample_logs" / sample).read_bytes()
    data = _log_mutation(original, mutation, rng)
    path = tmp_path / Path(sample).name
    path.write_bytes(data)
    try:
        tables = aggregate_files([path])
    except OrderdocError as exc:
        refused = str(exc)
    else:
        refused = None
    if refused is not None:
        assert "\n" not in refused
        return
    parsed, quarantined = tables.data_errors, tables.quarantine
    if data.strip():
        assert parsed.height + quarantined.height > 0
    if _line_shaped(original) and mutation != "long_line":
        seen = set(parsed["source_line"].to_list()) | set(quarantined["source_line"].to_list())
        blank = {
            n for n, x in enumerate(data.split(b"\n"), 1) if not x.strip(b" \t\r\x00\xef\xbb\xbf")
        }
        assert set(range(1, data.count(b"\n") + 2)) - blank <= seen
    times = pl.concat([parsed["record_time"], parsed["from_time"], parsed["to_time"]]).drop_nulls()
    if times.len():
        assert times.dt.year().min() >= 1900
        assert times.dt.year().max() <= 2150
    minutes = tables.error_rollup.height
    assert minutes <= max(1, parsed.height) * 3


def test_the_cases_cover_every_format_and_mutation() -> None:
    assert {(f, m) for f, m, _ in CAPTURE_CASES} == {(f, m) for f in FORMATS for m in MUTATIONS}
    assert len(CAPTURE_CASES) + len(LOG_CASES) >= 250
