"""Tables as users hold them, through the real command line: CSV headers polars would
rename or refuse, JSON keys repeated or empty, empty JSON objects, flags naming a column
the capture lacks, and no partial outcomes when a replay fails."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from diagnostics.captures.reader import read_capture

from .helpers import EXAMPLE_A, iso, replay_json, run_cli

T0, T1 = iso("00:00:00"), iso("00:00:01")


@pytest.mark.parametrize(
    ("header", "names", "renames"),
    [
        (
            "arrival_time,x,x,x_duplicated_0",
            ["arrival_time", "x", "x_2", "x_duplicated_0"],
            [("x", "x_2", "repeated header cell")],
        ),
        (
            "arrival_time,,,_duplicated_0",
            ["arrival_time", "column_2", "column_3", "_duplicated_0"],
            [("", "column_2", "empty header cell"), ("", "column_3", "empty header cell")],
        ),
        (
            'arrival_time,"x","x",x_2,"",column_5',
            ["arrival_time", "x", "x_3", "x_2", "column_5_2", "column_5"],
            [("x", "x_3", "repeated header cell"), ("", "column_5_2", "empty header cell")],
        ),
    ],
)
def test_csv_header_cells_are_named_before_polars_reads_them(
    tmp_path: Path, header: str, names: list[str], renames: list[tuple[str, str, str]]
) -> None:
    path = tmp_path / "c.csv"
    cells = len(names)
    path.write_text(f"{header}\r\n{T0},{','.join(str(i) for i in range(1, cells))}\r\n")
    summary, out = replay_json(path, tmp_path / "o")
    assert out.columns[:cells] == names
    assert out.row(0)[1:cells] == tuple(range(1, cells))
    assert [tuple(r.values()) for r in summary["input"]["renamed"]] == renames


def test_a_csv_header_with_a_quoted_line_break_keeps_its_rows(tmp_path: Path) -> None:
    path = tmp_path / "c.csv"
    path.write_text(f'arrival_time,"a\nb","a\nb"\n{T0},1,2\n{T1},3,4\n')
    events = read_capture(path).events
    assert events.columns == ["arrival_time", "a\nb", "a\nb_2"]
    assert events["a\nb_2"].to_list() == [2, 4]


def test_jsonl_repeated_keys_are_a_one_line_error(tmp_path: Path) -> None:
    path = tmp_path / "e.jsonl"
    path.write_text(f'{{"arrival_time":"{T0}","a":1}}\n\n{{"arrival_time":"{T1}","a":1,"a":2}}\n')
    code, _, err = run_cli("replay", str(path), "--out", str(tmp_path / "o"))
    assert code == 2
    assert err == (
        f"orderdoc replay: error: {path}, line 3: key 'a' appears twice in one JSON object "
        "(keep one: the table would hold only one of its values)\n"
    )
    assert not (tmp_path / "o" / "outcomes.parquet").exists()
    nested = tmp_path / "n.jsonl"
    nested.write_text(f'{{"arrival_time":"{T0}","d":{{"x":1, "x" :2}}}}\n')
    code, _, err = run_cli("replay", str(nested), "--out", str(tmp_path / "o"))
    assert code == 2
    assert "n.jsonl, line 1: key 'x' appears twice" in err


def test_jsonl_keys_that_repeat_only_across_objects_are_fine(tmp_path: Path) -> None:
    path = tmp_path / "e.jsonl"
    path.write_text(
        f'{{"arrival_time":"{T0}","a":{{"a":1}},"b":null,"c":"x\\":y"}}\n'
        f'{{"arrival_time":"{T1}","a":{{"a":2}},"b":"z","c":"\\u0061"}}\n'
    )
    _, out = replay_json(path, tmp_path / "o")
    assert out["a"].struct.field("a").to_list() == [1, 2]
    assert out["c"].to_list() == ['x":y', "a"]


def test_empty_json_objects_replay_and_are_kept_as_text(tmp_path: Path) -> None:
    """The issue's repro: {"a": {}} made the Parquet write fail after a traceback."""
    path = tmp_path / "e.jsonl"
    path.write_text(
        f'{{"arrival_time":"{T0}","a":{{}},"b":{{"c":{{}}}},"l":[{{}}],"":5}}\n'
        f'{{"arrival_time":"{T1}","a":null,"b":{{"c":{{}}}},"l":[],"":6}}\n'
    )
    code, stdout, err = run_cli("replay", str(path), "--out", str(tmp_path / "o"))
    assert (code, err) == (0, "")
    assert "  column 'a' holds empty JSON objects ({}): kept as JSON text" in stdout.splitlines()
    assert "  renamed '' -> 'column_5' (empty name)" in stdout.splitlines()
    out = pl.read_parquet(tmp_path / "o" / "outcomes.parquet")
    assert out["a"].to_list() == ["{}", None]
    assert out["b"].to_list() == ['{"c": {}}', '{"c": {}}']
    assert out["l"].to_list() == ["[{}]", "[]"]
    assert out["column_5"].to_list() == [5, 6]
    _, out = replay_json(path, tmp_path / "p", "--timestamp-by", "b.c")  # dots reach into text
    assert out["invalid_timestamp"].to_list() == [True, True]


