"""``--flink-version 2.1|2.2`` on the commands that take ``--rules flink`` (replay, whatif,
explain): the release whose rules apply (docs/engines.md, "Flink versions"), 2.2 by default,
and one-line errors (exit 2) for a release orderdoc does not model or the wrong rules."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from diagnostics.cli import main
from tests.engines.test_golden import F3

FLINK = ["--rules", "flink", "--timestamp-by", "ts", "--window", "10s"]
SPARK = ["--rules", "spark", "--timestamp-by", "ts", "--window", "10s"]


@pytest.fixture
def capture(tmp_path: Path) -> Path:
    """docs/engines.md, Example F3 (both splits idle from tick 2.4 s), as a CSV capture."""
    path = tmp_path / "capture.csv"
    F3.write_csv(path)
    return path


@pytest.mark.parametrize(
    ("version", "rules", "dropped"),
    [
        ([], "Flink 2.2", ["c"]),
        (["--flink-version", "2.2"], "Flink 2.2", ["c"]),
        (["--flink-version", "2.2.0"], "Flink 2.2", ["c"]),
        (["--flink-version", "2.1"], "Flink 2.1", []),
        (["--flink-version", " 2.1.3 "], "Flink 2.1", []),
    ],
)
def test_replay_follows_the_release_asked_for(
    capture, tmp_path, capsys, version, rules, dropped
) -> None:
    out = tmp_path / "out"
    argv = ["replay", str(capture), "--out", str(out), *FLINK, "--idleness", "1s", *version]
    assert main([*argv, "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["policy"].startswith(f"{rules}: event time ts")
    outcomes = pl.read_parquet(out / "outcomes.parquet")
    assert outcomes.filter(pl.col("dropped"))["name"].to_list() == dropped


def test_whatif_and_explain_measure_under_the_release_asked_for(capture, tmp_path, capsys) -> None:
    measured = {}
    for version in ("2.1", "2.2"):
        argv = ["whatif", str(capture), *FLINK, "--idleness", "1s", "--flink-version", version]
        assert main([*argv, "--out", str(tmp_path / version)]) == 0
        capsys.readouterr()
        table = pl.read_csv(tmp_path / version / "whatif.csv")
        measured[version] = table.filter(pl.col("tried_as") == "job as it is")["dropped"].item()
    assert measured == {"2.1": 0, "2.2": 1}
    argv = ["explain", "--events", str(capture), *FLINK, "--idleness", "1s"]
    assert main([*argv, "--flink-version", "2.2", "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["rules"].startswith("Flink 2.2: ")
    first = report["findings"][0]
    assert first["title"].startswith("Flink drops 1 of 3 events as late")
    assert "Flink 2.2 takes the maximum while every split is idle" in first["why"]


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (
            [*FLINK, "--flink-version", "2.0"],
            "argument --flink-version: '2.0' is not a Flink release orderdoc models: 2.1 or 2.2",
        ),
        ([*FLINK, "--flink-version", "latest"], "'latest' is not a Flink release"),
        (
            [*SPARK, "--flink-version", "2.1"],
            "--flink-version: not a setting of Spark's rules",
        ),
        (
            ["--timestamp-by", "ts", "--flink-version", "2.2"],
            "--flink-version: Flink or Spark settings; add --rules flink or --rules spark",
        ),
    ],
)
def test_a_release_not_modelled_or_the_wrong_rules_is_a_one_line_error(
    capture, tmp_path, capsys, flags, message
) -> None:
    try:
        code = main(["replay", str(capture), "--out", str(tmp_path / "o"), *flags])
    except SystemExit as exc:  # argparse's own errors
        code = exc.code
    err = capsys.readouterr().err
    assert code == 2
    assert message in err
    assert len(err.strip().splitlines()) == 1
