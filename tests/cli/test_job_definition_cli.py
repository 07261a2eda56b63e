"""``--job-definition`` on replay / explain / whatif, ``explain --write-fix``: the user's job
in, the corrected job out, and one-line errors (exit 2) for bad definitions."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from diagnostics.cli import main
from diagnostics.jobdef import job_policy, read_job_definition

ROOT = Path(__file__).resolve().parents[2]
JOBS = ROOT / "sample_logs" / "jobs"
LATE = ROOT / "sample_logs" / "scenarios" / "late_senders" / "capture.csv"


def test_explain_writes_a_deployable_fix_with_measured_counts(tmp_path, capsys):
    out = tmp_path / "fix"
    code = main(
        [
            "explain", "--events", str(LATE), "--partitions", "4",
            "--job-definition", str(JOBS / "late_senders.arm.json"),
            "--parameters", str(JOBS / "late_senders.parameters.json"),
            "--write-fix", str(out),
        ]
    )  # fmt: skip
    assert code == 0
    text = capsys.readouterr().out
    assert "(from job sample-late-senders-prod (arm-template" in text
    # the fix is the one recommendation for this capture (whatif's, the app's)
    import polars as pl

    from diagnostics.durations import format_duration
    from diagnostics.engine.policy import OrderingPolicy
    from diagnostics.whatif.recommend import recommend

    rec = recommend(
        pl.read_csv(LATE), OrderingPolicy(timestamp_by="event_time"), partitions=range(4)
    )
    left = rec.row["adjusted"]
    assert left <= 20  # at most 1 % of the 2,000 events
    assert (
        f"replayed under the written definition: late 513 -> {left}, out of order 270 -> 0" in text
    )
    # the suggestions name the job's input, not a placeholder
    assert "FROM telemetry TIMESTAMP BY event_time OVER device_id PARTITION BY PartitionId" in text
    assert "FROM input " not in text
    names = {p.name for p in out.iterdir()}
    assert names == {
        "late_senders.arm.fixed.json",
        "query.asaql",
        "query.diff",
        "apply.sh",
        "FIX.md",
    }
    fixed = job_policy(read_job_definition(out / "late_senders.arm.fixed.json"))
    assert fixed.policy.over == ("device_id",)
    assert fixed.policy.partition_by
    fix_md = (out / "FIX.md").read_text()
    assert f"| late events (LateInputEvent) | 513 | {left} |" in fix_md
    assert "```diff" in fix_md
    # each change in turn: the late tolerance alone turns late events into out-of-order ones
    late = format_duration(rec.policy.late_arrival_ns)
    assert f"| Events that arrive late: {late} | {left} | " in fix_md
    assert f"| TIMESTAMP BY ... OVER device_id | {left} | 0 | 0 |" in fix_md
    assert subprocess.run(["bash", "-n", str(out / "apply.sh")], check=False).returncode == 0
    assert "JOB_NAME=${JOB_NAME:-sample-late-senders-prod}" in (out / "apply.sh").read_text()


def test_json_format_stays_json_on_stdout(tmp_path, capsys):
    code = main(
        [
            "explain", "--events", str(LATE), "--format", "json",
            "--job-definition", str(JOBS / "late_senders.arm.json"),
            "--write-fix", str(tmp_path / "fix"),
        ]
    )  # fmt: skip
    assert code == 0
    captured = capsys.readouterr()
    report = json.loads(captured.out)
    assert set(report) == {
        "findings",
        "sources",
        "policy",
        "tolerances",
        "recommended",
        "results",
        "senders",
    }
    assert "wrote" in captured.err


def test_flags_override_the_definition_and_say_so(tmp_path, capsys):
    code = main(
        [
            "replay", str(LATE), "--out", str(tmp_path / "r"), "--late-arrival", "2m",
            "--job-definition", str(JOBS / "idle_partition.az-show.json"),
        ]
    )  # fmt: skip
    assert code == 0
    text = capsys.readouterr().out
    assert "late 2m, out-of-order 0s, adjust (from job sample-idle-partition" in text
    assert "overridden by --late-arrival" in text


def test_whatif_tries_the_jobs_own_setting(tmp_path, capsys):
    code = main(
        [
            "whatif", str(LATE), "--out", str(tmp_path / "w"), "--no-png", "--no-verify",
            "--late-arrival", "0s,2m", "--out-of-order", "0s", "--json",
            "--job-definition", str(JOBS / "late_senders.arm.json"),
        ]
    )  # fmt: skip
    assert code == 0
    rows = json.loads(capsys.readouterr().out)
    assert {row["late_arrival_s"] for row in rows} == {0.0, 5.0, 120.0}


def _template(tmp_path: Path, change) -> Path:
    document = json.loads((JOBS / "late_senders.arm.json").read_text())
    change(document)
    path = tmp_path / "job.json"
    path.write_text(json.dumps(document))
    return path


def _text(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def _no_default(doc):
    del doc["parameters"]["lateArrivalSeconds"]["defaultValue"]


def _expression(doc):
    props = doc["resources"][0]["properties"]["transformation"]["properties"]
    props["query"] = props["query"].replace(
        "TIMESTAMP BY event_time", "TIMESTAMP BY DATEADD(second, 1, event_time)"
    )


@pytest.mark.parametrize(
    ("make", "extra", "message"),
    [
        (lambda p: _text(p, "{oops"), [], "job.json: not JSON (line 1, column 2"),
        (lambda p: _text(p, '{"resources": []}'), [], "job.json: no Microsoft.StreamAnalytics/streamingjobs resource"),
        (lambda p: _template(p.parent, _no_default), [], "job.json: parameter 'lateArrivalSeconds'"),
        (lambda p: _template(p.parent, _expression), [], "job.json: TIMESTAMP BY DATEADD(second, 1, event_time)"),
        (lambda p: _template(p.parent, lambda d: None), ["--input", "nope"], "job.json: the job has no input 'nope'"),
    ],
)  # fmt: skip
def test_bad_definitions_are_one_line_errors(tmp_path, capsys, make, extra, message):
    path = make(tmp_path / "job.json")
    code = main(["explain", "--events", str(LATE), "--job-definition", str(path), *extra])
    assert code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert message in err
    assert "Traceback" not in err


def test_write_fix_needs_a_definition(capsys):
    assert (
        main(["explain", "--events", str(LATE), "--timestamp-by", "event_time", "--write-fix", "x"])
        == 2
    )
    assert "--write-fix DIR needs --job-definition" in capsys.readouterr().err


def _two_inputs(doc):
    inputs = doc["resources"][0]["properties"]["inputs"]
    inputs[1]["properties"]["type"] = "Stream"


def _mixed_reads(doc):
    props = doc["resources"][0]["properties"]["transformation"]["properties"]
    props["query"] += "SELECT * INTO raw FROM telemetry\n"


@pytest.mark.parametrize(
    ("make", "extra", "ending"),
    [
        (lambda p: _template(p.parent, _no_default), [], "or as a defaultValue (use --parameters)"),
        (lambda p: _template(p.parent, _expression), [], "as the TIMESTAMP BY column (use --timestamp-by)"),
        (lambda p: _template(p.parent, _two_inputs), [], "(telemetry, devices); pick one by its name (use --input)"),
        (lambda p: _template(p.parent, lambda d: None), ["--input", "nope"], "(inputs: telemetry, devices) (use --input)"),
        (lambda p: _template(p.parent, _mixed_reads), [], "no TIMESTAMP BY (arrival time)); say which TIMESTAMP BY column (and OVER columns) applies (use --timestamp-by)"),
        (lambda p: p, [], "job.json: no such file (use --job-definition)"),
        (lambda p: _template(p.parent, lambda d: None), ["--parameters", "absent.json"], "absent.json: no such file (use --parameters)"),
    ],
)  # fmt: skip
def test_definition_errors_end_with_the_flag_that_resolves_them(
    tmp_path, capsys, make, extra, ending
):
    path = make(tmp_path / "job.json")
    code = main(["explain", "--events", str(LATE), "--job-definition", str(path), *extra])
    assert code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.rstrip("\n").endswith(ending)


def test_write_fix_into_a_file_names_the_flag(tmp_path, capsys):
    target = tmp_path / "taken"
    target.write_text("")
    code = main(
        [
            "explain", "--events", str(LATE), "--write-fix", str(target),
            "--job-definition", str(JOBS / "cross_device_disorder.resource.json"),
        ]
    )  # fmt: skip
    assert code == 2
    printed = capsys.readouterr()
    assert (
        printed.err
        == f"orderdoc explain: error: --write-fix {target}: exists and is not a folder\n"
    )
    assert printed.out == ""  # refused before the findings are worked out and printed


def test_timestamp_by_resolves_an_input_read_two_ways(tmp_path, capsys):
    path = _template(tmp_path, _mixed_reads)
    out = tmp_path / "fix"
    code = main(
        [
            "explain", "--events", str(LATE), "--timestamp-by", "event_time",
            "--job-definition", str(path), "--write-fix", str(out),
        ]
    )  # fmt: skip
    assert code == 0
    assert "overridden by --timestamp-by" in capsys.readouterr().out
    # both reads of telemetry now say the same, so the written job reads back without a question
    written = job_policy(read_job_definition(out / "job.fixed.json"))
    assert {r.timestamp_by for r in written.reads} == {"event_time"}
    assert len(written.reads) == 2


DISORDER = ROOT / "sample_logs" / "scenarios" / "cross_device_disorder" / "capture.csv"
TWO = JOBS / "two_inputs.resource.json"


def test_two_stream_inputs_need_input_and_only_that_input_is_fixed(tmp_path, capsys):
    code = main(["explain", "--events", str(DISORDER), "--job-definition", str(TWO)])
    assert code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.endswith(
        "two_inputs.resource.json: the job has 2 stream inputs (telemetry, alarms); pick one "
        "by its name (use --input)\n"
    )
    out = tmp_path / "fix"
    code = main(
        [
            "explain", "--events", str(DISORDER), "--partitions", "4", "--input", "telemetry",
            "--job-definition", str(TWO), "--write-fix", str(out),
        ]
    )  # fmt: skip
    assert code == 0
    text = capsys.readouterr().out
    assert "input telemetry" in text
    assert "out of order 211 -> 0" in text
    query = (out / "query.asaql").read_text()
    original = read_job_definition(TWO).query
    assert original is not None
    # only the telemetry read changes; the alarms read (a CASE over OR / BETWEEN) is as it was
    assert query == original.replace(
        "FROM [telemetry] TIMESTAMP BY event_time\n",
        "FROM [telemetry] TIMESTAMP BY event_time OVER device_id PARTITION BY PartitionId\n",
    )
    back = read_job_definition(out / "two_inputs.resource.fixed.json")
    assert job_policy(back, "telemetry").policy.over == ("device_id",)
    script = (out / "apply.sh").read_text()
    assert "RESOURCE_GROUP=${RESOURCE_GROUP:-rg-telemetry}" in script  # from the resource id
    assert "JOB_NAME=${JOB_NAME:-sample-two-inputs}" in script


def test_the_other_input_s_case_expression_is_quoted_whole(capsys):
    code = main(
        ["explain", "--events", str(DISORDER), "--input", "alarms", "--job-definition", str(TWO)]
    )
    assert code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "TIMESTAMP BY CASE WHEN raised_at IS NULL OR DATEDIFF(hour, raised_at, " in err
    assert "NOT BETWEEN 0 AND 24 THEN EventEnqueuedUtcTime ELSE raised_at END (input alarms)" in err
    assert err.endswith("(use --timestamp-by)\n")
    assert "Traceback" not in err


def test_a_case_timestamp_with_timestamp_by_writes_a_query_that_parses(tmp_path, capsys):
    # the audit's case: CASE ... AND ... END and --timestamp-by: OVER after the whole CASE
    document = json.loads((JOBS / "cross_device_disorder.resource.json").read_text())
    case = (
        "CASE WHEN event_time IS NULL OR DATEDIFF(second, event_time, arrival_time) "
        "BETWEEN 0 AND 60 THEN arrival_time ELSE event_time END"
    )
    props = document["properties"]["transformation"]["properties"]
    props["query"] = props["query"].replace("TIMESTAMP BY event_time", f"TIMESTAMP BY {case}")
    path = tmp_path / "job.json"
    path.write_text(json.dumps(document))
    out = tmp_path / "fix"
    code = main(
        [
            "explain", "--events", str(DISORDER), "--partitions", "4",
            "--timestamp-by", "event_time", "--job-definition", str(path), "--write-fix", str(out),
        ]
    )  # fmt: skip
    assert code == 0
    query = (out / "query.asaql").read_text()
    assert (
        f"FROM [telemetry] TIMESTAMP BY {case} OVER device_id PARTITION BY PartitionId\n" in query
    )
    assert "event_time IS NULL OVER" not in query
    assert (
        "column event_time as the event time, in place of the query's TIMESTAMP BY CASE"
        in (out / "FIX.md").read_text()
    )


def test_two_timestamp_bys_and_timestamp_by_give_one_reading(tmp_path, capsys):
    # docs/explain.md: with --timestamp-by the corrected query reads the input one way
    document = json.loads((JOBS / "cross_device_disorder.resource.json").read_text())
    props = document["properties"]["transformation"]["properties"]
    props["query"] += (
        "SELECT * INTO raw FROM [telemetry] TIMESTAMP BY arrival_time OVER device_id\n"
    )
    path = tmp_path / "job.json"
    path.write_text(json.dumps(document))
    out = tmp_path / "fix"
    code = main(
        [
            "explain", "--events", str(DISORDER), "--partitions", "4",
            "--timestamp-by", "event_time", "--job-definition", str(path), "--write-fix", str(out),
        ]
    )  # fmt: skip
    assert code == 0
    query = (out / "query.asaql").read_text()
    assert "arrival_time" not in query
    assert query.count("TIMESTAMP BY event_time OVER device_id PARTITION BY PartitionId") == 2
    written = job_policy(read_job_definition(out / "job.fixed.json"))  # no flag needed
    assert written.policy.timestamp_by == "event_time"
    assert "in every step" in (out / "FIX.md").read_text()


def test_a_definition_without_inputs_names_no_flag(tmp_path, capsys):
    document = json.loads((JOBS / "idle_partition.az-show.json").read_text())
    document["inputs"] = None  # 'az stream-analytics job show' without --expand
    path = tmp_path / "job.json"
    path.write_text(json.dumps(document))
    assert main(["explain", "--events", str(LATE), "--job-definition", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.endswith("or the portal's Export template\n")  # not "(use --job-definition)"
