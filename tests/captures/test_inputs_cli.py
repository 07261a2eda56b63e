"""``orderdoc replay`` on captures as users hold them: any column names (hypothesis, through
the real command line), ASA's passthrough columns, and the issue's own example."""

from __future__ import annotations

import csv
import io
import json
import tempfile
from pathlib import Path

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from diagnostics.captures.names import is_pattern
from diagnostics.engine.columns import OUTCOME_COLUMNS

from .helpers import EXAMPLE_A, POLICY_A, iso, replay_json, run_cli, write_csv

RESERVED = [*OUTCOME_COLUMNS, "__row", "__arrival"]
_NAME = st.one_of(
    st.sampled_from(
        [*RESERVED, "input_late", "input_status_2", "a b", "a.b", "größe", "时间", "x"]
    ),
    st.text(
        alphabet=st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp")),
        min_size=1,
        max_size=10,
    ).filter(lambda s: s.strip() == s and s.strip()),
)


def _table(names: list[str], seconds: list[int], skew: list[int]) -> list[list[str]]:
    """Rows: column 0 the arrival, column 1 the application time, the others ``r<i>c<j>``."""
    return [
        [
            iso(f"00:00:{s:02d}") if j == 0 else iso(f"00:00:{max(0, s + k):02d}") if j == 1
            else f"r{i}c{j}"
            for j in range(len(names))
        ]
        for i, (s, k) in enumerate(zip(seconds, skew, strict=True))
    ]  # fmt: skip


@st.composite
def captures(draw: st.DrawFn) -> tuple[str, str, list[str], list[list[str]], str]:
    """Random column names; in CSV also empty and repeated header cells (after the first
    two, which the flags name), in JSON Lines and Parquet an empty name."""
    names = draw(st.lists(_NAME, min_size=2, max_size=8, unique=True))
    arrival, ts = names[0], names[1]
    fmt = draw(st.sampled_from(["csv", "jsonl", "parquet"]))
    extra = draw(st.lists(st.one_of(st.just(""), st.sampled_from(names)), max_size=3))
    if fmt != "csv":  # a JSON object or a Parquet schema names a column once
        extra = [""] if "" in extra else []
    for cell in extra:
        names.insert(draw(st.integers(2, len(names))), cell)
    rows = draw(st.integers(min_value=1, max_value=12))
    seconds = draw(st.lists(st.integers(0, 30), min_size=rows, max_size=rows))
    skew = draw(st.lists(st.integers(-20, 5), min_size=rows, max_size=rows))
    return arrival, ts, names, _table(names, seconds, skew), fmt


def _every_outcome_name(fmt: str) -> tuple[str, str, list[str], list[list[str]], str]:
    """Every outcome and working column name at once (the first two as the flags' columns)."""
    names = [*RESERVED, "input_late", "input_status_2"]
    return names[0], names[1], names, _table(names, [3, 1, 2], [0, -2, 1]), fmt


def _write(path: Path, names: list[str], table: list[list[str]], fmt: str) -> Path:
    if fmt == "csv":
        return write_csv(path, names, table, quoting=csv.QUOTE_ALL)
    if fmt == "jsonl":  # written as text: polars would name an empty key its own way
        path.write_text(
            "".join(json.dumps(dict(zip(names, row, strict=True))) + "\n" for row in table)
        )
    else:
        columns = {name: [row[j] for row in table] for j, name in enumerate(names)}
        pq.write_table(pa.table(columns), path)
    return path


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(captures())
@example(_every_outcome_name("csv"))
@example(_every_outcome_name("jsonl"))
@example(_every_outcome_name("parquet"))
@example(
    (
        "t",
        "a",
        ["t", "a", "", "a", "", "late", "late", "column_3", "a_2"],
        _table(["t", "a", "", "a", "", "late", "late", "column_3", "a_2"], [1, 2], [0, 0]),
        "csv",
    )
)
def test_any_input_column_names_replay_and_keep_every_value(case) -> None:
    arrival, ts, names, table, fmt = case
    with tempfile.TemporaryDirectory() as tmp:
        path = _write(Path(tmp) / f"capture.{fmt}", names, table, fmt)
        summary, out = replay_json(  # NAME may start with "-": the --flag=NAME form
            path, Path(tmp) / "out", f"--arrival-col={arrival}", f"--timestamp-by={ts}"
        )
    assert out.height == len(table)
    assert out.columns[len(names) :] == list(OUTCOME_COLUMNS)
    renames = [(r["column"], r["renamed"]) for r in summary["input"]["renamed"]]
    changed = []
    for j, name in enumerate(names):
        column = out.columns[j]
        if names.index(name) < j:  # a repeated header cell: <name>_2, ...
            assert column.startswith(f"{name}_") if name else column.startswith(f"column_{j + 1}")
        elif not name:  # an empty cell or name in position N: column_N
            assert column.startswith(f"column_{j + 1}")
        elif name in RESERVED or is_pattern(name):
            assert column.startswith(f"input_{name}")
        else:
            assert column == name
        if column != name:
            changed.append((name, column))
        values = out[column].cast(pl.String).to_list()
        expected = [row[j] for row in table]
        if j < 2:  # times: read as timestamps by the parquet/JSON reader or kept as text
            parsed = pl.Series(values).str.to_datetime(time_zone="UTC", strict=False)
            assert (
                parsed.to_list() == pl.Series(expected).str.to_datetime(time_zone="UTC").to_list()
            )
        else:
            assert values == expected
    assert sorted(renames) == sorted(changed)  # every rename listed, nothing else
    assert summary["counts"]["events"] == len(table)
    arrivals = pl.Series([row[0] for row in table]).str.to_datetime(time_zone="UTC")
    assert out["arrival"].to_list() == arrivals.cast(pl.Datetime("ns", "UTC")).to_list()