def test_unknown_flag_columns_list_the_input_columns(tmp_path: Path) -> None:
    path = tmp_path / "c.csv"
    path.write_text(f"arrival_time,late,ts\n{T0},x,{T0}\n")
    code, _, err = run_cli(
        "replay", str(path), "--out", str(tmp_path / "o"), "--timestamp-by", "nope"
    )
    assert code == 2
    assert err == (
        f"orderdoc replay: error: {path}: TIMESTAMP BY column 'nope' is missing (columns: "
        "'arrival_time', 'input_late', 'ts') (use --timestamp-by)\n"
    )
    code, _, err = run_cli(
        "replay", str(path), "--out", str(tmp_path / "o"), "--timestamp-by", "ts",
        "--over", "late,nope",
    )  # fmt: skip
    assert code == 2
    assert err.endswith("OVER column 'nope' is missing (columns: 'arrival_time', "
                        "'input_late', 'ts') (use --over)\n")  # fmt: skip
    assert "__row" not in err
    assert "__arrival" not in err
    code, _, err = run_cli(
        "whatif", str(path), "--out", str(tmp_path / "w"), "--timestamp-by", "ts",
        "--over", "nope", "--no-png",
    )  # fmt: skip
    assert code == 2
    assert "OVER column 'nope' is missing (columns: 'arrival_time', 'input_late', 'ts')" in err


def test_the_engine_names_input_columns_only(tmp_path: Path) -> None:
    from diagnostics.engine.policy import OrderingPolicy
    from diagnostics.engine.replay import replay
    from diagnostics.errors import InputError

    events = pl.DataFrame({"arrival_time": [T0], "v": [1]})
    with pytest.raises(InputError) as info:  # not the working columns __row, __arrival
        replay(events, OrderingPolicy(timestamp_by="nope"))
    assert str(info.value) == "TIMESTAMP BY column 'nope' is missing (columns: arrival_time)"


def test_a_failed_app_replay_leaves_no_partial_outcomes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from diagnostics.appdata.build import CaptureSettings
    from diagnostics.appdata.capture_input import build_from_reader, read_upload
    from diagnostics.engine.policy import OrderingPolicy
    from diagnostics.errors import InputError

    rows = "".join(f"{iso(arr)},{iso(app)}\n" for app, arr, *_ in EXAMPLE_A)
    data = f"arrival_time,ts\n{rows}".encode()
    minute = 60_000_000_000
    policy = OrderingPolicy("ts", late_arrival_ns=10 * minute, out_of_order_ns=3 * minute)
    settings = CaptureSettings(policy=policy)
    capture = read_upload("c.csv", data, settings)
    real = pl.DataFrame.write_parquet

    def half_written(frame: pl.DataFrame, file: Path, **kw: object) -> None:
        if Path(file).name == "outcomes.parquet":
            Path(file).write_bytes(b"PAR1")  # what a write cut short leaves
            raise pl.exceptions.ComputeError("disk full")
        real(frame, file, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(pl.DataFrame, "write_parquet", half_written)
    with pytest.raises(
        InputError, match=r"^c\.csv: the replay could not be written \(disk full\)$"
    ):
        build_from_reader(capture, settings, tmp_path / "agg")
    assert not (tmp_path / "agg" / "capture" / "outcomes.parquet").exists()
    assert not (tmp_path / "agg" / "capture" / "events.parquet").exists()
    monkeypatch.undo()
    build_from_reader(capture, settings, tmp_path / "agg")
    out = pl.read_parquet(tmp_path / "agg" / "capture" / "outcomes.parquet")
    assert out["late"].to_list() == [r[3] for r in EXAMPLE_A]
    assert out["out_of_order"].to_list() == [r[4] for r in EXAMPLE_A]
