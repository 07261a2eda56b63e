"""Cost follows the data, not the time span: one far-off arrival (a device clock at year 1
or 9999, an export error) is reported, kept, and does not make the replay, the CTI replay,
whatif or the aggregate walk every minute in between."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

from diagnostics.captures.far_off import FAR_GAP_NS, far_off_mask, far_runs
from diagnostics.durations import MINUTE
from diagnostics.instrument.idle import idle_notices, notices_per_gap
from diagnostics.logs.aggregate import aggregate_files
from diagnostics.minutes import GAP_FILL_MINUTES, minute_grid
from diagnostics.timestamps import EARLIEST, LATEST, to_utc

from .helpers import run_cli, write_csv

HEADER = ["message_id", "device_id", "partition_id", "event_time", "arrival_time"]
FAR = ("0001-01-01T00:00:00Z", "9999-12-31T23:59:59Z")


def _rows(n: int = 300) -> list[list[object]]:
    """``n`` events over five minutes on four partitions, arrivals 0.2 s after the event."""
    rows = []
    for i in range(n):
        ms = i * 1000
        event = f"2024-01-01T00:{ms // 60000:02d}:{ms % 60000 // 1000:02d}.000Z"
        arrival = f"2024-01-01T00:{ms // 60000:02d}:{ms % 60000 // 1000:02d}.200Z"
        rows.append([i, f"dev-{i % 7}", i % 4, event, arrival])
    return rows


def _captures(tmp_path: Path) -> tuple[Path, Path]:
    rows = _rows()
    clean = write_csv(tmp_path / "clean.csv", HEADER, rows)
    far = [[900 + k, "dev-x", k % 4, value, value] for k, value in enumerate(FAR)]
    return clean, write_csv(tmp_path / "far.csv", HEADER, [*rows[:150], *far, *rows[150:]])


def _minutes_with_data(path: Path) -> int:
    arrivals = to_utc(pl.read_csv(path)["arrival_time"]).dt.epoch("ns").to_numpy()
    return len(np.unique(arrivals - arrivals % MINUTE))


def test_far_off_times_are_clamped_never_wrapped() -> None:
    parsed = to_utc(pl.Series([*FAR, "2024-01-01T00:00:00.123456789Z"]))
    assert parsed.dt.epoch("ns").to_list() == [EARLIEST, LATEST, 1704067200123456789]


def test_replay_work_is_bounded_by_the_minutes_with_data(tmp_path: Path) -> None:
    clean, far = _captures(tmp_path)
    code, out_clean, err = run_cli("replay", str(clean), "--out", str(tmp_path / "c"),
                                   "--timestamp-by", "event_time")  # fmt: skip
    assert code == 0, err
    code, out_far, err = run_cli("replay", str(far), "--out", str(tmp_path / "f"),
                                 "--timestamp-by", "event_time")  # fmt: skip
    assert code == 0, err
    # each far-off arrival: one line naming row, value, kept and why
    assert "row 151: '0001-01-01T00:00:00Z' is before 1900-01-01" in out_far
    assert "row 152: '9999-12-31T23:59:59Z' is after 2150-01-01" in out_far
    assert out_far.count("kept, replayed as arriving at") == 2
    assert "kept" not in out_clean
    metrics = pl.read_parquet(tmp_path / "f" / "metrics.parquet")
    keys = 1 + 4  # the job and four partitions
    data_minutes = _minutes_with_data(far)
    assert metrics.height <= data_minutes * (GAP_FILL_MINUTES + 1) * keys
    clean_rows = pl.read_parquet(tmp_path / "c" / "metrics.parquet").height
    assert metrics.height <= clean_rows + 2 * (GAP_FILL_MINUTES + 1) * keys
    # every event is counted once, far-off ones included
    assert metrics.filter(pl.col("partition_id").is_null())["InputEvents"].sum() == 302
    records = (tmp_path / "f" / "diagnostics.jsonl").read_text().splitlines()
    clean_records = (tmp_path / "c" / "diagnostics.jsonl").read_text().splitlines()
    idle_bound = 2 * 4 * 2 * notices_per_gap(5 * MINUTE)  # two gaps per partition, both sides
    assert len(records) <= len(clean_records) + idle_bound + 10
    outcomes = pl.read_parquet(tmp_path / "f" / "outcomes.parquet")
    assert outcomes.height == 302
    assert sorted(outcomes["arrival"].dt.epoch("ns").to_list())[::301] == [EARLIEST, LATEST]


def test_a_kept_far_arrival_in_range_is_named_with_its_distance(tmp_path: Path) -> None:
    rows = _rows(50)
    rows[10][4] = "2099-06-01T00:00:00Z"
    path = write_csv(tmp_path / "2099.csv", HEADER, rows)
    code, out, err = run_cli("replay", str(path), "--out", str(tmp_path / "o"),
                             "--timestamp-by", "event_time")  # fmt: skip
    assert code == 0, err
    line = next(x for x in out.splitlines() if "row 11:" in x)
    assert "'2099-06-01T00:00:00Z' is 75 years after the other arrivals" in line
    assert "kept and replayed where it falls" in line
    metrics = pl.read_parquet(tmp_path / "o" / "metrics.parquet")
    assert metrics.height <= 2 * (GAP_FILL_MINUTES + 1) * 5


def test_cti_replay_with_a_far_arrival_is_bounded(tmp_path: Path) -> None:
    _, far = _captures(tmp_path)
    code, _, err = run_cli("cti", str(far), "--out", str(tmp_path / "o"), "--cti-every", "1s",
                           "--start-col", "event_time")  # fmt: skip
    assert code == 0, err
    assert "row 152: '9999-12-31T23:59:59Z' is after 2150-01-01" in err
    metrics = tmp_path / "o" / "metrics.parquet"
    if metrics.exists():
        assert (
            pl.read_parquet(metrics).height <= _minutes_with_data(far) * (GAP_FILL_MINUTES + 1) * 3
        )


def test_whatif_with_far_arrivals_runs(tmp_path: Path) -> None:
    _, far = _captures(tmp_path)
    code, out, err = run_cli("whatif", str(far), "--timestamp-by", "event_time",
                             "--late-arrival", "0s,5s", "--out", str(tmp_path / "w"))  # fmt: skip
    assert code == 0, err
    assert "row 152: '9999-12-31T23:59:59Z'" in out


def test_explain_with_far_arrivals_says_so(tmp_path: Path) -> None:
    _, far = _captures(tmp_path)
    code, _, err = run_cli("explain", "--events", str(far), "--timestamp-by", "event_time")
    assert code == 0, err
    assert "warning: arrival column 'arrival_time', row 151: '0001-01-01T00:00:00Z'" in err


def test_a_log_record_far_off_is_quarantined_by_the_aggregate(tmp_path: Path) -> None:
    record = {
        "time": "2024-03-05T10:01:00.0000000Z",
        "resourceId": "/SUBSCRIPTIONS/0/RESOURCEGROUPS/RG/PROVIDERS/MICROSOFT.STREAMANALYTICS"
        "/STREAMINGJOBS/JOB",
        "category": "Execution",
        "operationName": "Process Events",
        "level": "Information",
        "properties": {
            "Source": "input", "Type": "DataError", "DataErrorType": "LateInputEvent",
            "Message": "late", "BriefMessage": "late", "EventCount": 3,
            "FromTimestamp": "2024-03-05T10:00:03Z", "ToTimestamp": "2024-03-05T10:00:58Z",
        },
    }  # fmt: skip
    lines = [json.dumps(record)]
    for far in ("0001-01-01T00:00:00.0000000Z", "9999-12-31T23:59:59.9999999Z"):
        props = {**record["properties"], "FromTimestamp": far, "ToTimestamp": far}
        lines.append(json.dumps({**record, "time": far, "properties": props}))
    path = tmp_path / "PT1H.json"
    path.write_text("\n".join(lines) + "\n")
    tables = aggregate_files([path])
    quarantine = tables.quarantine
    assert quarantine["source_line"].to_list() == [2, 3]
    assert all("outside 1900-01-01 .. 2150-01-01" in r for r in quarantine["reason"])
    assert tables.error_rollup.height == 1  # one minute: the record in range


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.integers(EARLIEST // MINUTE, LATEST // MINUTE), min_size=0, max_size=30),
    st.integers(0, 90),
)
def test_minute_grid_holds_the_data_and_is_bounded(minutes: list[int], fill: int) -> None:
    data = np.array(minutes, dtype=np.int64) * MINUTE
    grid = minute_grid(data, fill=fill)
    assert set(np.unique(data).tolist()) <= set(grid.tolist())
    assert np.all(np.diff(grid) > 0)
    assert grid.size <= len(np.unique(data)) * (fill + 1)
    # no idle minute is left out of a gap of at most ``fill`` minutes
    for a, b in zip(np.unique(data)[:-1], np.unique(data)[1:], strict=True):
        if b // MINUTE - a // MINUTE - 1 <= fill:
            assert set(range(a, b, MINUTE)) <= set(grid.tolist())


def test_idle_notices_per_gap_are_bounded() -> None:
    arrival = np.array([0, 10**18], dtype=np.int64)  # about 31 years apart
    notices = idle_notices(arrival, np.array([0, 0]), 5 * MINUTE, [0, 1])
    per = notices_per_gap(5 * MINUTE)
    assert notices.height == 2 * per  # partition 0's gap and silent partition 1, one hour each
    assert set(notices["gap_end_ns"].to_list()) == {10**18}


def test_the_parser_spark_and_watch_run_quarantines_a_far_off_record() -> None:
    """``aggregate`` (Spark) and ``watch`` parse files with ``parse_file_fast`` in their
    tasks: the far-off record is quarantined there too, the others parsed."""
    import pyarrow as pa

    from diagnostics.logs.vectorised import parse_file_fast

    good = {
        "time": "2024-03-05T10:01:00Z",
        "resourceId": "/SUBSCRIPTIONS/0/RESOURCEGROUPS/RG/PROVIDERS/MICROSOFT.STREAMANALYTICS"
        "/STREAMINGJOBS/JOB",
        "level": "Information",
        "properties": {
            "Source": "input", "DataErrorType": "LateInputEvent", "EventCount": 3,
            "FromTimestamp": "2024-03-05T10:00:03Z", "ToTimestamp": "2024-03-05T10:00:58Z",
        },
    }  # fmt: skip
    far = {**good, "time": "9999-12-31T23:59:59Z"}
    data = "\n".join(json.dumps(r) for r in (good, far, good)).encode()
    table = pa.Table.from_batches(list(parse_file_fast(data, "PT1H.json")))
    reasons = table.column("reason").to_pylist()
    assert [r is None for r in reasons] == [True, False, True]
    assert "outside 1900-01-01 .. 2150-01-01" in reasons[1]


def test_far_runs_are_small_and_never_the_largest() -> None:
    assert far_runs([300, 1]).tolist() == [False, True]
    assert far_runs([1, 300, 200]).tolist() == [True, False, False]
    assert far_runs([300, 200]).tolist() == [False, False]
    assert far_runs([1]).tolist() == [False]
    assert far_runs([1, 1]).tolist() == [False, True]


def test_two_stretches_of_data_days_apart_are_not_far_off(tmp_path: Path) -> None:
    # 300 events on one day, 200 two days later: a quiet day, not an export error; a
    # single arrival in 2099 beside them still is
    rows = _rows()
    later = [[1000 + r[0], r[1], r[2], r[3].replace("01-01", "01-03"),
              r[4].replace("01-01", "01-03")] for r in rows[:200]]  # fmt: skip
    odd = [[2000, "dev-x", 0, "2024-01-03T00:00:00Z", "2099-06-01T00:00:00Z"]]
    path = write_csv(tmp_path / "two.csv", HEADER, [*rows, *later, *odd])
    code, out, err = run_cli("replay", str(path), "--out", str(tmp_path / "o"),
                             "--timestamp-by", "event_time")  # fmt: skip
    assert code == 0, err
    warned = [x for x in out.splitlines() if "warning:" in x]
    assert len(warned) == 1
    assert "row 501: '2099-06-01T00:00:00Z' is 75 years after the other arrivals" in warned[0]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.integers(-(10**12), 10**12).map(lambda ms: ms * 1_000_000)
        | st.sampled_from([0, FAR_GAP_NS, FAR_GAP_NS + 1, 2 * FAR_GAP_NS + 2, 10**17]),
        min_size=1,
        max_size=60,
    )
)
def test_each_value_is_judged_by_its_own_run(values: list[int]) -> None:
    """far_off_mask: a value is far off exactly when the run holding it (values apart by
    at most the gap, in sorted order) is, and low..high is the largest run's range."""
    array = np.asarray(values, dtype=np.int64)
    far, low, high = far_off_mask(array)
    ordered = sorted(values)
    runs: list[list[int]] = [[ordered[0]]]
    for value in ordered[1:]:
        if value - runs[-1][-1] > FAR_GAP_NS:
            runs.append([])
        runs[-1].append(value)
    flags = far_runs(np.asarray([len(r) for r in runs]))
    run_of = {v: i for i, r in enumerate(runs) for v in r}
    assert far.tolist() == [bool(flags[run_of[v]]) for v in values]
    largest = runs[int(np.argmax([len(r) for r in runs]))]
    if len(runs) > 1:
        assert (low, high) == (largest[0], largest[-1])
