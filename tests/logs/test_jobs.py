"""Jobs are keyed by resource id (ignoring case) and shown in their best known casing."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

from diagnostics.logs.aggregate import aggregate_files
from diagnostics.logs.jobs import JobRef, job_ref, resolve_jobs
from diagnostics.logs.normalise import normalise
from diagnostics.logs.records import DataError

SUB = "6a1f0c2e-0000-4b5c-9d7e-3c2b1a0f9e8d"


def arm_id(group: str, job: str, sub: str = SUB) -> str:
    """A resource id as ARM writes it (az, ARM templates, many metric ids)."""
    return (
        f"/subscriptions/{sub}/resourceGroups/{group}/providers/"
        f"Microsoft.StreamAnalytics/streamingjobs/{job}"
    )


def asa_id(group: str, job: str, sub: str = SUB) -> str:
    """A resource id as ASA writes it in resource logs: upper-case."""
    return arm_id(group, job, sub).upper()


def test_a_record_gives_its_key_and_the_casing_it_shows() -> None:
    key = arm_id("rg-west", "myJob").lower()
    assert job_ref(asa_id("rg-west", "myJob")) == JobRef(key, "MYJOB")
    assert job_ref(asa_id("rg-west", "myJob").lower()) == JobRef(key, "MYJOB")  # Log Analytics
    assert job_ref(arm_id("rg-west", "myJob")) == JobRef(key, "myJob")  # ARM keeps the casing
    assert job_ref(arm_id("rg-west", "myjob")) == JobRef(key, "myjob")  # a lower-case name
    # a name given on its own (properties.JobName, "Resource Name:") when it is this job's
    assert job_ref(asa_id("rg-west", "myJob"), "myJob") == JobRef(key, "myJob")
    assert job_ref(asa_id("rg-west", "myJob"), "otherJob") == JobRef(key, "MYJOB")
    # a sub-resource's id names its job; the key stops at the job
    assert job_ref(arm_id("rg-west", "myJob") + "/inputs/telemetry-eh") == JobRef(key, "myJob")
    assert job_ref("MYJOB") == JobRef(None, "MYJOB")  # the CSV Resource column
    assert job_ref("MYJOB", "myJob") == JobRef(None, "myJob")
    assert job_ref(None, "myJob") == JobRef(None, "myJob")
    assert job_ref("  ", None) == JobRef(None, None)


def _resource_log(resource_id: str, n: int, **props: object) -> dict:
    return {"time": "2019-02-04T17:11:52.7250696Z", "resourceId": resource_id,
            "category": "Execution", "level": "Informational",
            "properties": {"Source": "telemetry-eh", "Type": "DataError",
                           "DataErrorType": "LateInputEvent", "EventCount": n,
                           "FromTimestamp": "2019-02-04T17:10:49Z",
                           "ToTimestamp": "2019-02-04T17:11:48Z", **props}}  # fmt: skip


def _activity(resource_name: str, n: int, **extra: object) -> dict:
    return {"message Time": "2019-02-04 17:20:02Z", "type": "DiagnosticMessage",
            "message": f"First Occurred: 02/04/2019 17:20:00 | Resource Name: {resource_name} | "
                       f"Message: Source 'telemetry-eh' had {n} occurrences of kind "
                       "'EarlyInputEvent' between times '2019-02-04T17:19:01Z' and "
                       "'2019-02-04T17:19:58Z'.", **extra}  # fmt: skip


def test_properties_jobname_gives_the_casing_and_a_mistyped_one_is_ignored() -> None:
    record = normalise(_resource_log(asa_id("rg", "ordersJob"), 2, JobName="ordersJob"), "f", 1, "")
    assert isinstance(record, DataError)
    assert (record.job, record.job_id) == ("ordersJob", arm_id("rg", "ordersJob").lower())
    record = normalise(_resource_log(asa_id("rg", "ordersJob"), 2, JobName=7), "f", 1, "")
    assert isinstance(record, DataError)
    assert record.job == "ORDERSJOB"


def two_resource_groups(folder: Path) -> None:
    """One job name in two resource groups, each seen in several casings, a job known by a
    text name only, and metrics of one of them (an az monitor export, ARM-cased id)."""
    west, east = asa_id("rg-west", "ordersJob"), asa_id("rg-east", "ordersJob")
    lines = [
        _resource_log(west, 1),
        _resource_log(east.lower(), 2) | {"resourceId": None, "_ResourceId": east.lower()},
        _resource_log(east, 4),
        _resource_log(west, 8, JobName="ordersJob"),
        {
            "time": "2019-02-04T17:15:00Z",
            "resourceId": west,
            "properties": {
                "Source": "telemetry-eh",
                "Type": "InputPartitionNotProgressing",
                "Message": "Input Partition [2] does not have additional data for more than [5] "
                "minute(s). Partition will not progress until either events arrive or "
                "late arrival threshold is met.",
            },
        },
        _activity("paymentsJob", 16),  # no resource id: a job of its own, by name
        _activity("PAYMENTSJOB", 32),
    ]
    (folder / "PT1H.json").write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    metrics = {"value": [{
        "id": arm_id("rg-east", "ordersJob") + "/providers/Microsoft.Insights/metrics/InputEvents",
        "name": {"value": "InputEvents"},
        "timeseries": [{"metadatavalues": [], "data": [
            {"timeStamp": "2019-02-04T17:11:00Z", "total": 100}]}]}]}  # fmt: skip
    (folder / "metrics.json").write_text(json.dumps(metrics, indent=2))


def test_one_name_in_two_resource_groups_is_two_jobs(tmp_path: Path) -> None:
    two_resource_groups(tmp_path)
    tables = aggregate_files([tmp_path / "PT1H.json"], [tmp_path / "metrics.json"])
    west, east = (arm_id(g, "ordersJob").lower() for g in ("rg-west", "rg-east"))
    # shown under the casing properties.JobName and the ARM-cased metric id give, told
    # apart by resource group; the text-only job keeps its non-upper-case spelling
    assert tables.summary["jobs"] == ["ordersJob (rg-east)", "ordersJob (rg-west)", "paymentsJob"]
    per_job = tables.error_rollup.group_by("job").agg(pl.col("event_count").sum()).sort("job")
    assert per_job.rows() == [
        ("ordersJob (rg-east)", 6), ("ordersJob (rg-west)", 10), ("paymentsJob", 48),
    ]  # fmt: skip
    assert tables.partition_idle.select("job", "partition_id").rows() == [
        ("ordersJob (rg-west)", 2)
    ]
    ids = dict(tables.data_errors.select("job", "job_id").unique().iter_rows())
    assert ids == {"ordersJob (rg-east)": east, "ordersJob (rg-west)": west, "paymentsJob": None}
    assert tables.metrics.select("job", "job_id").rows() == [("ordersJob (rg-east)", east)]


def test_a_record_naming_only_its_job_joins_the_one_job_of_that_name(tmp_path: Path) -> None:
    lines = [
        _resource_log(asa_id("rg", "telemetryJob"), 1),
        _resource_log(asa_id("rg", "telemetryJob").lower(), 2),
        _activity("telemetryJob", 4),
    ]
    path = tmp_path / "PT1H.json"
    path.write_text("\n".join(json.dumps(line) for line in lines))
    tables = aggregate_files([path])
    assert tables.summary["jobs"] == ["telemetryJob"]
    assert set(tables.data_errors["job_id"]) == {arm_id("rg", "telemetryJob").lower()}
    # only upper- and lower-cased ids: the name ASA shows
    path.write_text("\n".join(json.dumps(line) for line in lines[:2]))
    assert aggregate_files([path]).summary["jobs"] == ["TELEMETRYJOB"]


pair = st.tuples(
    st.sampled_from(["rg-a", "rg-b", "RG-A"]),
    st.sampled_from(["sub-1", "sub-2"]),
    st.sampled_from(["myJob", "MYJOB", "myjob", "other", "OTHER"]),
    st.sampled_from(["asa", "loganalytics", "arm", "name-only", "named"]),
)


def _as_read(group: str, sub: str, name: str, how: str) -> JobRef:
    if how == "asa":
        return job_ref(asa_id(group, name, sub))
    if how == "loganalytics":
        return job_ref(asa_id(group, name, sub).lower())
    if how == "arm":
        return job_ref(arm_id(group, name, sub))
    if how == "named":
        return job_ref(asa_id(group, name, sub), name)
    return job_ref(None, name)


@settings(max_examples=300, deadline=None)
@given(seen=st.lists(pair, min_size=1, max_size=12))
def test_resolved_jobs_are_one_name_per_key_and_one_key_per_name(seen: list) -> None:
    refs = [_as_read(*item) for item in seen]
    resolved = resolve_jobs(refs)
    assert set(resolved) == set(refs)
    by_key: dict[str, set[str | None]] = {}
    for ref in refs:
        job_id, shown = resolved[ref]
        assert shown is not None
        assert shown.lower().startswith(ref.name.lower())  # the same name, maybe qualified
        if ref.job_id is not None:
            assert job_id == ref.job_id  # a record's own id is never changed
        key = job_id or f"name:{ref.name.lower()}"
        by_key.setdefault(key, set()).add(shown)
    assert all(len(names) == 1 for names in by_key.values())  # one name per job
    shown_names = [next(iter(names)).lower() for names in by_key.values()]
    assert len(shown_names) == len(set(shown_names))  # two jobs never share a name
    for ref in refs:  # a casing that is not all upper-case wins over ASA's upper case
        same = [r for r in refs if r.job_id is not None and r.job_id == ref.job_id]
        if any(r.name != r.name.upper() for r in same):
            shown = resolved[ref][1]
            assert shown is not None
            assert shown.split(" (")[0] != shown.split(" (")[0].upper()