def test_issue_example_columns_named_like_outcomes_give_the_golden_outcomes(tmp_path: Path) -> None:
    header = ["event_id", "partition_id", "arrival_time", "app_time", "late", "status", "watermark"]
    rows = [
        [f"e{i}", 0, iso(arr), iso(app), "yes", "new", "w"]
        for i, (app, arr, *_rest) in enumerate(EXAMPLE_A)
    ]
    path = write_csv(tmp_path / "capture.csv", header, rows)
    summary, out = replay_json(path, tmp_path / "out", "--timestamp-by", "app_time", *POLICY_A)
    assert [r["renamed"] for r in summary["input"]["renamed"]] == [
        "input_event_id", "input_late", "input_status", "input_watermark",
    ]  # fmt: skip
    assert out["input_event_id"].to_list() == [f"e{i}" for i in range(5)]
    assert out["input_late"].to_list() == ["yes"] * 5
    assert out["event_id"].to_list() == list(range(5))
    clock = out["system_timestamp"].dt.strftime("%H:%M:%S").to_list()
    assert clock == [r[2] for r in EXAMPLE_A]
    assert out["late"].to_list() == [r[3] for r in EXAMPLE_A]
    assert out["out_of_order"].to_list() == [r[4] for r in EXAMPLE_A]
    # a flag may name a renamed input column by its name in the file
    summary, out = replay_json(
        path, tmp_path / "out2", "--timestamp-by", "app_time", "--over", "status", *POLICY_A
    )
    assert summary["policy"].startswith("TIMESTAMP BY app_time OVER input_status,")
    assert out["timeline"].n_unique() == 1  # one key value: one substream


def test_passthrough_capture_replays_with_no_column_flags(tmp_path: Path) -> None:
    header = ["EventProcessedUtcTime", "PartitionId", "EventEnqueuedUtcTime", "ts", "device"]
    rows = [
        [iso("00:20:00"), 3, f"{iso(arr)[:-1]}.0000000Z", iso(app), "d1"]
        for app, arr, *_rest in EXAMPLE_A
    ]
    path = write_csv(tmp_path / "passthrough.csv", header, rows)
    summary, out = replay_json(path, tmp_path / "out", "--timestamp-by", "ts", *POLICY_A)
    chosen = summary["input"]["columns"]
    assert chosen["arrival"]["column"] == "EventEnqueuedUtcTime"
    assert "Event Hubs" in chosen["arrival"]["reason"]
    assert chosen["partition"]["column"] == "PartitionId"
    assert summary["partitions"] == [3]
    assert out["system_timestamp"].dt.strftime("%H:%M:%S").to_list() == [r[2] for r in EXAMPLE_A]
    code, stdout, _ = run_cli(
        "replay", str(path), "--out", str(tmp_path / "o"), "--timestamp-by", "ts"
    )
    assert code == 0
    assert "arrival column: EventEnqueuedUtcTime (Event Hubs input" in stdout


def test_two_arrival_candidates_are_a_one_line_error_naming_both_and_the_flag(
    tmp_path: Path,
) -> None:
    header = ["EventEnqueuedUtcTime", "BlobLastModifiedUtcTime", "ts"]
    path = write_csv(
        tmp_path / "both.csv", header, [[iso("00:00:01"), iso("00:00:02"), iso("00:00:00")]]
    )
    code, _, err = run_cli("replay", str(path), "--out", str(tmp_path / "o"))
    assert code == 2
    assert err.count("\n") == 1
    assert "'EventEnqueuedUtcTime'" in err
    assert "'BlobLastModifiedUtcTime'" in err
    assert "--arrival-col" in err
    assert str(path) in err
    code, _, err = run_cli(
        "replay",
        str(path),
        "--out",
        str(tmp_path / "o"),
        "--arrival-col",
        "BlobLastModifiedUtcTime",
    )
    assert code == 0, err


