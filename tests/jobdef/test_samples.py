"""sample_logs/jobs is what scripts/make_job_samples.py writes, and every definition in it
reads as the job the scenario samples were replayed under."""

from __future__ import annotations

import pytest

from diagnostics.durations import SECOND
from diagnostics.errors import InputError
from diagnostics.jobdef import job_policy, read_job_definition
from tests.scripts import load_script

from .conftest import JOBS


def test_the_committed_samples_are_the_generators_output(tmp_path):
    written = load_script("make_job_samples").build(tmp_path)
    committed = [*JOBS.glob("*.json"), *JOBS.glob("*.asaql")]
    assert sorted(p.name for p in written) == sorted(p.name for p in committed)
    for path in written:
        assert path.read_bytes() == (JOBS / path.name).read_bytes(), path.name


@pytest.mark.parametrize(
    "path",
    sorted(p for p in JOBS.glob("*.json") if "parameters" not in p.name),
    ids=lambda p: p.name,
)
def test_every_sample_is_the_scenarios_default_job(path):
    # two_inputs.resource.json has a second stream input: telemetry is picked by its name
    job = job_policy(read_job_definition(path), "telemetry" if "two_inputs" in path.name else None)
    # the portal export (translate's sample) names its event hub input with a hyphen
    assert job.input.name == ("telemetry-eh" if "portal-export" in path.name else "telemetry")
    assert job.policy.timestamp_by == "event_time"
    assert job.policy.late_arrival_ns == 5 * SECOND
    assert job.policy.out_of_order_ns == 0
    assert not job.policy.partition_by


def test_the_two_input_sample_needs_an_input_name():
    definition = read_job_definition(JOBS / "two_inputs.resource.json")
    assert [(i.name, i.kind) for i in definition.stream_inputs] == [
        ("telemetry", "Stream"),
        ("alarms", "Stream"),
    ]
    with pytest.raises(InputError, match=r"2 stream inputs \(telemetry, alarms\)"):
        job_policy(definition)
    # alarms: a CASE expression over AND/OR/BETWEEN, quoted whole
    with pytest.raises(InputError, match=r"TIMESTAMP BY CASE WHEN raised_at IS NULL OR .* END \(input alarms\)"):  # fmt: skip
        job_policy(definition, "alarms")
    alarms = job_policy(definition, "alarms", timestamp_by="raised_at")
    assert alarms.policy.over == ("device_id",)


def test_the_portal_export_has_its_inputs_and_query_as_child_resources():
    definition = read_job_definition(JOBS / "telemetry.portal-export.json")
    assert definition.name == "telemetry"
    assert [(i.name, i.kind) for i in definition.inputs] == [
        ("telemetry-eh", "Stream"),
        ("devices", "Reference"),
    ]
    assert definition.query is not None
    assert "HoppingWindow(minute, 5, 1)" in definition.query
