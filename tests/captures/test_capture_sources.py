"""Event Hubs Capture files: arrival and partition are Capture's whatever the bodies hold,
paths are matched wherever the command runs from, uploads take the partition from each
file's path, and no body is lost (raw text of bodies that are not JSON objects)."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import polars as pl
import pytest

from diagnostics.captures.capture_writer import us_time
from diagnostics.captures.reader import read_capture, read_capture_bytes, read_capture_uploads
from diagnostics.errors import SettingError

from .helpers import EXAMPLE_A, POLICY_A, body, capture_record, ms, replay_json, run_cli, write_avro

PART = "2024/01/01/00/10/00.avro"
SAMPLE = Path(__file__).resolve().parents[2] / "sample_logs" / "captures" / "eventhubs-capture"


def _example_a(root: Path, part: int = 3, **extra: object) -> Path:
    """Example A in one Capture file of partition ``part``; ``extra`` fields in every body."""
    records = [
        capture_record(i, body(ts=f"2024-01-01T{app}Z", **extra), ms(arr), us_time(ms(arr)))
        for i, (app, arr, *_rest) in enumerate(EXAMPLE_A)
    ]
    return write_avro(root / "ns" / "hub" / str(part) / PART, records)


def test_body_fields_never_take_over_arrival_or_partition(tmp_path: Path) -> None:
    """A body with orderdoc's and ASA's own column names: Capture's arrival and partition
    are used, the body's values are kept, the summary says so."""
    _example_a(
        tmp_path / "c",
        arrival_time="2030-01-01T00:00:00Z",
        partition_id=9,
        IoTHub={"EnqueuedTime": "2031-01-01T00:00:00Z"},
        BlobLastModifiedUtcTime="2032-01-01T00:00:00Z",
        EventEnqueuedUtcTime="2033-01-01T00:00:00Z",
    )
    summary, out = replay_json(tmp_path / "c", tmp_path / "o", "--timestamp-by", "ts", *POLICY_A)
    chosen = summary["input"]["columns"]
    assert chosen["arrival"] == {
        "column": "EventEnqueuedUtcTime",
        "reason": "Event Hubs Capture: each record's SystemProperties['x-opt-enqueued-time'] (ms)",
    }
    assert chosen["partition"] == {
        "column": "PartitionId",
        "reason": "Event Hubs Capture: the {PartitionId} segment of each file's path",
    }
    assert summary["partitions"] == [3]
    assert out["arrival"].dt.strftime("%H:%M:%S").to_list() == [r[1] for r in EXAMPLE_A]
    assert out["system_timestamp"].dt.strftime("%H:%M:%S").to_list() == [r[2] for r in EXAMPLE_A]
    assert out["late"].to_list() == [r[3] for r in EXAMPLE_A]
    # the body's values are all there, the colliding one under its documented rename
    assert out["arrival_time"].to_list() == ["2030-01-01T00:00:00Z"] * 5
    assert out["partition_id"].to_list() == [9] * 5
    assert out["input_EventEnqueuedUtcTime"].to_list() == ["2033-01-01T00:00:00Z"] * 5
    assert out["IoTHub"].struct.field("EnqueuedTime").to_list() == ["2031-01-01T00:00:00Z"] * 5
    renamed = summary["input"]["renamed"]
    assert {
        "column": "EventEnqueuedUtcTime",
        "renamed": "input_EventEnqueuedUtcTime",
        "reason": "named like an Event Hubs Capture column",
    } in renamed
    note = next(n for n in summary["input"]["notes"] if n.startswith("body fields"))
    for name in ("arrival_time", "IoTHub.EnqueuedTime", "BlobLastModifiedUtcTime", "partition_id"):
        assert repr(name) in note
    assert "arrival and partition are Capture's" in note


