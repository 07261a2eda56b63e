"""Event Hubs Capture files: written with fastavro as Capture writes them, replayed through
the command line, outcomes checked against worked example A of docs/semantics.md, "Worked examples"."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from diagnostics.captures.avro import CAPTURE_COLUMNS, PROPERTY_COLUMNS
from diagnostics.captures.capture_writer import us_time
from diagnostics.captures.reader import read_capture
from diagnostics.engine.columns import OUTCOME_COLUMNS

from .helpers import EXAMPLE_A, POLICY_A, body, capture_record, ms, replay_json, run_cli, write_avro

try:
    import cramjam  # noqa: F401  (fastavro's snappy codec)

    CODECS = ["null", "deflate", "snappy"]
except ImportError:  # pragma: no cover - cramjam is a base dependency
    CODECS = ["null", "deflate"]


def capture_folder(root: Path, codec: str = "null", *, with_ms: bool = True) -> Path:
    """Example A split over partitions 0 (rows 1, 3, 5) and 1 (rows 2, 4), two files in
    partition 0; arrival with milliseconds in x-opt-enqueued-time."""
    base = root / "ns" / "hub"
    by_part: dict[tuple[int, str], list[dict]] = {}
    for i, (app, arr, *_rest) in enumerate(EXAMPLE_A):
        part = i % 2
        minute = "10" if i < 3 else "11"  # a later file for the last rows
        arrival = ms(arr) + 250 * i
        record = capture_record(
            i, body(ts=f"2024-01-01T{app}Z", row=i, nested={"device": f"d{i}"}),
            arrival if with_ms else None, us_time(arrival),
        )  # fmt: skip
        by_part.setdefault((part, minute), []).append(record)
    for (part, minute), records in by_part.items():
        write_avro(base / str(part) / f"2024/01/01/00/{minute}/00.avro", records, codec)
    return root


@pytest.mark.parametrize("codec", CODECS)
def test_capture_folder_replays_with_partition_from_path_and_ms_arrivals(
    tmp_path: Path, codec: str
) -> None:
    root = capture_folder(tmp_path / "capture", codec)
    summary, out = replay_json(
        root, tmp_path / "out", "--timestamp-by", "ts", "--partition-by", *POLICY_A
    )
    assert summary["input"]["format"] == "avro"
    assert summary["partitions"] == [0, 1]
    # partition then path-time order, records in file order
    assert out["row"].to_list() == [0, 2, 4, 1, 3]
    assert out["PartitionId"].to_list() == [0, 0, 0, 1, 1]
    arrivals = out["EventEnqueuedUtcTime"].dt.epoch("ms").to_list()
    assert arrivals == [ms(EXAMPLE_A[r][1]) + 250 * r for r in (0, 2, 4, 1, 3)]
    assert out["arrival"].dt.epoch("ms").to_list() == arrivals
    assert out["nested"].struct.field("device").to_list() == ["d0", "d2", "d4", "d1", "d3"]
    props = json.loads(out["Properties"][0])
    assert props == {"raw": "base64:/wA=", "source": "test"}
    assert json.loads(out["SystemProperties"][0])["x-opt-enqueued-time"] == arrivals[0]
    assert out.columns[:4] == ["PartitionId", "EventEnqueuedUtcTime", "SequenceNumber", "Offset"]


def test_capture_matches_the_same_events_as_csv(tmp_path: Path) -> None:
    """Same events, same flags: the Capture folder and a one-partition CSV agree (example A)."""
    root = tmp_path / "capture"
    records = [
        capture_record(i, body(ts=f"2024-01-01T{app}Z"), ms(arr), us_time(ms(arr)))
        for i, (app, arr, *_rest) in enumerate(EXAMPLE_A)
    ]
    write_avro(root / "ns" / "hub" / "0" / "2024/01/01/00/10/00.avro", records, "deflate")
    _, out = replay_json(root, tmp_path / "out", "--timestamp-by", "ts", *POLICY_A)
    assert out["system_timestamp"].dt.strftime("%H:%M:%S").to_list() == [r[2] for r in EXAMPLE_A]
    assert out["late"].to_list() == [r[3] for r in EXAMPLE_A]
    assert out["out_of_order"].to_list() == [r[4] for r in EXAMPLE_A]


def test_enqueued_time_utc_text_is_used_without_x_opt_enqueued_time(tmp_path: Path) -> None:
    root = capture_folder(tmp_path / "capture", with_ms=False)
    capture = read_capture(root)
    got = capture.events["EventEnqueuedUtcTime"].dt.epoch("ms").to_list()
    # whole seconds of the enqueued time
    assert got == [(ms(EXAMPLE_A[r][1]) + 250 * r) // 1000 * 1000 for r in (0, 2, 4, 1, 3)]
    assert us_time(ms("13:25:22")) == "1/1/2024 1:25:22 PM"


def test_bodies_that_are_not_json_objects_are_invalid_timestamps_not_crashes(
    tmp_path: Path,
) -> None:
    bodies = [body(ts="2024-01-01T00:00:00Z"), None, b"not json", b"[1, 2]", b"\xff\xfe"]
    records = [
        capture_record(i, b, ms("00:00:01") + i, "1/1/2024 12:00:01 AM")
        for i, b in enumerate(bodies)
    ]
    root = tmp_path / "c"
    write_avro(root / "ns" / "hub" / "7" / "2024/01/01/00/00/00.avro", records)
    summary, out = replay_json(root, tmp_path / "out", "--timestamp-by", "ts")
    assert out.height == 5
    assert out["invalid_timestamp"].to_list() == [False, True, True, True, True]
    assert summary["counts"]["dropped_invalid_timestamp"] == 4
    assert any(
        "4 events have a body that is not a JSON object" in n for n in summary["input"]["notes"]
    )


def test_body_fields_of_mixed_types_are_kept_as_text(tmp_path: Path) -> None:
    bodies = [body(v={"x": 1}, n=1), body(v=2, n="two"), body(n=3.5)]
    records = [capture_record(i, b, ms("00:00:01"), "") for i, b in enumerate(bodies)]
    write_avro(tmp_path / "c" / "n" / "h" / "0" / "2024/01/01/00/00/00.avro", records)
    events = read_capture(tmp_path / "c").events
    assert events["v"].to_list() == ['{"x": 1}', "2", None]
    assert events["n"].to_list() == ["1", "two", "3.5"]


def test_body_fields_named_like_capture_columns_are_renamed(tmp_path: Path) -> None:
    records = [capture_record(0, body(PartitionId="mine", late=1, ts="x"), ms("00:00:01"), "")]
    root = tmp_path / "c"
    write_avro(root / "n" / "h" / "2" / "2024/01/01/00/00/00.avro", records)
    capture = read_capture(root)
    assert capture.events["PartitionId"].to_list() == [2]
    assert capture.events["input_PartitionId"].to_list() == ["mine"]
    assert capture.events["input_late"].to_list() == [1]


def test_header_only_file_reads_no_events_and_other_files_still_count(tmp_path: Path) -> None:
    root = capture_folder(tmp_path / "capture")
    write_avro(root / "ns" / "hub" / "2" / "2024/01/01/00/10/00.avro", [])  # Capture's empty file
    capture = read_capture(root)
    assert capture.events.height == 5
    empty = tmp_path / "e"
    write_avro(empty / "ns" / "hub" / "0" / "2024/01/01/00/10/00.avro", [])
    code, _, err = run_cli("replay", str(empty), "--out", str(tmp_path / "o"))
    assert code == 2
    assert err.count("\n") == 1
    assert "no events" in err


def test_truncated_file_is_a_one_line_error_naming_it(tmp_path: Path) -> None:
    root = capture_folder(tmp_path / "capture", "deflate")
    victim = root / "ns" / "hub" / "1" / "2024/01/01/00/10/00.avro"
    victim.write_bytes(victim.read_bytes()[:-30])
    code, _, err = run_cli("replay", str(root), "--out", str(tmp_path / "o"))
    assert code == 2
    assert err.count("\n") == 1
    assert str(victim) in err
    assert "truncated" in err
    assert not (tmp_path / "o" / "outcomes.parquet").exists()


def test_not_capture_files_are_one_line_errors(tmp_path: Path) -> None:
    bad = tmp_path / "x.avro"
    bad.write_bytes(b"hello")
    code, _, err = run_cli("replay", str(bad), "--out", str(tmp_path / "o"))
    assert code == 2
    assert err.count("\n") == 1
    assert str(bad) in err
    stray = capture_folder(tmp_path / "c")
    write_avro(stray / "misplaced.avro", [])
    code, _, err = run_cli("replay", str(stray), "--out", str(tmp_path / "o"))
    assert code == 2
    assert "misplaced.avro" in err
    assert "--capture-path-format" in err


def test_custom_path_format(tmp_path: Path) -> None:
    records = [capture_record(0, body(ts="2024-01-01T00:00:00Z"), ms("00:00:01"), "")]
    root = tmp_path / "c"
    write_avro(root / "p5" / "2024-01-01" / "00.avro", records)
    fmt = "p{PartitionId}/{Year}-{Month}-{Day}/{Hour}"
    _summary, out = replay_json(root, tmp_path / "o", "--capture-path-format", fmt)
    assert out["PartitionId"].to_list() == [5]
    code, _, err = run_cli(
        "replay", str(root), "--out", str(tmp_path / "o2"), "--capture-path-format", "{Year}"
    )
    assert code == 2
    assert "{PartitionId}" in err
    assert "--capture-path-format" in err


def test_a_single_avro_file_outside_the_layout_is_partition_0(tmp_path: Path) -> None:
    records = [capture_record(0, body(ts="2024-01-01T00:00:00Z"), ms("00:00:01"), "")]
    path = write_avro(tmp_path / "one.avro", records, "deflate")
    summary, out = replay_json(path, tmp_path / "o")
    assert out["PartitionId"].to_list() == [0]
    partition = summary["input"]["columns"]["partition"]
    assert partition == {
        "column": "PartitionId",
        "reason": "the file's path does not follow the capture path format: partition 0",
    }
    assert pl.Series(out["EventEnqueuedUtcTime"]).dt.epoch("ms").to_list() == [ms("00:00:01")]


def test_timestamp_by_a_nested_body_field_with_dots(tmp_path: Path) -> None:
    records = [
        capture_record(i, body(payload={"time": f"2024-01-01T{app}Z"}), ms(arr), "")
        for i, (app, arr, *_rest) in enumerate(EXAMPLE_A)
    ]
    write_avro(tmp_path / "c" / "n" / "h" / "0" / "2024/01/01/00/10/00.avro", records)
    _, out = replay_json(
        tmp_path / "c", tmp_path / "o", "--timestamp-by", "payload.time", *POLICY_A
    )
    assert out["system_timestamp"].dt.strftime("%H:%M:%S").to_list() == [r[2] for r in EXAMPLE_A]
    assert out["payload"].struct.field("time").to_list()[0] == "2024-01-01T00:00:00Z"


def test_reading_a_folder_reports_progress_per_file(tmp_path: Path) -> None:
    root = capture_folder(tmp_path / "capture")
    seen: list[tuple[int, int]] = []
    read_capture(root, progress=lambda done, total: seen.append((done, total)))
    assert seen == [(1, 4), (2, 4), (3, 4), (4, 4)]


_FIELD = st.one_of(
    st.sampled_from(
        [
            *OUTCOME_COLUMNS,
            *CAPTURE_COLUMNS,
            *PROPERTY_COLUMNS,
            "input_late",
            "*",
            "^x$",
            "a.b",
            "ü",
        ]
    ),
    st.text(alphabet=st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=8),
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(_FIELD, min_size=1, max_size=6, unique=True),
    st.lists(st.integers(0, 3), min_size=1, max_size=8),
)
def test_every_body_field_survives_under_its_name_or_rename(names, partitions) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "c"
        for part in sorted(set(partitions)):
            rows = [i for i, p in enumerate(partitions) if p == part]
            records = [
                capture_record(i, body(**{n: f"{i}:{j}" for j, n in enumerate(names)}),
                               ms("00:00:01") + i, "")
                for i in rows
            ]  # fmt: skip
            write_avro(root / "n" / "h" / str(part) / "2024/01/01/00/00/00.avro", records)
        summary, out = replay_json(root, Path(tmp) / "o")
    order = sorted(range(len(partitions)), key=lambda i: (partitions[i], i))
    assert out.height == len(partitions)
    assert out["PartitionId"].to_list() == [partitions[i] for i in order]
    renames = {r["column"]: r["renamed"] for r in summary["input"]["renamed"]}
    for j, name in enumerate(names):
        column = renames.get(name, name)
        assert out[column].to_list() == [f"{i}:{j}" for i in order], name
