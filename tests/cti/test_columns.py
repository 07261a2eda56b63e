"""``orderdoc cti`` on captures whose columns are named like CTI outcome columns: kept as
``input_<name>`` (the rule every replay follows), listed in the summary, values intact."""

from __future__ import annotations

import contextlib
import csv
import io
import json
import tempfile
from pathlib import Path
from typing import Any

import polars as pl
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from diagnostics.captures.names import is_pattern
from diagnostics.cli import main
from diagnostics.cti.frames import CTI_OUTCOME_COLUMNS

BASE = "2024-01-01T00:00:"
#: Five events, one CTI after each: the 1 s event arrives after the 5 s CTI (a violation).
STARTS = [0, 2, 5, 1, 7]
ARRIVALS = [0, 2, 5, 6, 7]


def ts(seconds: int) -> str:
    return f"{BASE}{seconds:02d}Z"


def write_csv(path: Path, header: list[str], rows: list[list[Any]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, quoting=csv.QUOTE_ALL)
        writer.writerow(header)
        writer.writerows(rows)
    return path


def cti_json(capture: Path, out: Path, *flags: str) -> tuple[dict[str, Any], pl.DataFrame, str]:
    """``orderdoc cti CAPTURE --json`` (exit 0 asserted): summary, outcomes, stdout."""
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        code = main(["cti", str(capture), "--out", str(out), "--cti-every", "1", *flags])
    assert code == 0, stderr.getvalue()
    text = stdout.getvalue()
    summary = json.loads(text) if "--json" in flags else {}
    return summary, pl.read_parquet(out / "outcomes.parquet"), text


def test_columns_named_like_outcomes_are_renamed_and_outcomes_unchanged(tmp_path: Path) -> None:
    plain = write_csv(
        tmp_path / "plain.csv",
        ["start_time", "arrival_time"],
        [[ts(s), ts(a)] for s, a in zip(STARTS, ARRIVALS, strict=True)],
    )
    header = ["start_time", "arrival_time", "event_id", "status", "arrival", "late", "status"]
    rows = [
        [ts(s), ts(a), f"e{i}", "new", f"a{i}", "no", f"s{i}"]
        for i, (s, a) in enumerate(zip(STARTS, ARRIVALS, strict=True))
    ]
    path = write_csv(tmp_path / "capture.csv", header, rows)
    _, golden, _ = cti_json(plain, tmp_path / "plain")
    summary, out, _ = cti_json(path, tmp_path / "out", "--json")
    renamed = [(r["column"], r["renamed"]) for r in summary["inputs"][0]["renamed"]]
    assert renamed == [
        ("status", "status_2"),  # the repeated header cell, first
        ("event_id", "input_event_id"),
        ("status", "input_status"),
        ("arrival", "input_arrival"),
    ]
    assert out.columns[:7] == [
        "start_time", "arrival_time", "input_event_id", "input_status", "input_arrival", "late",
        "status_2",
    ]  # fmt: skip
    assert out.columns[7:] == list(CTI_OUTCOME_COLUMNS)
    assert out["input_event_id"].to_list() == [f"e{i}" for i in range(5)]
    assert out["input_arrival"].to_list() == [f"a{i}" for i in range(5)]
    assert out["status_2"].to_list() == [f"s{i}" for i in range(5)]
    assert out["late"].to_list() == ["no"] * 5  # not a CTI outcome column: kept as is
    assert out.select(CTI_OUTCOME_COLUMNS).equals(golden.select(CTI_OUTCOME_COLUMNS))
    assert out["status"].to_list() == ["accepted", "accepted", "accepted", "dropped", "accepted"]
    assert out["violation"].to_list() == [False, False, False, True, False]


def test_flags_name_a_renamed_column_by_its_name_in_the_file(tmp_path: Path) -> None:
    rows = [[ts(s), ts(a)] for s, a in zip(STARTS, ARRIVALS, strict=True)]
    path = write_csv(tmp_path / "c.csv", ["status", "arrival"], rows)
    summary, out, _ = cti_json(
        path, tmp_path / "out", "--start-col", "status", "--arrival-col", "arrival", "--json"
    )
    assert [r["renamed"] for r in summary["inputs"][0]["renamed"]] == [
        "input_status",
        "input_arrival",
    ]
    assert out["input_status"].to_list() == [ts(s) for s in STARTS]
    assert out["arrival"].dt.second().to_list() == ARRIVALS
    assert out["violation"].to_list() == [False, False, False, True, False]


def test_the_text_summary_lists_the_renames_of_each_input(tmp_path: Path) -> None:
    rows = [[ts(s), ts(a), "x"] for s, a in zip(STARTS, ARRIVALS, strict=True)]
    left = write_csv(tmp_path / "left.csv", ["start_time", "arrival_time", "shape"], rows)
    right = write_csv(tmp_path / "right.csv", ["start_time", "arrival_time", "dropped"], rows)
    _, out, text = cti_json(left, tmp_path / "out", "--cti-union", str(right))
    assert "  renamed 'shape' -> 'input_shape' (named like an outcome column)" in text
    assert "  renamed 'dropped' -> 'input_dropped' (named like an outcome column)" in text
    assert out["input_shape"].to_list() == ["x"] * 5
    other = pl.read_parquet(tmp_path / "out" / "outcomes_right.parquet")
    assert other["input_dropped"].to_list() == ["x"] * 5
    assert other["dropped"].dtype == pl.Boolean


_NAME = st.one_of(
    st.sampled_from([*CTI_OUTCOME_COLUMNS, "input_status", "input_arrival_2", "a b", "時間", "*"]),
    st.text(
        alphabet=st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp")),
        min_size=1,
        max_size=8,
    ).filter(lambda s: s.strip() == s),
)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    names=st.lists(_NAME, min_size=2, max_size=7, unique=True),
    times=st.lists(st.tuples(st.integers(0, 30), st.integers(0, 30)), min_size=1, max_size=10),
)
def test_any_input_column_names_keep_every_value(
    names: list[str], times: list[tuple[int, int]]
) -> None:
    start, arrival = names[0], names[1]
    rows = [
        [ts(s), ts(a), *(f"r{i}c{j}" for j in range(2, len(names)))]
        for i, (s, a) in enumerate(times)
    ]
    with tempfile.TemporaryDirectory() as tmp:
        path = write_csv(Path(tmp) / "capture.csv", names, rows)
        summary, out, _ = cti_json(  # a name may start with "-": the --flag=NAME form
            path, Path(tmp) / "out", f"--start-col={start}", f"--arrival-col={arrival}", "--json"
        )
    assert out.height == len(rows)
    assert out["event_id"].to_list() == list(range(len(rows)))
    assert out.columns[len(names) :] == list(CTI_OUTCOME_COLUMNS)
    renames = {r["column"]: r["renamed"] for r in summary["inputs"][0]["renamed"]}
    assert set(renames) == {n for n in names if n in CTI_OUTCOME_COLUMNS or is_pattern(n)}
    for j, name in enumerate(names):
        assert out.columns[j] == renames.get(name, name)
        assert out[out.columns[j]].to_list() == [row[j] for row in rows]
    assert out["arrival"].dt.second().to_list() == [a for _, a in times]
    assert out["application_time"].dt.second().to_list() == [s for s, _ in times]
