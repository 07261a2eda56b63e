"""``orderdoc replay`` end to end: outputs, summary, and one-line errors with exit code 2."""

from __future__ import annotations

import gzip
import json
import socket
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from diagnostics.cli import main

ROWS = [
    # ts, arrival_time, device, partition_id
    ("2024-01-01T12:07:00Z", "2024-01-01T12:07:00Z", "d1", 0),
    ("2024-01-01T12:17:00Z", "2024-01-01T12:11:00Z", "d1", 0),
    ("2024-01-01T12:08:00+00:00", "2024-01-01T12:13:00Z", "d3", 1),
    ("not a time", "2024-01-01 12:14:00", "d3", 1),
    ("2024-01-01T11:00:00Z", "2024-01-01T12:15:00Z", "d2", 0),
]


def write_capture(path: Path, rows=ROWS) -> Path:
    frame = pl.DataFrame(
        rows, schema=["ts", "arrival_time", "device", "partition_id"], orient="row"
    )
    if path.suffix == ".csv":
        frame.write_csv(path)
    elif path.name.endswith(".jsonl.gz"):
        path.write_bytes(gzip.compress(frame.write_ndjson().encode()))
    elif path.suffix == ".jsonl":
        frame.write_ndjson(path)
    else:
        frame.write_parquet(path)
    return path


@pytest.mark.parametrize("name", ["cap.csv", "cap.jsonl", "cap.jsonl.gz", "cap.parquet"])
def test_replay_writes_outcomes_in_input_order(tmp_path, capsys, name):
    events = write_capture(tmp_path / name)
    code = main(["replay", str(events), "--out", str(tmp_path / "out"), "--timestamp-by", "ts"])
    assert code == 0
    out = pl.read_parquet(tmp_path / "out" / "outcomes.parquet")
    assert out["device"].to_list() == [r[2] for r in ROWS]
    assert out["event_id"].to_list() == [0, 1, 2, 3, 4]
    assert out["early"].to_list() == [False, True, False, False, False]
    assert out["invalid_timestamp"].to_list() == [False, False, False, True, False]
    assert out["late"].to_list() == [False, False, True, False, True]
    assert out["dropped"].to_list() == [False, True, False, True, False]
    assert out["system_timestamp"].dtype == pl.Datetime("ns", "UTC")
    text = capsys.readouterr().out
    assert "events      5" in text
    assert "early 1" in text
    assert "invalid timestamp 1" in text


def test_replay_json_summary(tmp_path, capsys):
    events = write_capture(tmp_path / "cap.csv")
    args = ["replay", str(events), "--out", str(tmp_path / "o"), "--timestamp-by", "ts"]
    assert main([*args, "--late-arrival", "unlimited", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["counts"]["events"] == 5
    assert summary["counts"]["adjusted_late"] == 0
    assert summary["late_arrival"] == "unlimited"
    assert summary["partitions"] == [0, 1]


def test_declared_partition_that_never_sent_data_delays_release(tmp_path, capsys):
    rows = [("2024-01-01T00:00:00Z", "2024-01-01T00:00:00Z", "d1", 0)]
    events = write_capture(tmp_path / "one.csv", rows)
    base = ["replay", str(events), "--timestamp-by", "ts", "--late-arrival", "0s"]
    assert main([*base, "--out", str(tmp_path / "a")]) == 0
    assert main([*base, "--out", str(tmp_path / "b"), "--partitions", "2"]) == 0
    alone = pl.read_parquet(tmp_path / "a" / "outcomes.parquet")["release_time"][0]
    merged = pl.read_parquet(tmp_path / "b" / "outcomes.parquet")["release_time"][0]
    # an idle declared partition holds the merge back by the 5 s arrival estimate
    assert (merged - alone).total_seconds() == 5


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        (["--late-arrival", "5 parsecs"], "argument --late-arrival: '5 parsecs' is not a duration"),
        (["--out-of-order=-3s"], "argument --out-of-order: '-3s' is negative"),
        (["--late-arrival", "-5s"], "argument --late-arrival: '-5s' is negative"),
        (
            ["--separator", "|"],
            "the header reads as one column: if the file uses another separator, name it with "
            "--separator",
        ),
        (["--late-arrival", "21d"], "late-arrival tolerance 21d is out of range"),
        (["--arrival-col", "enqueued"], "arrival column 'enqueued' is missing"),
        (
            ["--over", "device"],
            "partitions needs PARTITION BY PartitionId, as ASA requires (use --partition-by)",
        ),
        (["--timestamp-by", "nope"], "TIMESTAMP BY column 'nope' is missing"),
        (["--partitions", "1"], "partition 1 is not among the declared partitions 0..0"),
        (
            ["--partitions", "100000000"],
            "partition count 100000000: at most 4,096 (more than an Event Hub or IoT Hub can "
            "have) (use --partitions)",
        ),
        (["--action", "ignore"], "argument --action: 'ignore' is not an action: adjust or drop"),
    ],
)
def test_bad_flags_give_one_line_and_exit_2(tmp_path, capsys, extra, needle):
    events = write_capture(tmp_path / "cap.csv")
    args = ["replay", str(events), "--out", str(tmp_path / "o")]
    if "--timestamp-by" not in extra:
        args += ["--timestamp-by", "ts"]
    with pytest.raises(SystemExit) as exited:
        raise SystemExit(main([*args, *extra]))
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert needle in err
    assert len(err.strip().splitlines()) == 1
    assert "Traceback" not in err