def test_a_body_field_named_by_a_flag_is_used_and_said_so(tmp_path: Path) -> None:
    _example_a(tmp_path / "c", arrival_time="2024-01-01T00:20:00Z", partition_id=9)
    summary, out = replay_json(
        tmp_path / "c", tmp_path / "o", "--arrival-col", "arrival_time", "--partition-col",
        "partition_id", "--partitions", "10",
    )  # fmt: skip
    assert summary["input"]["columns"]["arrival"] == {"column": "arrival_time", "reason": "chosen"}
    assert summary["partitions"] == list(range(10))
    assert out["arrival"].dt.strftime("%H:%M").to_list() == ["00:20"] * 5
    assert out["partition"].to_list() == [9] * 5
    assert not any(n.startswith("body fields") for n in summary["input"]["notes"])


def test_the_reason_names_enqueued_time_utc_when_it_is_used(tmp_path: Path) -> None:
    records = [
        capture_record(0, body(ts="x"), None, "1/1/2024 12:10:01 AM"),
        capture_record(1, body(ts="x"), ms("00:10:02"), "1/1/2024 12:10:02 AM"),
    ]
    write_avro(tmp_path / "c" / "n" / "h" / "0" / PART, records)
    capture = read_capture(tmp_path / "c")
    assert capture.choices[0].reason == (
        "Event Hubs Capture: SystemProperties['x-opt-enqueued-time'] (ms); EnqueuedTimeUtc "
        "(whole seconds) for the 1 records without it"
    )
    write_avro(tmp_path / "d" / "n" / "h" / "0" / PART, records[:1])
    assert (
        "each record's EnqueuedTimeUtc (whole seconds"
        in read_capture(tmp_path / "d").choices[0].reason
    )


