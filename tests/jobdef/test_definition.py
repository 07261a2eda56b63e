"""Reading job definitions: the three shapes, ARM parameters, and one-line errors."""

from __future__ import annotations

import json
import re

import pytest

from diagnostics.durations import SECOND
from diagnostics.engine.policy import Action
from diagnostics.errors import InputError, Setting
from diagnostics.jobdef import Shape, job_policy, read_job_definition

from .conftest import JOBS, resource


@pytest.mark.parametrize(
    ("file", "shape"),
    [
        ("late_senders.arm.json", Shape.ARM_TEMPLATE),
        ("cross_device_disorder.resource.json", Shape.RESOURCE),
        ("idle_partition.az-show.json", Shape.AZ_SHOW),
    ],
)
def test_the_three_shapes_give_the_same_policy(file, shape):
    definition = read_job_definition(JOBS / file)
    assert definition.shape is shape
    assert definition.late_seconds == 5
    assert definition.out_of_order_seconds == 0
    assert definition.action == "Adjust"
    assert definition.compatibility_level == "1.2"
    job = job_policy(definition)
    assert job.input.name == "telemetry"
    assert job.input.source == "Microsoft.ServiceBus/EventHub"
    assert job.policy.timestamp_by == "event_time"
    assert job.policy.late_arrival_ns == 5 * SECOND
    assert job.policy.action is Action.ADJUST
    assert not job.policy.partition_by
    assert job.policy.over == ()


def test_arm_template_reads_both_inputs_and_resolves_names():
    definition = read_job_definition(JOBS / "late_senders.arm.json")
    assert [(i.name, i.kind) for i in definition.inputs] == [
        ("telemetry", "Stream"),
        ("devices", "Reference"),
    ]
    assert definition.name == "sample-late-senders"
    assert len(job_policy(definition).reads) == 1  # Readings step; the others read steps


def test_parameter_file_wins_over_default_value(tmp_path):
    params = {"parameters": {"lateArrivalSeconds": {"value": -1}, "jobName": {"value": "prod"}}}
    path = tmp_path / "p.json"
    path.write_text(json.dumps(params))
    definition = read_job_definition(JOBS / "late_senders.arm.json", path)
    assert definition.late_seconds is None  # -1: unlimited
    assert definition.name == "prod"
    assert job_policy(definition).policy.late_arrival_ns is None


def test_unresolved_parameter_names_it(write_json):
    template = json.loads((JOBS / "late_senders.arm.json").read_text())
    del template["parameters"]["outOfOrderSeconds"]["defaultValue"]
    path = write_json(template)
    with pytest.raises(
        InputError, match=r"job\.json: parameter 'outOfOrderSeconds'.*no value"
    ) as info:
        read_job_definition(path)
    assert info.value.setting is Setting.PARAMETERS
    assert "--" not in str(info.value)  # the library names settings, the CLI adds the flag


def test_absent_properties_take_asa_resource_defaults(write_json):
    definition = read_job_definition(write_json(resource("SELECT * FROM input TIMESTAMP BY ts")))
    assert definition.late_seconds is None  # ARM reference: absent means -1
    assert definition.out_of_order_seconds == 0
    assert definition.action == "Adjust"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", r"job\.json: not JSON \(line 1, column 2"),
        ("[1, 2]", r"job\.json: not a job definition"),
        (
            '{"resources": [{"type": "Microsoft.Storage/storageAccounts"}]}',
            "no Microsoft.StreamAnalytics/streamingjobs resource",
        ),
        ('{"hello": 1}', r"job\.json: no streaming job in it"),
    ],
)
def test_bad_documents_are_one_line_errors(tmp_path, content, message):
    path = tmp_path / "job.json"
    path.write_text(content)
    with pytest.raises(InputError, match=message) as info:
        read_job_definition(path)
    assert "\n" not in str(info.value)


