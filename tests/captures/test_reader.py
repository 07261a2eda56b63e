"""The capture reader on input it did not write: BOM, CRLF, quoted and odd headers, empty and
header-only files, gzip, IoT Hub's nested enqueued time, and the rename rule."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import polars as pl
import pytest

from diagnostics.captures.detect import SettingError
from diagnostics.captures.names import rename_taken, unique_header
from diagnostics.captures.reader import read_capture, read_capture_bytes
from diagnostics.errors import InputError

from .helpers import iso, run_cli

T1, T2 = iso("00:00:01"), iso("00:00:02")


def test_rename_rule_takes_the_first_free_name() -> None:
    frame = pl.DataFrame({"late": [1], "input_late": [2], "input_late_2": [3], "status": [4]})
    renamed, renames = rename_taken(frame)
    assert renamed.columns == ["input_late_3", "input_late", "input_late_2", "input_status"]
    assert [r.describe() for r in renames] == [
        "'late' -> 'input_late_3' (named like an outcome column)",
        "'status' -> 'input_status' (named like an outcome column)",
    ]
    assert renamed.row(0) == (1, 2, 3, 4)


def test_unique_header_names_empty_and_repeated_cells() -> None:
    names, renames = unique_header(["a", "", "a", "a_2", "", "column_2"])
    assert names == ["a", "column_2_2", "a_3", "a_2", "column_5", "column_2"]
    assert [r.reason.value for r in renames] == [
        "empty header cell", "repeated header cell", "empty header cell",
    ]  # fmt: skip


def test_bom_crlf_quoted_headers_and_odd_names(tmp_path: Path) -> None:
    text = (
        '\ufeff"arrival_time","my ts","a.b","größe",""\r\n'
        f'{T1},"{T1}","x,y","é",1\r\n'
        f"{T2},{T2},z,ü,2\r\n"
    )
    path = tmp_path / "odd.csv"
    path.write_bytes(text.encode("utf-8"))
    capture = read_capture(path)
    assert capture.events.columns == ["arrival_time", "my ts", "a.b", "größe", "column_5"]
    assert capture.events["a.b"].to_list() == ["x,y", "z"]
    assert capture.columns.arrival == "arrival_time"
    gz = tmp_path / "odd.csv.gz"
    gz.write_bytes(gzip.compress(path.read_bytes()))
    assert read_capture(gz).events.equals(capture.events)


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("empty.csv", b"", "the file is empty"),
        ("blank.jsonl", b"\n\n", "the file is empty"),
        ("bad.jsonl", b'{"arrival_time": 1}\n{oops\n', "line 2, column 2: not valid JSON"),
        ("cut.csv.gz", gzip.compress(b"arrival_time\n" + T1.encode(), mtime=0)[:15], "gzip"),
        ("capture.xlsx", b"PK", "unknown file type '.xlsx'"),
    ],
)
def test_unreadable_files_are_one_line_errors(
    tmp_path: Path, name: str, content: bytes, message: str
) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(InputError, match=message):
        read_capture(path)
    code, _, err = run_cli("replay", str(path), "--out", str(tmp_path / "o"))
    assert code == 2
    assert err.count("\n") == 1
    assert name in err


def test_header_only_file_is_a_one_line_error(tmp_path: Path) -> None:
    path = tmp_path / "header.csv"
    path.write_text("arrival_time,ts\r\n")
    assert read_capture(path).events.height == 0
    code, _, err = run_cli("replay", str(path), "--out", str(tmp_path / "o"))
    assert code == 2
    assert err == f"orderdoc replay: error: {path}: the capture holds no events\n"


def test_iot_hub_enqueued_time_as_struct_json_text_or_flat_column(tmp_path: Path) -> None:
    rows = [{"IoTHub": {"EnqueuedTime": T1, "ConnectionDeviceId": "d"}, "ts": T1}]
    path = tmp_path / "iot.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows))
    capture = read_capture(path)
    assert capture.columns.arrival == "IoTHub.EnqueuedTime"
    assert capture.events["IoTHub.EnqueuedTime"].to_list() == [T1]
    flat = tmp_path / "flat.csv"
    flat.write_text(f"IoTHub.EnqueuedTime,EventEnqueuedUtcTime,ts\n{T1},{T1},{T1}\n")
    chosen = read_capture(flat).choices[0]
    assert chosen.column == "IoTHub.EnqueuedTime"
    assert "IoT Hub" in chosen.reason
    text = tmp_path / "text.csv"
    record = json.dumps({"EnqueuedTime": T2}).replace('"', '""')
    text.write_text(f'IoTHub,ts\n"{record}",{T1}\n')
    events = read_capture(text).events
    assert events["IoTHub.EnqueuedTime"].to_list() == [T2]
    code, out, err = run_cli(
        "replay", str(text), "--out", str(tmp_path / "o"), "--timestamp-by", "ts"
    )
    assert code == 0, err
    assert "arrival column: IoTHub.EnqueuedTime (IoT Hub input" in out


def test_explicit_columns_that_are_missing_name_the_setting(tmp_path: Path) -> None:
    path = tmp_path / "c.csv"
    path.write_text(f"arrival_time,ts\n{T1},{T1}\n")
    with pytest.raises(SettingError, match="partition column 'pid' is missing") as info:
        read_capture(path, partition="pid")
    assert info.value.setting.value == "partition column"
    code, _, err = run_cli("replay", str(path), "--out", str(tmp_path / "o"), "--arrival-col", "t")
    assert code == 2
    assert "arrival column 't' is missing" in err
    assert err.rstrip().endswith("(use --arrival-col)")


def test_uploaded_bytes_go_through_the_same_reader() -> None:
    data = f"late,arrival_time\n1,{T1}\n".encode()
    capture = read_capture_bytes("up.csv", data)
    assert capture.events.columns == ["input_late", "arrival_time"]
    assert capture.columns.arrival == "arrival_time"
