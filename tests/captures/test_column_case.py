"""Column names as ASA matches them (regardless of case), the suggestion when none matches,
the job definition named when its query gave the name, and ARM's ``Adjust``/``Drop``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from diagnostics.captures.matching import AmbiguousColumn, did_you_mean, match_column

from .helpers import iso, run_cli, write_csv

ROOT = Path(__file__).resolve().parents[2]
JOB = ROOT / "sample_logs/jobs/late_senders.arm.json"
PARAMETERS = ROOT / "sample_logs/jobs/late_senders.parameters.json"


def _capture(tmp_path: Path, name: str = "eventTime") -> Path:
    rows = [[i % 2, iso(f"00:00:{i:02d}"), iso(f"00:00:{i:02d}"), i] for i in range(10)]
    return write_csv(tmp_path / "c.csv", ["partition_id", name, "arrival_time", "v"], rows)


def test_match_column_is_exact_then_case_blind() -> None:
    assert match_column("eventTime", ["eventTime", "EventTime"]) == "eventTime"
    assert match_column("EVENTTIME", ["a", "eventTime"]) == "eventTime"
    assert match_column("nope", ["eventTime"]) is None
    with pytest.raises(AmbiguousColumn, match="differ only in case"):
        match_column("eventtime", ["eventTime", "EventTime"])
    assert did_you_mean("event_tim", ["eventTime", "value"]) == "; did you mean 'eventTime'?"
    assert did_you_mean("zzz", ["eventTime"]) == ""


def test_timestamp_by_matches_regardless_of_case(tmp_path: Path) -> None:
    path = _capture(tmp_path)
    code, out, err = run_cli("replay", str(path), "--out", str(tmp_path / "o"), "--json",
                             "--timestamp-by", "eventtime", "--action", "Adjust")  # fmt: skip
    assert code == 0, err
    assert json.loads(out)["policy"].startswith("TIMESTAMP BY eventTime,")


def test_a_missing_column_gets_a_suggestion_and_the_flag(tmp_path: Path) -> None:
    path = _capture(tmp_path)
    code, _, err = run_cli("replay", str(path), "--out", str(tmp_path / "o"),
                           "--timestamp-by", "event_tim")  # fmt: skip
    assert code == 2
    assert err.count("\n") == 1
    assert "did you mean 'eventTime'? (use --timestamp-by)" in err


def test_columns_differing_only_in_case_are_refused(tmp_path: Path) -> None:
    rows = [[0, iso("00:00:01"), iso("00:00:01"), iso("00:00:02")]]
    path = write_csv(tmp_path / "c.csv", ["partition_id", "eventTime", "arrival_time",
                                          "EventTime"], rows)  # fmt: skip
    code, _, err = run_cli("replay", str(path), "--out", str(tmp_path / "o"),
                           "--timestamp-by", "eventtime")  # fmt: skip
    assert code == 2
    assert "'eventtime' matches columns 'eventTime', 'EventTime'" in err


def test_a_name_from_the_query_names_the_job_definition(tmp_path: Path) -> None:
    text = JOB.read_text().replace("TIMESTAMP BY event_time", "TIMESTAMP BY EventTimes")
    job = tmp_path / "job.arm.json"
    job.write_text(text)
    path = _capture(tmp_path)
    code, _, err = run_cli("replay", str(path), "--out", str(tmp_path / "o"),
                           "--job-definition", str(job), "--parameters", str(PARAMETERS))  # fmt: skip
    assert code == 2
    assert "TIMESTAMP BY column 'EventTimes' of the query of job" in err
    assert str(job) in err
    assert "did you mean 'eventTime'?" in err
    assert "--timestamp-by" not in err


def test_the_query_name_in_other_case_replays(tmp_path: Path) -> None:
    text = JOB.read_text().replace("TIMESTAMP BY event_time", "TIMESTAMP BY EventTime")
    job = tmp_path / "job.arm.json"
    job.write_text(text)
    code, out, err = run_cli("replay", str(_capture(tmp_path)), "--out", str(tmp_path / "o"),
                             "--json", "--job-definition", str(job),
                             "--parameters", str(PARAMETERS))  # fmt: skip
    assert code == 0, err
    assert json.loads(out)["policy"].startswith("TIMESTAMP BY eventTime,")


@pytest.mark.parametrize(("given", "action"), [("Adjust", "adjust"), ("DROP", "drop")])
def test_arm_spelling_of_the_action(tmp_path: Path, given: str, action: str) -> None:
    code, out, err = run_cli("replay", str(_capture(tmp_path)), "--out", str(tmp_path / "o"),
                             "--json", "--timestamp-by", "eventTime", "--action", given)  # fmt: skip
    assert code == 0, err
    assert json.loads(out)["action"] == action