def test_missing_file(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        read_job_definition(tmp_path / "absent.json")


def test_out_of_range_tolerance(write_json):
    doc = resource("SELECT 1", eventsLateArrivalMaxDelayInSeconds=1_814_400)
    with pytest.raises(InputError, match="1814400"):
        read_job_definition(write_json(doc))


def test_input_choice_and_errors(write_json):
    inputs = [
        {"name": "a", "properties": {"type": "Stream"}},
        {"name": "b", "properties": {"type": "Stream"}},
    ]
    definition = read_job_definition(
        write_json(resource("SELECT * FROM a TIMESTAMP BY t1 UNION SELECT * FROM b", inputs=inputs))
    )
    with pytest.raises(InputError, match=r"2 stream inputs \(a, b\); pick one by its name$") as two:
        job_policy(definition)
    assert two.value.setting is Setting.JOB_INPUT
    with pytest.raises(InputError, match=r"no input 'c' \(inputs: a, b\)") as unknown:
        job_policy(definition, "c")
    assert unknown.value.setting is Setting.JOB_INPUT
    assert job_policy(definition, "A").policy.timestamp_by == "t1"
    arm = read_job_definition(JOBS / "late_senders.arm.json")
    with pytest.raises(
        InputError, match=r"input 'devices' is a Reference input; .* \(stream inputs: telemetry\)$"
    ) as reference:
        job_policy(arm, "devices")
    assert reference.value.setting is Setting.JOB_INPUT
    assert job_policy(definition, "b").policy.timestamp_by is None


def test_timestamp_expression_is_an_error_quoting_it(write_json):
    definition = read_job_definition(
        write_json(resource("SELECT * FROM input TIMESTAMP BY DATEADD(second, -5, ts)"))
    )
    with pytest.raises(
        InputError, match=r"TIMESTAMP BY DATEADD\(second, -5, ts\) .*expression"
    ) as info:
        job_policy(definition)
    assert info.value.setting is Setting.TIMESTAMP_BY
    assert job_policy(definition, timestamp_by="ts_col").policy.timestamp_by == "ts_col"


def test_input_read_twice_differently_needs_a_choice(write_json):
    query = "SELECT * FROM input TIMESTAMP BY t1\nSELECT * FROM input TIMESTAMP BY t2"
    definition = read_job_definition(write_json(resource(query)))
    with pytest.raises(InputError, match=r"clauses \(TIMESTAMP BY t1; TIMESTAMP BY t2\)") as info:
        job_policy(definition)
    assert info.value.setting is Setting.TIMESTAMP_BY
    assert job_policy(definition, timestamp_by="ts_col").policy.timestamp_by == "ts_col"


def test_input_read_with_and_without_timestamp_by_needs_a_choice(write_json):
    # one read on event time, the other on arrival time: no single policy replays both
    query = "SELECT * INTO a FROM input TIMESTAMP BY t1\nSELECT * INTO b FROM input"
    definition = read_job_definition(write_json(resource(query)))
    with pytest.raises(
        InputError, match=r"\(TIMESTAMP BY t1; no TIMESTAMP BY \(arrival time\)\)"
    ) as info:
        job_policy(definition)
    assert info.value.setting is Setting.TIMESTAMP_BY
    # read the same way everywhere, or with no TIMESTAMP BY at all: no question to ask
    same = "SELECT * INTO a FROM input TIMESTAMP BY t1 UNION SELECT * FROM input TIMESTAMP BY t1"
    assert job_policy(read_job_definition(write_json(resource(same)))).policy.timestamp_by == "t1"
    bare = "SELECT * INTO a FROM input\nSELECT * INTO b FROM input"
    assert job_policy(read_job_definition(write_json(resource(bare)))).policy.timestamp_by is None


def test_over_and_partition_count_from_the_query(write_json):
    query = "SELECT * FROM input TIMESTAMP BY ts OVER dev PARTITION BY PartitionId INTO 8"
    job = job_policy(read_job_definition(write_json(resource(query))))
    assert job.policy.over == ("dev",)
    assert job.policy.partition_by
    assert job.partition_count == 8


def test_query_errors_name_the_file(write_json):
    definition = read_job_definition(write_json(resource("SELECT * FROM input WHERE x = 'open")))
    with pytest.raises(InputError, match=r"job\.json: query line 1, column 31: .* never closed"):
        job_policy(definition)
    over = read_job_definition(write_json(resource("SELECT * FROM input TIMESTAMP BY t OVER f(x)")))
    with pytest.raises(InputError, match=r"job\.json: query: OVER after input must list columns"):
        job_policy(over)


def test_parameters_apply_to_templates_only(write_json, tmp_path):
    params = tmp_path / "p.json"
    params.write_text('{"parameters": {}}')
    with pytest.raises(InputError, match="not an ARM template") as info:
        read_job_definition(write_json(resource("SELECT 1")), params)
    assert "--" not in str(info.value)


def test_missing_files_name_the_setting(tmp_path):
    with pytest.raises(InputError, match=r"^job definition .*absent\.json: no such file$") as job:
        read_job_definition(tmp_path / "absent.json")
    assert job.value.setting is Setting.JOB_DEFINITION
    with pytest.raises(InputError, match=r"^ARM parameter file .*p\.json: no such file$") as par:
        read_job_definition(JOBS / "late_senders.arm.json", tmp_path / "p.json")
    assert par.value.setting is Setting.PARAMETERS


def test_arm_escaped_literals_and_unsupported_expressions(write_json):
    template = json.loads((JOBS / "late_senders.arm.json").read_text())
    props = template["resources"][0]["properties"]
    props["eventsOutOfOrderPolicy"] = "[[Drop]"  # ARM's escape: the text "[Drop]"
    with pytest.raises(InputError, match=r"eventsOutOfOrderPolicy is '\[Drop\]'; ASA accepts"):
        read_job_definition(write_json(template))
    props["eventsOutOfOrderPolicy"] = "[if(true(), 'Drop', 'Adjust')]"
    with pytest.raises(InputError, match=r"cannot evaluate; write the value literally$") as info:
        read_job_definition(write_json(template))
    assert info.value.setting is None  # no parameter file can give it a value
    # text that only starts with a bracket is no expression
    props["eventsOutOfOrderPolicy"] = "Drop"
    props["transformation"]["properties"]["query"] = "[[x] FROM [telemetry]"
    assert read_job_definition(write_json(template)).query == "[x] FROM [telemetry]"
    props["transformation"]["properties"]["query"] = "[x] FROM telemetry"
    assert read_job_definition(write_json(template)).query == "[x] FROM telemetry"


def test_az_show_without_expand_says_how_to_get_the_inputs(write_json):
    document = json.loads((JOBS / "idle_partition.az-show.json").read_text())
    document["inputs"] = None  # 'az stream-analytics job show' without --expand
    document["transformation"] = None
    definition = read_job_definition(write_json(document))
    assert definition.inputs == ()
    with pytest.raises(
        InputError, match=r"lists no inputs; .*--expand inputs,transformation"
    ) as info:
        job_policy(definition)
    # the definition was given: no flag or field resolves this, so none is named after it
    assert info.value.setting is None


def test_asas_largest_tolerances_are_read_and_one_more_second_is_refused(write_json):
    """The ARM reference's range of both tolerances ends at 1814399 s (20 days 23:59:59): a job
    using it reads into a policy the engine accepts; one second more is refused with the range."""
    largest = resource(
        "SELECT * FROM input TIMESTAMP BY t",
        eventsLateArrivalMaxDelayInSeconds=1814399,
        eventsOutOfOrderMaxDelayInSeconds=1814399,
    )
    policy = job_policy(read_job_definition(write_json(largest))).policy
    assert (policy.late_arrival_ns, policy.out_of_order_ns) == (1814399 * SECOND,) * 2
    for key, low in (("eventsLateArrivalMaxDelayInSeconds", "-1 (unlimited)"),
                     ("eventsOutOfOrderMaxDelayInSeconds", "0")):  # fmt: skip
        past = resource("SELECT * FROM input TIMESTAMP BY t", **{key: 1814400})
        with pytest.raises(
            InputError, match=rf"{key} is 1814400; ASA accepts {re.escape(low)} to 1814399$"
        ):
            read_job_definition(write_json(past))
