"""Files as users have them: a JSON array (pretty-printed or on one line), CSV separated by
semicolons or tabs with decimal commas (detected, or given with --separator and
--decimal-comma), and errors naming file, line and column in our words."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from .helpers import iso, run_cli

EVENTS = [
    {"partition_id": i % 2, "arrival_time": iso(f"00:00:{i:02d}"), "t": iso(f"00:00:{i:02d}"),
     "v": i + 0.5, "body": {"n": i}}
    for i in range(6)
]  # fmt: skip


def _replay(path: Path, tmp_path: Path, *flags: str) -> pl.DataFrame:
    code, _, err = run_cli("replay", str(path), "--out", str(tmp_path / "o"), "--timestamp-by",
                           "t", *flags)  # fmt: skip
    assert code == 0, err
    return pl.read_parquet(tmp_path / "o" / "outcomes.parquet").sort("event_id")


@pytest.mark.parametrize("indent", [None, 2])
def test_a_json_array_is_read_as_events(tmp_path: Path, indent: int | None) -> None:
    path = tmp_path / "out.json"
    path.write_text(json.dumps(EVENTS, indent=indent))
    outcomes = _replay(path, tmp_path)
    assert outcomes["v"].to_list() == [e["v"] for e in EVENTS]
    assert outcomes["body"].struct.field("n").to_list() == list(range(6))
    assert outcomes["status"].to_list() == ["accepted"] * 6


def test_a_broken_json_array_names_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "out.json"
    path.write_text(json.dumps(EVENTS, indent=2)[:-40])
    code, _, err = run_cli("replay", str(path), "--out", str(tmp_path / "o"))
    assert code == 2
    assert err.count("\n") == 1
    assert f"{path}, line " in err
    assert ", column " in err
    assert "not valid JSON" in err


@pytest.mark.parametrize("shape", ["array", "lines"])
def test_a_field_of_mixed_kinds_names_the_event_and_field(tmp_path: Path, shape: str) -> None:
    events = [dict(e) for e in EVENTS]
    events[2]["id"] = "x"  # a number beside text is read as text: not the one named
    events[0]["id"] = 1
    events[4]["v"] = {"reading": 4.5}  # an object where the others hold numbers
    path = tmp_path / ("out.json" if shape == "array" else "out.jsonl")
    path.write_text(
        json.dumps(events, indent=2)
        if shape == "array"
        else "\n".join(json.dumps(e) for e in events)
    )
    code, _, err = run_cli("replay", str(path), "--out", str(tmp_path / "o"))
    assert code == 2
    assert err.count("\n") == 1
    unit = "element" if shape == "array" else "line"
    assert f"{path}, {unit} 5: field 'v' holds an object here but a number in {unit} 1" in err


def _european(tmp_path: Path, sep: str) -> Path:
    lines = [sep.join(["partition_id", "arrival_time", "t", "v"])]
    lines += [sep.join([str(e["partition_id"]), e["arrival_time"], e["t"], f"{e['v']}".replace(".", ",")])
              for e in EVENTS]  # fmt: skip
    path = tmp_path / "excel.csv"
    path.write_text("\r\n".join(lines) + "\r\n", encoding="utf-8-sig")
    return path


@pytest.mark.parametrize("sep", [";", "\t"])
def test_semicolon_and_tab_with_decimal_commas_are_detected(tmp_path: Path, sep: str) -> None:
    outcomes = _replay(_european(tmp_path, sep), tmp_path)
    assert outcomes["v"].dtype == pl.Float64
    assert outcomes["v"].to_list() == [e["v"] for e in EVENTS]
    assert outcomes["partition"].to_list() == [0, 1, 0, 1, 0, 1]


def test_separator_and_decimal_comma_flags(tmp_path: Path) -> None:
    path = tmp_path / "pipes.csv"
    rows = ["partition_id|arrival_time|t|v"]
    rows += [f"0|{e['arrival_time']}|{e['t']}|{str(e['v']).replace('.', ',')}" for e in EVENTS]
    path.write_text("\n".join(rows) + "\n")
    outcomes = _replay(path, tmp_path, "--separator", "|", "--decimal-comma")
    assert outcomes["v"].to_list() == [e["v"] for e in EVENTS]


def test_a_ragged_row_names_line_and_column_not_the_csv_library(tmp_path: Path) -> None:
    path = tmp_path / "ragged.csv"
    path.write_text(f"partition_id,arrival_time\n0,{iso('00:00:01')}\n0,{iso('00:00:02')},x,y\n")
    code, _, err = run_cli("replay", str(path), "--out", str(tmp_path / "o"))
    assert code == 2
    assert err.count("\n") == 1
    assert f"{path}, line 3, column 3: 4 fields where the header has 2" in err
    assert "polars" not in err.lower()
    assert "ComputeError" not in err


def test_the_summary_says_how_a_csv_was_read(tmp_path: Path) -> None:
    path = _european(tmp_path, ";")
    code, out, err = run_cli("replay", str(path), "--out", str(tmp_path / "o"), "--json",
                             "--timestamp-by", "t")  # fmt: skip
    assert code == 0, err
    notes = json.loads(out)["input"]["notes"]
    assert "CSV: semicolon-separated (detected from the header line)" in notes
    assert "CSV: decimal commas read as numbers in 'v'" in notes


@pytest.mark.parametrize(
    ("encoding", "note"),
    [
        ("cp1252", "CSV: not UTF-8; read as Windows-1252 (Excel's CSV on Windows)"),
        ("utf-16", "CSV: UTF-16 text, read as such"),
    ],
)
def test_excel_encodings_are_read_and_said(tmp_path: Path, encoding: str, note: str) -> None:
    lines = ["partition_id;arrival_time;t;site;v"]
    lines += [f"0;{e['arrival_time']};{e['t']};Gärtnerstraße;{e['v']}".replace(".5", ",5")
              for e in EVENTS]  # fmt: skip
    path = tmp_path / "excel.csv"
    path.write_bytes("\r\n".join(lines).encode(encoding))
    code, out, err = run_cli("replay", str(path), "--out", str(tmp_path / "o"),
                             "--timestamp-by", "t")  # fmt: skip
    assert code == 0, err
    assert note in out
    frame = pl.read_parquet(tmp_path / "o" / "outcomes.parquet")
    assert set(frame["site"]) == {"Gärtnerstraße"}
    assert frame["v"].to_list() == [e["v"] for e in EVENTS]


def test_a_byte_no_encoding_reads_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "odd.csv"
    path.write_bytes(b"partition_id;arrival_time\r\n0;2024-01-01T00:00:00Z\r\n\x81;x\r\n")
    code, _, err = run_cli("replay", str(path), "--out", str(tmp_path / "o"))
    assert code == 2
    assert err.count("\n") == 1
    assert f"{path}, line 3: byte 0x81 is neither UTF-8 nor Windows-1252 text" in err