@pytest.mark.parametrize("tolerance", ["20d", "1814399s", "20d23h59m59s"])
def test_tolerances_up_to_asas_largest_run(tmp_path, capsys, tolerance):
    """ASA's range of both tolerances ends at 1814399 s, 20 days 23:59:59 (as --help says)."""
    events = write_capture(tmp_path / "cap.csv")
    args = ["replay", str(events), "--out", str(tmp_path / "o"), "--timestamp-by", "ts"]
    assert main([*args, "--late-arrival", tolerance, "--out-of-order", tolerance]) == 0
    assert "error" not in capsys.readouterr().err


def test_unparsable_arrival_names_the_row(tmp_path, capsys):
    rows = [*ROWS[:2], ("2024-01-01T12:00:00Z", "yesterday", "d1", 0)]
    events = write_capture(tmp_path / "cap.csv", rows)
    assert main(["replay", str(events), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "arrival column 'arrival_time', row 3: 'yesterday' is not a timestamp" in err


def test_malformed_json_line_is_named(tmp_path, capsys):
    path = tmp_path / "cap.jsonl"
    path.write_text('{"arrival_time": "2024-01-01T00:00:00Z"}\n{"arrival_time": \n')
    assert main(["replay", str(path), "--out", str(tmp_path / "o")]) == 2
    assert (
        "cap.jsonl, line 2, column 18: not valid JSON (Expecting value)" in capsys.readouterr().err
    )


def test_missing_file_and_unknown_type(tmp_path, capsys):
    assert main(["replay", str(tmp_path / "nope.csv"), "--out", str(tmp_path / "o")]) == 2
    assert "no such file" in capsys.readouterr().err
    odd = tmp_path / "cap.xlsx"
    odd.write_text("x")
    assert main(["replay", str(odd), "--out", str(tmp_path / "o")]) == 2
    assert "unknown file type '.xlsx'" in capsys.readouterr().err


def test_python_dash_m_and_console_script(tmp_path):
    events = write_capture(tmp_path / "cap.csv")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "diagnostics",
            "replay",
            str(events),
            "--out",
            str(tmp_path / "o"),
            "--late-arrival",
            "5 parsecs",
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(
    "flags",
    [
        ["--job", "x"],
        ["--error-window", "5m"],
        ["--log-format", "activity"],
        ["--idle-notice", "1m", "--source", "eh"],
    ],
    ids=lambda f: f[0],
)
def test_outcomes_only_rejects_diagnostics_flags(tmp_path, capsys, flags):
    events = write_capture(tmp_path / "cap.csv")
    argv = ["replay", str(events), "--out", str(tmp_path / "o"), "--timestamp-by", "ts"]
    assert main([*argv, "--outcomes-only", *flags]) == 2
    given = ", ".join(f for f in flags if f.startswith("--"))
    assert capsys.readouterr().err.splitlines() == [
        f"orderdoc replay: error: {given}: shape diagnostics.jsonl and metrics.parquet, which "
        "--outcomes-only does not write; remove them or --outcomes-only"
    ]
    assert not (tmp_path / "o").exists()
    assert main([*argv, *flags]) == 0  # without --outcomes-only they shape the diagnostics
    assert (tmp_path / "o" / "diagnostics.jsonl").is_file()


def test_diagnostics_flags_keep_their_defaults(tmp_path, capsys):
    events = write_capture(tmp_path / "cap.csv")
    argv = ["replay", str(events), "--out", str(tmp_path / "o"), "--timestamp-by", "ts"]
    assert main(argv) == 0
    record = json.loads((tmp_path / "o" / "diagnostics.jsonl").read_text().splitlines()[0])
    assert record["resourceId"].endswith("/STREAMINGJOBS/orderdoc-replay")
    assert record["properties"]["Source"] == "input"


@pytest.mark.parametrize(
    "flags",
    [
        ["--late-arrival", "10s"],
        ["--out-of-order", "1s"],
        ["--action", "drop"],
        ["--no-early-policy"],
        ["--late-arrival", "10s", "--action", "drop"],
    ],
    ids=lambda f: "+".join(x for x in f if x.startswith("--")),
)
def test_tolerances_on_arrival_time_are_an_error(tmp_path, capsys, flags):
    events = write_capture(tmp_path / "cap.csv")
    assert main(["replay", str(events), "--out", str(tmp_path / "o"), *flags]) == 2
    given = ", ".join(f for f in flags if f.startswith("--"))
    assert capsys.readouterr().err.splitlines() == [
        f"orderdoc replay: error: {given}: without --timestamp-by the replay runs on arrival "
        "time, where no tolerance or early-arrival rule applies; give --timestamp-by COL or "
        "remove them"
    ]
    assert not (tmp_path / "o").exists()
    # arrival time itself, and PARTITION BY on it, still replay
    assert main(["replay", str(events), "--out", str(tmp_path / "a"), "--partition-by"]) == 0


def test_outcomes_that_cannot_be_written_leave_no_partial_file(tmp_path, capsys):
    """A failed write of outcomes.parquet is one line naming the file, exit 2, and leaves
    neither a partial outcomes.parquet nor its temporary file behind."""
    events = write_capture(tmp_path / "cap.csv")
    out = tmp_path / "o"
    (out / "outcomes.parquet").mkdir(parents=True)  # the rename onto it must fail
    code = main(["replay", str(events), "--out", str(out), "--timestamp-by", "ts"])
    err = capsys.readouterr().err
    assert code == 2
    assert "outcomes.parquet could not be written" in err
    assert len(err.strip().splitlines()) == 1
    assert "Traceback" not in err
    assert (out / "outcomes.parquet").is_dir()
    assert not list(out.glob(".outcomes.parquet*"))


def test_replay_rewrites_outcomes_whole(tmp_path, capsys):
    """A second replay into the same folder replaces outcomes.parquet with the new run's."""
    events = write_capture(tmp_path / "cap.csv")
    out = tmp_path / "o"
    assert main(["replay", str(events), "--out", str(out), "--timestamp-by", "ts"]) == 0
    fewer = write_capture(tmp_path / "fewer.csv", ROWS[:2])
    assert main(["replay", str(fewer), "--out", str(out), "--timestamp-by", "ts"]) == 0
    capsys.readouterr()
    assert pl.read_parquet(out / "outcomes.parquet").height == 2
    assert not list(out.glob(".outcomes.parquet*"))


def test_spark_flags_need_each_other(tmp_path, capsys):
    events = write_capture(tmp_path / "cap.parquet")
    args = ["replay", str(events), "--out", str(tmp_path / "out"), "--timestamp-by", "ts"]
    assert main([*args, "--master", "local[2]"]) == 2
    assert "--master: Spark settings, which only --spark uses" in capsys.readouterr().err
    assert main([*args, "--conf", "a=b"]) == 2
    assert "--conf: Spark settings" in capsys.readouterr().err
    assert main([*args, "--remote", "sc://127.0.0.1:1"]) == 2
    assert "--remote: Spark settings, which only --spark uses" in capsys.readouterr().err
    with pytest.raises(SystemExit) as both:
        main([*args, "--spark", "--master", "local[1]", "--remote", "sc://127.0.0.1:1"])
    assert both.value.code == 2
    assert "not allowed with argument --master" in capsys.readouterr().err


@pytest.mark.parametrize("command", ["whatif", "replay"])
def test_spark_settings_without_spark_are_one_line(command, tmp_path, capsys):
    flags = ["--out", str(tmp_path / "o")] if command == "replay" else []
    code = main([command, "x.csv", "--timestamp-by", "t", *flags, "--master", "local[2]"])
    assert code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "--master: Spark settings, which only --spark uses; add --spark" in err


@pytest.mark.parametrize(
    ("remote", "says"),
    [
        ("http://127.0.0.1:1", "'http://127.0.0.1:1' is not of the form sc://host:port"),
        ("sc://127.0.0.1:{port}", "Spark Connect server 'sc://127.0.0.1:{port}' cannot be reached"),
    ],
)
def test_spark_remote_refused_in_one_line_before_writing(tmp_path, capsys, remote, says):
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    events = write_capture(tmp_path / "cap.parquet")
    args = ["replay", str(events), "--out", str(tmp_path / "out"), "--timestamp-by", "ts"]
    code = main([*args, "--outcomes-only", "--spark", "--remote", remote.format(port=port)])
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert err.count("\n") == 0
    assert says.format(port=port) in err
    assert not (tmp_path / "out").exists()


def test_spark_with_other_rules_is_one_line(capsys):
    code = main(["whatif", "x.csv", "--timestamp-by", "t", "--rules", "flink", "--spark"])
    assert code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "--spark runs ASA's rules; --rules flink runs here: remove --spark or --rules" in err