def test_relative_paths_are_matched_as_absolute_paths(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The issue's repros: ``replay .`` inside ns/hub, and ``replay 00.avro`` inside a
    partition's folder (partition 1, not 0)."""
    monkeypatch.chdir(SAMPLE / "orderdoc" / "late-senders")
    summary, out = replay_json(Path("."), tmp_path / "x", "--timestamp-by", "event_time")
    assert summary["partitions"] == [0, 1, 2, 3]
    _, whole = replay_json(SAMPLE, tmp_path / "w", "--timestamp-by", "event_time")
    assert out.equals(whole)
    monkeypatch.chdir("1/2024/01/01/00/00")
    summary, out = replay_json(Path("00.avro"), tmp_path / "y")
    assert summary["partitions"] == [1]
    assert set(out["PartitionId"]) == {1}
    assert summary["input"]["columns"]["partition"]["reason"].endswith("of each file's path")
    monkeypatch.chdir("../..")  # a partition's day folder: its files still know partition 1
    summary, _ = replay_json(Path("."), tmp_path / "z")
    assert summary["partitions"] == [1]


def test_uploaded_folder_files_take_their_partition_from_their_path(tmp_path: Path) -> None:
    """A folder upload names files by their path inside the folder chosen (here the event
    hub's folder: no namespace segment); several loose files need such paths."""
    files = sorted((SAMPLE / "orderdoc" / "late-senders").rglob("*.avro"))
    root = SAMPLE / "orderdoc"
    uploads = [(f.relative_to(root).as_posix(), f.read_bytes()) for f in reversed(files)]
    capture = read_capture_uploads(uploads)
    whole = read_capture(SAMPLE)
    assert capture.events.equals(whole.events)
    assert capture.source == f"late-senders/ ({len(files)} uploaded files)"
    assert capture.choices[1].reason.endswith("segment of each file's path")
    # from a partition folder down: "1/2024/01/01/00/00.avro"
    part = [(f.relative_to(root / "late-senders").as_posix(), f.read_bytes()) for f in files]
    partitions = read_capture_uploads(part).events["PartitionId"].unique().sort()
    assert partitions.to_list() == [0, 1, 2, 3]
    loose = [(f.name, f.read_bytes()) for f in files[:2]]
    with pytest.raises(SettingError, match="does not follow the capture path format") as info:
        read_capture_uploads(loose)
    assert info.value.setting.value == "capture path format"
    one = read_capture_bytes("00.avro", files[0].read_bytes())  # one loose file: partition 0
    assert set(one.events["PartitionId"]) == {0}
    named = read_capture_bytes(uploads[0][0], uploads[0][1])
    assert set(named.events["PartitionId"]) == {3}


def test_uploads_with_a_custom_path_format(tmp_path: Path) -> None:
    records = [capture_record(0, body(ts="2024-01-01T00:00:00Z"), ms("00:00:01"), "")]
    data = write_avro(tmp_path / "f.avro", records).read_bytes()
    files = [("ns-hub-4-2024-01-01.avro", data), ("ns-hub-2-2024-01-01.avro", data)]
    fmt = "{Namespace}-{EventHub}-{PartitionId}-{Year}-{Month}-{Day}"
    capture = read_capture_uploads(files, path_format=fmt)
    assert capture.events["PartitionId"].to_list() == [2, 4]
    assert capture.source == "2 uploaded .avro files"
    with pytest.raises(SettingError, match="unknown placeholder"):
        read_capture_uploads(files, path_format="{Nope}/{PartitionId}")


def test_bodies_that_are_not_json_objects_keep_their_text(tmp_path: Path) -> None:
    bodies = [body(ts="2024-01-01T00:00:00Z", Body="mine"), None, b"not json", b"[1]",
              b"\xff\xfe", b'{"ts": "2024-01-01T00:00:00Z", "ts": "x"}']  # fmt: skip
    records = [capture_record(i, b, ms("00:00:01") + i, "") for i, b in enumerate(bodies)]
    write_avro(tmp_path / "c" / "n" / "h" / "0" / PART, records)
    summary, out = replay_json(tmp_path / "c", tmp_path / "o", "--timestamp-by", "ts")
    assert out["Body"].to_list() == [
        None, None, "not json", "[1]", "base64:" + base64.b64encode(b"\xff\xfe").decode(),
        '{"ts": "2024-01-01T00:00:00Z", "ts": "x"}',
    ]  # fmt: skip
    assert out["input_Body"].to_list() == ["mine", None, None, None, None, None]
    assert out["invalid_timestamp"].to_list() == [False] + [True] * 5
    notes = summary["input"]["notes"]
    assert any(
        n.startswith("5 events have a body that is not a JSON object (1 of them repeat a key")
        and "the body's text is in column 'Body'" in n
        for n in notes
    )
    # all bodies JSON objects: no Body column
    write_avro(tmp_path / "d" / "n" / "h" / "0" / PART, records[:1])
    assert "Body" not in read_capture(tmp_path / "d").events.columns


def test_empty_body_key_and_empty_objects_are_kept_and_listed(tmp_path: Path) -> None:
    bodies = [
        json.dumps({"ts": "2024-01-01T00:00:00Z", "": 1, "e": {}, "n": {"x": {}}}).encode(),
        json.dumps({"ts": "2024-01-01T00:00:00Z", "": 2, "e": {}, "n": {"x": {}}}).encode(),
    ]
    records = [capture_record(i, b, ms("00:00:01") + i, "") for i, b in enumerate(bodies)]
    write_avro(tmp_path / "c" / "n" / "h" / "0" / PART, records)
    summary, out = replay_json(tmp_path / "c", tmp_path / "o", "--timestamp-by", "ts")
    assert {"column": "", "renamed": "column_2", "reason": "empty name"} in summary["input"][
        "renamed"
    ]
    assert out["column_2"].to_list() == [1, 2]
    assert out["e"].to_list() == ["{}", "{}"]
    assert out["n"].to_list() == ['{"x": {}}', '{"x": {}}']
    notes = summary["input"]["notes"]
    assert "column 'e' holds empty JSON objects ({}): kept as JSON text" in notes
    code, stdout, _ = run_cli("replay", str(tmp_path / "c"), "--out", str(tmp_path / "p"))
    assert code == 0
    assert "  renamed '' -> 'column_2' (empty name)" in stdout.splitlines()


def test_generated_capture_folder_has_no_body_notes(tmp_path: Path) -> None:
    """orderdoc's own Capture sample: arrival and partition outside the body, so no note."""
    summary, out = replay_json(SAMPLE, tmp_path / "o", "--timestamp-by", "event_time")
    assert summary["input"]["notes"] == ["26 Event Hubs Capture files"]
    assert out.filter(pl.col("late")).height == 87  # README: late_senders in the sample
