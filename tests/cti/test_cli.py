"""``orderdoc cti``: the CTI replay end to end, its outputs, its one-line errors, the flags
it rejects and the deprecated ``orderdoc replay --cti-*`` alias."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from diagnostics.cli import main
from diagnostics.cti import suggest_cti_delay_from_outcomes, suggest_from_records
from diagnostics.logs.aggregate import parse_files

BASE = "2024-01-01T00:00:"


def ts(seconds: float) -> str:
    return f"{BASE}{seconds:09.6f}Z"


def write_csv(path: Path, header: str, rows: list[str]) -> Path:
    path.write_text("\n".join([header, *rows]) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def ten_and_five(tmp_path: Path) -> Path:
    """The N=10 / 5 s scenario of test_golden: 0..9 s, 4.5 s and 3.5 s late, then 10..17 s."""
    rows = [f"{i},{ts(i)},{ts(i)}" for i in range(10)]
    rows += [f"10,{ts(4.5)},{ts(10)}", f"11,{ts(3.5)},{ts(10.5)}"]
    rows += [f"{12 + k},{ts(10 + k)},{ts(11 + k)}" for k in range(8)]
    return write_csv(tmp_path / "events.csv", "id,start_time,arrival_time", rows)


def replay(tmp_path: Path, *args: str) -> tuple[int, Path]:
    out = tmp_path / "out"
    code = main(["cti", *args, "--out", str(out)])
    return code, out


def test_every_ten_with_five_seconds_delay(tmp_path: Path, ten_and_five: Path) -> None:
    code, out = replay(
        tmp_path, str(ten_and_five), "--cti-every", "10", "--cti-delay", "5s", "--cti-flush"
    )
    assert code == 0
    outcomes = pl.read_parquet(out / "outcomes.parquet")
    assert outcomes["id"].to_list() == list(range(20))  # input columns kept, input order
    assert outcomes["event_id"].to_list() == list(range(20))
    assert outcomes.schema["release_time"] == pl.Datetime("ns", "UTC")
    assert outcomes.filter(pl.col("violation"))["id"].to_list() == [11]
    first = outcomes.filter(pl.col("id") < 4)
    assert first["committing_cti"].dt.strftime("%S").to_list() == ["04"] * 4
    assert first["release_time"].dt.strftime("%S").to_list() == ["09"] * 4
    assert outcomes.filter(pl.col("id") >= 14)["committed_at_infinity"].all()
    ctis = pl.read_parquet(out / "ctis.parquet").filter(pl.col("stream") == "output")
    assert ctis["cti"].dt.strftime("%S").to_list()[:2] == ["04", "12"]
    assert ctis["infinite"].to_list() == [False, False, True]
    metrics = pl.read_parquet(out / "metrics.parquet").filter(pl.col("partition_id").is_null())
    assert metrics["InputEvents"].sum() == 20
    assert metrics["DroppedOrAdjustedEvents"].sum() == 1
    # CTI 4 s from τ = 9 s, CTI 12 s from τ = 18 s (close 18 s): sup τ − CTI = 18 − 4 = 14 s
    assert metrics["OutputWatermarkDelaySeconds"].to_list() == [14.0]
    summary = json.loads((out / "cti_summary.json").read_text())
    assert summary["suggested_cti_delay_ns"] == 5_500_000_000
    assert suggest_cti_delay_from_outcomes(outcomes, 5_000_000_000) == 5_500_000_000


def test_violation_records_are_read_by_the_log_readers(tmp_path: Path, ten_and_five: Path) -> None:
    code, out = replay(tmp_path, str(ten_and_five), "--cti-every", "10", "--cti-delay", "5s")
    assert code == 0
    lines = (out / "diagnostics.jsonl").read_text().splitlines()
    records = [json.loads(line) for line in lines]
    assert [r["properties"]["DataErrorType"] for r in records] == ["CtiViolation"]
    assert records[0]["properties"]["EventCount"] == 1
    assert suggest_from_records(records) == 5_500_000_000
    parsed = parse_files([str(out / "diagnostics.jsonl")])
    assert parsed["kind"].to_list() == ["CtiViolation"]
    assert parsed["event_count"].to_list() == [1]
    assert parsed["example_application_time"].dt.strftime("%S%.3f").to_list() == ["03.500"]


def test_minus_one_tick_commits_each_point_at_its_own_arrival(tmp_path: Path) -> None:
    rows = [f"{i},{ts(i)},{ts(i)}" for i in range(1, 4)]
    events = write_csv(tmp_path / "p.csv", "id,start_time,arrival_time", rows)
    code, out = replay(tmp_path, str(events), "--cti-every", "1", "--cti-delay", "-1tick")
    assert code == 0
    outcomes = pl.read_parquet(out / "outcomes.parquet")
    assert (outcomes["release_time"] == outcomes["arrival"]).all()
    delta = outcomes["committing_cti"].dt.epoch("ns") - outcomes["application_time"].dt.epoch("ns")
    assert delta.to_list() == [100, 100, 100]


def test_intervals_adjust_and_drop(tmp_path: Path) -> None:
    rows = [
        f"a,{ts(10)},{ts(20)},{ts(10)}",
        f"b,{ts(5)},{ts(15)},{ts(11)}",  # overlaps the 10 s CTI: adjusted to 10 s
        f"c,{ts(2)},{ts(8)},{ts(12)}",  # entirely before it: dropped
    ]
    events = write_csv(tmp_path / "i.csv", "name,begin,finish,arrival_time", rows)
    code, out = replay(
        tmp_path, str(events), "--cti-every", "1", "--start-col", "begin", "--end-col", "finish"
    )
    assert code == 0
    outcomes = pl.read_parquet(out / "outcomes.parquet")
    assert outcomes["status"].to_list() == ["accepted", "adjusted", "dropped"]
    assert outcomes["shape"].to_list() == ["interval"] * 3
    assert outcomes["system_timestamp"].dt.strftime("%S").to_list() == ["10", "10", None]


def test_end_edges_via_the_edge_column(tmp_path: Path) -> None:
    rows = [f"start,{ts(0)},,{ts(0)}", f"end,{ts(0)},{ts(1)},{ts(1)}", f"start,{ts(2)},,{ts(2)}"]
    events = write_csv(tmp_path / "e.csv", "edge,start_time,end_time,arrival_time", rows)
    code, out = replay(
        tmp_path, str(events), "--cti-every", "2", "--end-col", "end_time", "--edge-col", "edge"
    )
    assert code == 0
    ctis = pl.read_parquet(out / "ctis.parquet").filter(pl.col("stream") == "output")
    assert ctis["after_event_id"].to_list() == [2]


def test_join_releases_only_up_to_the_older_cti(tmp_path: Path) -> None:
    left = write_csv(
        tmp_path / "slow.csv",
        "k,start_time,arrival_time",
        [f"L0,{ts(0)},{ts(0)}", f"L1,{ts(15)},{ts(4)}"],
    )
    right = write_csv(
        tmp_path / "fast.csv",
        "k,start_time,arrival_time",
        [f"R0,{ts(0)},{ts(1)}", f"R1,{ts(10)},{ts(2)}", f"R2,{ts(20)},{ts(3)}"],
    )
    code, out = replay(tmp_path, str(left), "--cti-join", str(right), "--cti-every", "1")
    assert code == 0
    fast = pl.read_parquet(out / "outcomes_right.parquet")
    assert fast["release_time"].dt.strftime("%S").to_list() == ["04", "04", None]
    ctis = pl.read_parquet(out / "ctis.parquet").filter(pl.col("stream") == "output")
    assert ctis["cti"].dt.strftime("%S").to_list() == ["00", "15"]
    # importing the fast input's CTIs lets the join keep up with it
    code, out = replay(
        tmp_path, str(left), "--cti-join", str(right), "--cti-every", "1", "--cti-import", "other"
    )
    assert code == 0
    fast = pl.read_parquet(out / "outcomes_right.parquet")
    assert fast["release_time"].dt.strftime("%S").to_list() == ["02", "03", None]
    slow = pl.read_parquet(out / "outcomes.parquet")
    assert slow["violation"].to_list() == [False, True]  # L1 (15 s) is behind the imported 20 s


def test_import_from_a_ctis_table(tmp_path: Path) -> None:
    fast = write_csv(
        tmp_path / "fast.csv",
        "start_time,arrival_time",
        [f"{ts(0)},{ts(1)}", f"{ts(10)},{ts(2)}", f"{ts(20)},{ts(3)}"],
    )
    code, fast_out = replay(tmp_path, str(fast), "--cti-every", "1")
    assert code == 0
    slow = write_csv(
        tmp_path / "slow.csv",
        "start_time,arrival_time",
        [f"{ts(5)},{ts(2.5)}", f"{ts(30)},{ts(4)}"],
    )
    out = tmp_path / "slow_out"
    args = ["cti", str(slow), "--cti-import", str(fast_out / "ctis.parquet"), "--out", str(out)]
    assert main(args) == 0
    outcomes = pl.read_parquet(out / "outcomes.parquet")
    # 5 s arrives at 2.5 s after the imported 10 s CTI (issued at 2 s): a point before it
    assert outcomes["status"].to_list() == ["dropped", "accepted"]
    assert outcomes["latest_cti_origin"].to_list() == ["imported", "imported"]


def test_batch_size_does_not_change_the_outputs(tmp_path: Path, ten_and_five: Path) -> None:
    flags = [str(ten_and_five), "--cti-every", "3", "--cti-delay", "1s", "--cti-flush"]
    assert main(["cti", *flags, "--out", str(tmp_path / "a")]) == 0
    assert main(["cti", *flags, "--batch-size", "1", "--out", str(tmp_path / "b")]) == 0
    for name in ("outcomes.parquet", "ctis.parquet"):
        assert pl.read_parquet(tmp_path / "a" / name).equals(pl.read_parquet(tmp_path / "b" / name))


@pytest.mark.parametrize(
    ("flags", "fragment"),
    [
        (["--cti-every", "10", "--cti-delay", "-1s"], "below -1 tick"),
        (["--cti-every", "0"], "not a positive number of events"),
        (["--cti-every", "-5s"], "not a positive duration"),
        (["--cti-every", "10", "--start-col", "nope"], "start column 'nope' is missing"),
        (["--cti-every", "1", "--cti-import", "other"], "needs a second input"),
        (["--cti-every", "1", "--cti-window", "5s/10s"], "longer than its size"),
        (["--cti-every", "1", "--cti-delay", "soon"], "--cti-delay 'soon'"),
    ],
)
def test_bad_flags_fail_on_one_line(
    tmp_path: Path,
    ten_and_five: Path,
    capsys: pytest.CaptureFixture[str],
    flags: list[str],
    fragment: str,
) -> None:
    code, _ = replay(tmp_path, str(ten_and_five), *flags)
    err = capsys.readouterr().err
    assert code == 2
    assert fragment in err
    assert len(err.strip().splitlines()) == 1


def test_unparsable_starts_are_outcomes_and_diagnostics(tmp_path: Path) -> None:
    rows = [f"a,{ts(1)},{ts(1)}", f"b,not-a-time,{ts(2)}", f"c,{ts(3)},{ts(3)}"]
    events = write_csv(tmp_path / "bad.csv", "k,start_time,arrival_time", rows)
    code, out = replay(tmp_path, str(events), "--cti-every", "1")
    assert code == 0
    outcomes = pl.read_parquet(out / "outcomes.parquet")
    assert outcomes["invalid_timestamp"].to_list() == [False, True, False]
    assert outcomes["status"].to_list() == ["accepted", "dropped", "accepted"]
    kinds = [
        json.loads(line)["properties"]["DataErrorType"]
        for line in (out / "diagnostics.jsonl").read_text().splitlines()
    ]
    assert kinds == ["InvalidInputTimeStamp"]


def test_a_bad_arrival_time_names_file_column_and_row(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    events = write_csv(tmp_path / "arr.csv", "start_time,arrival_time", [f"{ts(1)},later"])
    code, _ = replay(tmp_path, str(events), "--cti-every", "1")
    err = capsys.readouterr().err
    assert code == 2
    assert "arr.csv" in err
    assert "arrival column 'arrival_time', row 1: 'later'" in err


def test_union_through_a_tumbling_window(tmp_path: Path) -> None:
    left = write_csv(
        tmp_path / "l.csv", "start_time,arrival_time", [f"{ts(3)},{ts(3)}", f"{ts(12)},{ts(12)}"]
    )
    right = write_csv(
        tmp_path / "r.csv", "start_time,arrival_time", [f"{ts(7)},{ts(7)}", f"{ts(25)},{ts(25)}"]
    )
    code, out = replay(
        tmp_path, str(left), "--cti-union", str(right), "--cti-every", "1", "--cti-window", "10s"
    )
    assert code == 0
    # inputs' CTIs: left 3, 12; right 7, 25 -> min 3 (at 7 s), 7 (at 12 s), 12 (at 25 s),
    # held back to window starts 0, 0, 10: output CTIs 0 s then 10 s
    ctis = pl.read_parquet(out / "ctis.parquet").filter(pl.col("stream") == "output")
    assert ctis["cti"].dt.strftime("%S").to_list() == ["00", "10"]
    assert ctis["origin"].to_list() == ["operator", "operator"]
    released = pl.read_parquet(out / "outcomes.parquet")["release_time"].dt.strftime("%S")
    assert released.to_list() == ["25", None]
    right_released = pl.read_parquet(out / "outcomes_right.parquet")["release_time"]
    assert right_released.dt.strftime("%S").to_list() == ["25", None]


def test_negative_values_are_values_not_flags(tmp_path: Path, ten_and_five: Path) -> None:
    for n, delay in enumerate((["--cti-delay", "-100ns"], ["--cti-delay=-1tick"])):
        out = tmp_path / f"neg{n}"
        assert main(["cti", str(ten_and_five), "--cti-every", "1", *delay, "--out", str(out)]) == 0
        assert "delay -100ns" in json.loads((out / "cti_summary.json").read_text())["policy"]


def test_the_replay_alias_writes_what_cti_writes(
    tmp_path: Path, ten_and_five: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    flags = [str(ten_and_five), "--cti-every", "10", "--cti-delay", "5s", "--cti-flush"]
    assert main(["cti", *flags, "--out", str(tmp_path / "cti")]) == 0
    printed = capsys.readouterr()
    # --timestamp-by names the start column, as it did in 'replay --cti-every'
    alias = [*flags, "--timestamp-by", "start_time", "--out", str(tmp_path / "alias")]
    assert main(["replay", *alias]) == 0
    aliased = capsys.readouterr()
    assert "deprecated; use 'orderdoc cti'" in aliased.err
    assert aliased.out == printed.out.replace(str(tmp_path / "cti"), str(tmp_path / "alias"))
    for name in ("outcomes.parquet", "ctis.parquet", "metrics.parquet"):
        assert pl.read_parquet(tmp_path / "cti" / name).equals(
            pl.read_parquet(tmp_path / "alias" / name)
        )
    for name in ("diagnostics.jsonl", "cti_summary.json"):
        assert (tmp_path / "cti" / name).read_text() == (tmp_path / "alias" / name).read_text()


ASA_ONLY = [
    ["--late-arrival", "10s"],
    ["--out-of-order", "1s"],
    ["--action", "drop"],
    ["--partition-by"],
    ["--partitions", "4"],
    ["--over", "id"],
    ["--partition-col", "id"],
    ["--capture-path-format", "{PartitionId}"],
    ["--idle-notice", "1m"],
    ["--no-early-policy"],
    ["--outcomes-only"],
]


@pytest.mark.parametrize("command", ["cti", "replay"])
@pytest.mark.parametrize("flag", ASA_ONLY, ids=lambda f: f[0])
def test_asa_flags_are_rejected_in_cti_mode(
    tmp_path: Path,
    ten_and_five: Path,
    capsys: pytest.CaptureFixture[str],
    command: str,
    flag: list[str],
) -> None:
    argv = [command, str(ten_and_five), "--cti-every", "1", *flag, "--out", str(tmp_path / "o")]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        f"orderdoc {command}: error: {flag[0]}: ASA replay settings, not used by a CTI "
        "replay; remove them (docs/cti.md)"
    ]
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize(
    "flag",
    [
        ["--cti-delay", "5s"],
        ["--cti-policy", "drop"],
        ["--cti-flush"],
        ["--cti-join", "x.csv"],
        ["--cti-union", "x.csv"],
        ["--cti-window", "1m"],
        ["--start-col", "start_time"],
        ["--end-col", "end_time"],
        ["--edge-col", "edge"],
    ],
    ids=lambda f: f[0],
)
def test_cti_flags_are_rejected_in_an_asa_replay(
    tmp_path: Path, ten_and_five: Path, capsys: pytest.CaptureFixture[str], flag: list[str]
) -> None:
    argv = ["replay", str(ten_and_five), *flag, "--out", str(tmp_path / "o")]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        f"orderdoc replay: error: {flag[0]}: CTI settings, no meaning for an ASA replay; "
        "use 'orderdoc cti' (docs/cti.md)"
    ]
    assert not (tmp_path / "o").exists()


def test_cti_needs_a_frequency_or_an_import(
    tmp_path: Path, ten_and_five: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["cti", str(ten_and_five), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        "orderdoc cti: error: --cti-every or --cti-import is required: a CTI replay generates "
        "or imports CTIs"
    ]


def test_start_col_and_timestamp_by_exclude_each_other(
    tmp_path: Path, ten_and_five: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["cti", str(ten_and_five), "--cti-every", "1", "--start-col", "a"]
    with pytest.raises(SystemExit) as stop:
        main([*argv, "--timestamp-by", "b", "--out", str(tmp_path / "o")])
    assert stop.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert "--timestamp-by: not allowed with argument --start-col" in err[0]


def test_errors_through_the_alias_say_the_command_typed(
    tmp_path: Path, ten_and_five: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [str(ten_and_five), "--cti-import", "other", "--out", str(tmp_path / "o")]
    assert main(["replay", *argv]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[-1] == (
        "orderdoc replay: error: --cti-import other: needs a second input (--cti-join or "
        "--cti-union)"
    )
    assert main(["cti", *argv]) == 2
    assert capsys.readouterr().err.splitlines() == [
        "orderdoc cti: error: --cti-import other: needs a second input (--cti-join or --cti-union)"
    ]
    bad = [str(ten_and_five), "--cti-every", "2", "--cti-policy", "bogus", "--out", "o"]
    with pytest.raises(SystemExit) as exited:
        main(["replay", *bad])
    assert exited.value.code == 2
    assert (
        capsys.readouterr()
        .err.splitlines()[-1]
        .startswith("orderdoc replay: error: argument --cti-policy: invalid choice: 'bogus'")
    )


def test_the_suggested_delay_names_the_setting_and_the_command_its_flag(
    tmp_path: Path, ten_and_five: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from diagnostics.cti.outputs import format_summary

    code, out = replay(tmp_path, str(ten_and_five), "--cti-every", "10", "--cti-delay", "5s")
    assert code == 0
    line = "a CTI delay of 5s500ms would have avoided the violations of generated CTIs"
    assert f"{line} (use --cti-delay)\n" in capsys.readouterr().out
    summary = json.loads((out / "cti_summary.json").read_text())
    assert format_summary(summary).splitlines()[-1] == line  # the library: no flag


def test_the_summary_counts_in_the_singular_and_the_plural(
    tmp_path: Path, ten_and_five: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _ = replay(tmp_path, str(ten_and_five), "--cti-every", "10", "--cti-delay", "5s")
    assert code == 0
    printed = capsys.readouterr().out
    assert "input: 20 events, 1 CTI violation (1 dropped, 0 adjusted)," in printed
    assert printed.splitlines()[1].endswith(", 2 CTIs")
    one = write_csv(tmp_path / "one.csv", "id,start_time,arrival_time", [f"0,{ts(0)},{ts(0)}"])
    code, _ = replay(tmp_path, str(one), "--cti-every", "1")
    assert code == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "CTI replay: CTI after every event, delay 0s, adjust"
    assert lines[1].startswith("input: 1 event, 0 CTI violations (0 dropped, 0 adjusted),")
    assert lines[1].endswith(", 1 CTI")


def wrote_line(out: Path, printed: str) -> list[str]:
    """The files the last output line names, after checking it names ``out``."""
    last = printed.strip().splitlines()[-1]
    assert last.startswith(f"wrote {out}/")
    return last.removeprefix(f"wrote {out}/").split(", ")


def test_the_wrote_line_names_every_file_written_and_only_those(
    tmp_path: Path, ten_and_five: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = replay(tmp_path, str(ten_and_five), "--cti-every", "10")
    assert code == 0
    named = wrote_line(out, capsys.readouterr().out)
    assert {"metrics.parquet", "cti_summary.json"} <= set(named)
    assert sorted(named) == sorted(p.name for p in out.iterdir())
    # two inputs: the right one's outcomes too
    left = write_csv(tmp_path / "l.csv", "k,start_time,arrival_time", [f"L0,{ts(0)},{ts(0)}"])
    right = write_csv(tmp_path / "r.csv", "k,start_time,arrival_time", [f"R0,{ts(1)},{ts(1)}"])
    joined = tmp_path / "joined"
    assert main(["cti", str(left), "--cti-join", str(right), "--cti-every", "1",
                 "--out", str(joined)]) == 0  # fmt: skip
    named = wrote_line(joined, capsys.readouterr().out)
    assert "outcomes_right.parquet" in named
    assert sorted(named) == sorted(p.name for p in joined.iterdir())
    # no arrival times: no metrics
    starts = write_csv(tmp_path / "s.csv", "k,start_time", [f"S0,{ts(0)}", f"S1,{ts(15)}"])
    alone = tmp_path / "alone"
    assert main(["cti", str(starts), "--cti-every", "1", "--out", str(alone)]) == 0
    named = wrote_line(alone, capsys.readouterr().out)
    assert "metrics.parquet" not in named
    assert sorted(named) == sorted(p.name for p in alone.iterdir())
