"""The corrected job written: same shape, only policy fields and query changed, az commands."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from diagnostics.durations import SECOND
from diagnostics.engine.events_io import read_events
from diagnostics.engine.policy import Action
from diagnostics.engine.replay import declared_partitions
from diagnostics.errors import InputError
from diagnostics.explain import explain
from diagnostics.explain.model import Cause, Finding
from diagnostics.explain.snippets import (
    late_tolerance,
    ooo_tolerance,
    partition_by,
    timestamp_by_over,
)
from diagnostics.jobdef import job_policy, read_job_definition
from diagnostics.jobdef.definition import LATE, OUT_OF_ORDER, POLICY, get_path
from diagnostics.jobdef.fix import Fix, Outcome, corrected_document
from diagnostics.jobdef.fixfiles import apply_script, fix_markdown, write_fix
from diagnostics.jobdef.plan import plan_fix
from diagnostics.kinds import Severity

from .conftest import JOBS, SCENARIOS, resource


def _finding(*suggestions) -> Finding:
    return Finding(Cause.LATE_ARRIVALS, Severity.CRITICAL, "t", "e", suggestions=suggestions)


def _differences(a, b, path=()):
    """Paths where two JSON values differ."""
    if isinstance(a, dict) and isinstance(b, dict):
        out = [(*path, k) for k in a.keys() ^ b.keys()]
        for k in a.keys() & b.keys():
            out += _differences(a[k], b[k], (*path, k))
        return out
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [
            d
            for i, (x, y) in enumerate(zip(a, b, strict=True))
            for d in _differences(x, y, (*path, i))
        ]
    return [] if a == b else [path]


def test_without_a_capture_the_first_suggestions_win():
    job = job_policy(read_job_definition(JOBS / "late_senders.arm.json"))
    fix = plan_fix(
        job,
        [
            _finding(
                late_tolerance(121),
                timestamp_by_over("event_time", ("device_id",), multi_partition=True),
            )
        ],
    )
    assert fix.policy.late_arrival_ns == 121 * SECOND
    assert fix.policy.over == ("device_id",)
    assert fix.policy.partition_by
    assert fix.before is None
    assert fix.query is not None


def test_arm_template_keeps_every_other_value_and_its_parameter_references(tmp_path):
    definition = read_job_definition(JOBS / "late_senders.arm.json")
    job = job_policy(definition)
    fix = plan_fix(job, [_finding(late_tolerance(121), partition_by("telemetry"))])
    document = corrected_document(definition, fix)
    props = ("resources", 0, "properties")
    assert sorted(_differences(definition.document, document), key=str) == [
        (*props, LATE),
        (*props, "transformation", "properties", "query"),
    ]
    assert get_path(document, props)[LATE] == 121
    assert get_path(document, props)[OUT_OF_ORDER] == "[parameters('outOfOrderSeconds')]"
    written = write_fix(fix, tmp_path / "fix")
    assert json.loads(written["definition"].read_text()) == document
    again = job_policy(read_job_definition(written["definition"]))
    assert again.policy == fix.policy


def test_az_show_output_and_apply_script(tmp_path):
    definition = read_job_definition(JOBS / "idle_partition.az-show.json")
    job = job_policy(definition)
    fix = plan_fix(job, [_finding(ooo_tolerance(4))])
    assert fix.query is None
    assert fix.policy.out_of_order_ns == 4 * SECOND
    document = corrected_document(definition, fix)
    assert _differences(definition.document, document) == [(OUT_OF_ORDER,)]
    script = apply_script(fix)
    assert "RESOURCE_GROUP=${RESOURCE_GROUP:-rg-telemetry}" in script
    assert "JOB_NAME=${JOB_NAME:-sample-idle-partition}" in script
    assert "--arrival-max-delay 5 --order-max-delay 4 --out-of-order-policy Adjust" in script
    assert "transformation update" not in script
    written = write_fix(fix, tmp_path)
    assert set(written) == {"definition", "apply", "fix"}
    assert written["apply"].stat().st_mode & 0o111


def test_query_change_writes_query_diff_and_transformation_update(tmp_path):
    definition = read_job_definition(JOBS / "cross_device_disorder.resource.json")
    job = job_policy(definition)
    fix = plan_fix(
        job, [_finding(timestamp_by_over("event_time", ("device_id",), multi_partition=True))]
    )
    written = write_fix(fix, tmp_path)
    assert written["query"].read_text() == fix.query
    diff = written["diff"].read_text()
    assert "-FROM [telemetry] TIMESTAMP BY event_time\n" in diff
    assert (
        "+FROM [telemetry] TIMESTAMP BY event_time OVER device_id PARTITION BY PartitionId\n"
        in diff
    )
    script = written["apply"].read_text()
    assert "--name Transformation" in script
    assert 'query.asaql")"' in script
    assert "job update" not in script  # no property changed
    document = json.loads(written["definition"].read_text())
    assert _differences(definition.document, document) == [
        ("properties", "transformation", "properties", "query")
    ]
    assert document["properties"][POLICY] == "Adjust"
    fix_md = written["fix"].read_text()
    assert (
        "| query: how telemetry is read | TIMESTAMP BY event_time | TIMESTAMP BY event_time OVER device_id PARTITION BY PartitionId |"
        in fix_md
    )
    assert "No capture was given" in fix_md


def test_no_finding_changes_nothing(tmp_path):
    definition = read_job_definition(JOBS / "healthy.resource.json")
    job = job_policy(definition)
    fix = plan_fix(job, [])
    assert fix.policy == job.policy
    assert fix.policy.action is Action.ADJUST
    written = write_fix(fix, tmp_path)
    assert json.loads(written["definition"].read_text()) == definition.document
    assert "Nothing to apply" in written["apply"].read_text()


def test_an_arm_template_gets_the_new_query_escaped_as_arm_needs(tmp_path):
    # A query that starts with "[" and ends with "]" reads as an ARM expression unless
    # written "[[...]"; one from a parameter is written literally in its place.
    template = json.loads((JOBS / "late_senders.arm.json").read_text())
    transformation = template["resources"][0]["properties"]["transformation"]["properties"]
    query = "[[Readings] AS (SELECT 1) SELECT * INTO o FROM telemetry TIMESTAMP BY ts WHERE [ok]"
    template["parameters"]["query"] = {"type": "string", "defaultValue": query}
    transformation["query"] = "[parameters('query')]"
    path = tmp_path / "job.json"
    path.write_text(json.dumps(template))
    definition = read_job_definition(path)
    assert definition.query == query[1:]
    fix = plan_fix(job_policy(definition), [_finding(partition_by("telemetry"))])
    new = query.replace("BY ts", "BY ts PARTITION BY PartitionId")
    assert fix.query == new[1:]
    document = corrected_document(definition, fix)
    written = get_path(document, ("resources", 0, "properties", "transformation", "properties"))
    assert written["query"] == new
    path.write_text(json.dumps(document))
    assert read_job_definition(path).query == fix.query


def _exported(nested: bool) -> dict:
    """The sample template as a resource-group export writes it: the inputs and the
    transformation as child resources (beside the job, or in its own ``resources``)."""
    template = json.loads((JOBS / "late_senders.arm.json").read_text())
    job = template["resources"][0]
    props = job["properties"]
    transformation = props.pop("transformation")
    children = [
        {
            "type": "Microsoft.StreamAnalytics/streamingjobs/inputs",
            "apiVersion": job["apiVersion"],
            "name": f"[concat(parameters('jobName'), '/{i['name']}')]",
            "dependsOn": [
                "[resourceId('Microsoft.StreamAnalytics/streamingjobs', parameters('jobName'))]"
            ],
            "properties": i["properties"],
        }
        for i in props.pop("inputs")
    ]
    children.append(
        {
            "type": "Microsoft.StreamAnalytics/streamingjobs/transformations",
            "apiVersion": job["apiVersion"],
            "name": "[concat(parameters('jobName'), '/Main')]",
            "properties": transformation["properties"],
        }
    )
    if nested:
        for child in children:
            child["type"] = child["type"].rsplit("/", 1)[1]
        children[0]["name"] = "telemetry"
        job["resources"] = children
    else:
        template["resources"] += children
    return template


@pytest.mark.parametrize("nested", [False, True], ids=["beside", "nested"])
def test_inputs_and_transformation_as_child_resources(tmp_path, nested):
    template = _exported(nested)
    path = tmp_path / "export.json"
    path.write_text(json.dumps(template))
    definition = read_job_definition(path)
    assert [(i.name, i.kind) for i in definition.inputs] == [
        ("telemetry", "Stream"),
        ("devices", "Reference"),
    ]
    assert definition.transformation_name == "Main"
    job = job_policy(definition)
    assert job.policy.timestamp_by == "event_time"
    fix = plan_fix(job, [_finding(partition_by("telemetry"))])
    document = corrected_document(definition, fix)
    where = ("resources", 0, "resources", 2) if nested else ("resources", 3)
    assert _differences(template, document) == [(*where, "properties", "query")]
    assert "FROM telemetry TIMESTAMP BY event_time PARTITION BY PartitionId" in get_path(
        document, (*where, "properties", "query")
    )
    assert "--name Main" in apply_script(fix)


def test_a_query_the_fix_does_not_change_is_left_as_written(write_json):
    # One read with PARTITION BY, one without: the job's policy has it; a fix that changes
    # only a tolerance must not add it to the other read.
    query = (
        "SELECT * INTO a FROM input TIMESTAMP BY ts PARTITION BY PartitionId\n"
        "SELECT * INTO b FROM input TIMESTAMP BY ts"
    )
    job = job_policy(read_job_definition(write_json(resource(query))))
    assert job.policy.partition_by
    fix = plan_fix(job, [_finding(late_tolerance(30))])
    assert fix.policy.late_arrival_ns == 30 * SECOND
    assert fix.query is None
    over = plan_fix(job, [_finding(timestamp_by_over("ts", ("dev",), multi_partition=True))])
    assert over.query == (
        "SELECT * INTO a FROM input TIMESTAMP BY ts OVER dev PARTITION BY PartitionId\n"
        "SELECT * INTO b FROM input TIMESTAMP BY ts OVER dev PARTITION BY PartitionId"
    )


CASE_TS = (
    "CASE WHEN event_time IS NULL\n"
    "        OR DATEDIFF(second, event_time, arrival_time) BETWEEN 0 AND 60\n"
    "        THEN arrival_time ELSE event_time END"
)


def test_a_case_timestamp_is_quoted_whole_on_one_line_and_kept_by_the_fix(write_json, tmp_path):
    query = f"SELECT * INTO o FROM [input] TIMESTAMP BY {CASE_TS}\nWHERE x = 1 AND y = 2"
    path = write_json(resource(query))
    with pytest.raises(InputError) as info:
        job_policy(read_job_definition(path))
    message = str(info.value)
    assert "\n" not in message
    assert (
        "TIMESTAMP BY CASE WHEN event_time IS NULL OR DATEDIFF(second, event_time, arrival_time) "
        "BETWEEN 0 AND 60 THEN arrival_time ELSE event_time END (input input) is an expression"
    ) in message
    # --timestamp-by: the column stands in for the expression, which the fix keeps whole
    job = job_policy(read_job_definition(path), timestamp_by="event_time")
    fix = plan_fix(job, [_finding(timestamp_by_over("event_time", ("device_id",), multi_partition=True))])  # fmt: skip
    assert fix.query == (
        f"SELECT * INTO o FROM [input] TIMESTAMP BY {CASE_TS} OVER device_id "
        "PARTITION BY PartitionId\nWHERE x = 1 AND y = 2"
    )
    written = write_fix(fix, tmp_path / "fix")
    back = job_policy(read_job_definition(written["definition"]), timestamp_by="event_time")
    assert back.policy.over == ("device_id",)
    assert back.policy.partition_by
    assert [r.timestamp_text for r in back.reads] == [CASE_TS]


def test_two_timestamp_bys_read_back_as_one_after_the_fix(write_json, tmp_path):
    query = (
        "WITH Raw AS (SELECT * FROM input TIMESTAMP BY event_time)\n"
        "SELECT * INTO a FROM Raw\n"
        "SELECT * INTO b FROM input TIMESTAMP BY arrival_time OVER device_id\n"
    )
    path = write_json(resource(query))
    with pytest.raises(InputError, match="read with different clauses"):
        job_policy(read_job_definition(path))
    job = job_policy(read_job_definition(path), timestamp_by="event_time")
    assert job.reads_disagree
    # only a tolerance changes, yet the query is made to read the input one way
    fix = plan_fix(job, [_finding(late_tolerance(30))])
    assert fix.query == query.replace("arrival_time OVER device_id", "event_time")
    assert any("TIMESTAMP BY event_time in every step" in n for n in fix.notes)
    written = write_fix(fix, tmp_path / "fix")
    back = job_policy(read_job_definition(written["definition"]))  # no --timestamp-by needed
    assert back.policy.timestamp_by == "event_time"
    assert back.policy.late_arrival_ns == 30 * SECOND
    assert "in every step" in written["fix"].read_text()


def test_clauses_differing_in_case_only_are_one_clause(write_json):
    """The message lists each different clause once, compared ignoring case as the check."""
    query = (
        "SELECT * INTO a FROM input TIMESTAMP BY event_time OVER device_id\n"
        "SELECT * INTO b FROM input TIMESTAMP BY Event_Time OVER Device_Id\n"
        "SELECT * INTO c FROM input TIMESTAMP BY arrival_time\n"
    )
    with pytest.raises(InputError) as caught:
        job_policy(read_job_definition(write_json(resource(query))))
    assert (
        "read with different clauses (TIMESTAMP BY arrival_time; "
        "TIMESTAMP BY event_time OVER device_id); say which"
    ) in str(caught.value)
    same = query.replace("arrival_time", "EVENT_TIME OVER DEVICE_ID")
    assert not job_policy(read_job_definition(write_json(resource(same)))).reads_disagree


def test_apply_script_takes_group_and_name_from_the_resource_id():
    definition = read_job_definition(JOBS / "cross_device_disorder.resource.json")
    assert definition.resource_group == "rg-telemetry"
    fix = plan_fix(job_policy(definition), [_finding(ooo_tolerance(4))])
    script = apply_script(fix)
    assert "RESOURCE_GROUP=${RESOURCE_GROUP:-rg-telemetry}" in script
    assert "JOB_NAME=${JOB_NAME:-sample-cross-device-disorder}" in script


def test_the_name_comes_from_the_id_when_the_resource_has_none(write_json):
    document = json.loads((JOBS / "cross_device_disorder.resource.json").read_text())
    del document["name"]
    document["id"] = (
        document["id"]
        .replace("rg-telemetry", "rg-other")
        .replace("sample-cross-device-disorder", "from-id")
    )
    definition = read_job_definition(write_json(document), label="uploaded.json")
    assert (definition.resource_group, definition.name) == ("rg-other", "from-id")
    job = job_policy(definition)
    assert job.describe_source() == "job from-id (resource uploaded.json, compatibility level 1.2), input telemetry"  # fmt: skip
    # an ARM template's resources carry no id: the group stays a placeholder
    arm = read_job_definition(JOBS / "late_senders.arm.json")
    assert arm.resource_group is None
    assert "RESOURCE_GROUP=${RESOURCE_GROUP:-'<resource group>'}" in apply_script(
        plan_fix(job_policy(arm), [_finding(ooo_tolerance(4))])
    )


def test_historical_replay_leaves_the_live_jobs_tolerance_and_says_what_it_would_cost():
    job = job_policy(read_job_definition(JOBS / "historical_replay.arm.json"))
    events = read_events(SCENARIOS / "historical_replay" / "capture.csv")
    report = explain(None, events=events, policy=job.policy, partitions=declared_partitions(4))
    (finding,) = [f for f in report.findings if f.cause is Cause.HISTORICAL_REPLAY]
    assert any(s.value_seconds is None and s.kind.value == "late_arrival_tolerance" for s in finding.suggestions)  # fmt: skip
    fix = plan_fix(job, [finding], events=events, partitions=declared_partitions(4))
    assert fix.policy == job.policy  # no unlimited tolerance on the live job
    assert not fix.changes_anything
    assert any("separate job" in a for a in fix.advice)
    (note,) = [n for n in fix.notes if n.startswith("not written: an unlimited")]
    # what it would have cost, measured: every late event kept, live output held back
    assert "late events 2000 -> 0" in note
    held = int(note.split("held back more than 5 s 0 -> ")[1].split(",")[0])
    assert held > 1000
    text = fix_markdown(fix, "x.json")
    assert "The job is left as it is" in text
    assert "Note: not written: an unlimited late-arrival tolerance" in text


def test_fix_md_counts_more_held_back_events_as_a_cost():
    job = job_policy(read_job_definition(JOBS / "healthy.resource.json"))
    policy = replace(job.policy, late_arrival_ns=None)
    fix = Fix(
        job=job,
        policy=policy,
        query=None,
        before=Outcome(late=10, out_of_order=0, early=0, dropped=0, delay_p95_s=1.0),
        after=Outcome(late=0, out_of_order=0, early=0, dropped=0, delay_p95_s=9.0, held_back=40),
    )
    text = fix_markdown(fix, "x.json")
    assert "Gain: 10 of 10 late or out-of-order events (100%)" in text
    assert "Cost: the release delay (95th percentile of arrival to output) goes from 1 s to 9 s (+8 s)." in text  # fmt: skip
    assert "Cost: 40 more events are held back more than 5 s (from 0 to 40)" in text


def test_fix_md_counts_the_reads_and_steps_of_the_input_in_words():
    job = job_policy(read_job_definition(JOBS / "late_senders.arm.json"))
    once = Fix(job=job, policy=job.policy, query=None)
    assert "; the query reads it 1 time, in step Readings.\n" in fix_markdown(once, "x.json")
    (read,) = job.reads
    twice = replace(job, reads=(read, replace(read, step="Totals")))
    text = fix_markdown(Fix(job=twice, policy=job.policy, query=None), "x.json")
    assert "; the query reads it 2 times, in steps Readings, Totals.\n" in text
