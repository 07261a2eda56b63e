"""Library errors name settings; the command line adds the flag of the command that has it."""

from __future__ import annotations

import argparse

import pytest

from diagnostics.cli import main
from diagnostics.cli.flags import FLAGS, message
from diagnostics.engine.replay import declared_partitions
from diagnostics.errors import InputError, PolicyError, Setting, UsageError
from diagnostics.spark.session import SparkTarget


def test_every_setting_has_its_flag() -> None:
    assert set(FLAGS) == set(Setting)
    assert all(flag.startswith("--") for flag in FLAGS.values())


def test_a_library_error_names_the_setting_not_the_flag() -> None:
    with pytest.raises(InputError) as caught:
        declared_partitions(0)
    assert str(caught.value) == "partition count 0: an input has at least one partition"
    assert caught.value.setting is Setting.PARTITIONS
    with pytest.raises(UsageError) as remote:
        SparkTarget(remote="http://h:1")
    assert "--" not in str(remote.value)
    assert remote.value.setting is Setting.SPARK_REMOTE


def test_the_flag_is_added_only_where_the_command_has_it() -> None:
    error = PolicyError("late-arrival tolerance 21d is out of range", Setting.LATE_ARRIVAL)
    replay_args = argparse.Namespace(late_arrival=None, out="x")
    assert message(error, replay_args) == f"{error} (use --late-arrival)"
    assert message(error, argparse.Namespace(out="x")) == str(error)  # e.g. orderdoc demo
    assert message(error) == f"{error} (use --late-arrival)"
    assert message(InputError("no such file")) == "no such file"


def _wrapped() -> None:
    try:
        declared_partitions(0)
    except InputError as exc:
        msg = f"cap.csv: {exc}"
        raise InputError(msg) from exc


def test_a_wrapped_error_keeps_its_setting() -> None:
    with pytest.raises(InputError) as caught:
        _wrapped()
    assert caught.value.setting is None
    assert message(caught.value, argparse.Namespace(partitions=0)) == (
        "cap.csv: partition count 0: an input has at least one partition (use --partitions)"
    )


def test_generate_maps_the_setting_to_its_flag(tmp_path, capsys) -> None:
    out = tmp_path / "c.csv"
    assert main(["generate", "idle_partition", "--out", str(out), "--partitions", "1"]) == 2
    err = capsys.readouterr().err
    assert err == (
        "orderdoc generate: error: partition count 1: scenario idle_partition needs at least 2 "
        "(use --partitions)\n"
    )


def test_cti_end_edge_without_end_column_names_the_flag(tmp_path, capsys) -> None:
    rows = [
        "start,2024-01-01T00:00:00Z,2024-01-01T00:00:00Z",
        "end,2024-01-01T00:00:00Z,2024-01-01T00:00:01Z",
    ]
    events = tmp_path / "e.csv"
    events.write_text("edge,start_time,arrival_time\n" + "\n".join(rows) + "\n", encoding="utf-8")
    argv = [
        "cti",
        str(events),
        "--cti-every",
        "2",
        "--edge-col",
        "edge",
        "--out",
        str(tmp_path / "o"),
    ]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("orderdoc cti: error: ")
    assert err.endswith(
        "row 2 is an end edge but no interval end column was given (use --end-col)\n"
    )


def test_whatif_over_error_names_its_flag(tmp_path, capsys) -> None:
    """whatif keeps --over as a list of key sets; its column error still names the flag."""
    capture = tmp_path / "cap.csv"
    capture.write_text(
        "event_time,arrival_time,partition_id\n2024-01-01T00:00:00Z,2024-01-01T00:00:01Z,0\n"
    )
    argv = ["whatif", str(capture), "--out", str(tmp_path / "w"), "--no-png"]
    code = main([*argv, "--timestamp-by", "event_time", "--over", "nope"])
    err = capsys.readouterr().err
    assert code == 2
    assert "nope" in err
    assert err.strip().endswith("(use --over)")
    assert len(err.strip().splitlines()) == 1