def test_processed_time_is_never_the_arrival(tmp_path: Path) -> None:
    path = write_csv(
        tmp_path / "p.csv", ["EventProcessedUtcTime", "ts"], [[iso("00:00:01"), iso("00:00:00")]]
    )
    code, _, err = run_cli("replay", str(path), "--out", str(tmp_path / "o"))
    assert code == 2
    assert "EventProcessedUtcTime' is when ASA read the event" in err
    assert "(use --arrival-col)" in err


def test_whatif_and_explain_read_the_same_renamed_capture(tmp_path: Path) -> None:
    header = ["event_id", "partition_id", "arrival_time", "late", "status", "device"]
    rows = [
        [f"e{i}", 0, iso(arr), iso(app), "s", f"d{i % 2}"]
        for i, (app, arr, *_rest) in enumerate(EXAMPLE_A)
    ]
    path = write_csv(tmp_path / "capture.csv", header, rows)
    code, out, err = run_cli(
        "whatif", str(path), "--out", str(tmp_path / "w"), "--timestamp-by", "late",
        "--late-arrival", "5s,10m", "--out-of-order", "0s,3m", "--over", "status",
        "--no-png", "--json",
    )  # fmt: skip
    assert code == 0, err
    table = pl.read_json(io.StringIO(out))
    chosen = table.filter(
        (pl.col("late_arrival_s") == 600)
        & (pl.col("out_of_order_s") == 180)
        & ~pl.col("partition_by")
    )
    assert chosen.height == 2  # without and with OVER status (one key value: the same)
    assert chosen["adjusted"].to_list() == [2, 2]  # example A: rows 1 and 5
    code, out, err = run_cli(
        "explain", "--events", str(path), "--timestamp-by", "late", *POLICY_A, "--format", "json"
    )
    assert code == 0, err
    assert json.loads(out)["sources"] == ["capture"]


def test_whatif_states_the_columns_it_read(tmp_path: Path) -> None:
    capture = Path(__file__).resolve().parents[2] / "sample_logs" / "captures" / "passthrough.csv"
    code, out, err = run_cli(
        "whatif", str(capture), "--out", str(tmp_path / "w"), "--timestamp-by", "event_time",
        "--late-arrival", "5s", "--out-of-order", "0s", "--no-png", "--no-verify",
    )  # fmt: skip
    assert code == 0, err
    assert "  arrival column: EventEnqueuedUtcTime (Event Hubs input" in out
    assert "  partition column: PartitionId (the input partition ASA adds" in out


def test_an_unclosed_quote_in_the_header_still_gives_one_line(tmp_path: Path) -> None:
    path = tmp_path / "broken.csv"
    path.write_text('"a,b\n1,"2\n', encoding="utf-8")
    code, _, err = run_cli("replay", str(path), "--out", str(tmp_path / "o"))
    assert code == 2
    assert err.count("\n") == 1
    assert err.startswith(f"orderdoc replay: error: {path}: ")
    assert "'a,b\\n1,2'" in err  # the column name read from the broken header, shown escaped


def test_the_app_upload_replays_a_capture_with_colliding_names(tmp_path: Path) -> None:
    from diagnostics.appdata.build import CaptureSettings
    from diagnostics.appdata.capture_input import build_from_reader, read_upload
    from diagnostics.engine.policy import OrderingPolicy

    header = ["event_id", "partition_id", "arrival_time", "app_time", "late", "status", "watermark"]
    rows = [
        [f"e{i}", 0, iso(arr), iso(app), "yes", "new", "w"]
        for i, (app, arr, *_rest) in enumerate(EXAMPLE_A)
    ]
    data = write_csv(tmp_path / "capture.csv", header, rows).read_bytes()
    minute = 60_000_000_000
    policy = OrderingPolicy("app_time", late_arrival_ns=10 * minute, out_of_order_ns=3 * minute)
    settings = CaptureSettings(policy=policy)
    said: list[str] = []
    build_from_reader(
        read_upload("capture.csv", data, settings),
        settings,
        tmp_path / "agg",
        lambda _f, message: said.append(message),
    )
    assert "renamed 'late' -> 'input_late' (named like an outcome column)" in said[0]
    out = pl.read_parquet(tmp_path / "agg" / "capture" / "outcomes.parquet")
    assert out["input_event_id"].to_list() == [f"e{i}" for i in range(5)]
    assert out["input_status"].to_list() == ["new"] * 5
    assert out["input_watermark"].to_list() == ["w"] * 5
    clock = out["system_timestamp"].dt.strftime("%H:%M:%S").to_list()
    assert clock == [r[2] for r in EXAMPLE_A]
    assert out["late"].to_list() == [r[3] for r in EXAMPLE_A]
    assert out["out_of_order"].to_list() == [r[4] for r in EXAMPLE_A]
