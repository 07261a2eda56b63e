"""Passes over growing files: the tables always equal one ``orderdoc aggregate`` of the files."""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest

from diagnostics.logs.inputs import expand_inputs
from diagnostics.rules.loader import load_rules
from diagnostics.spark.job import run_aggregate
from diagnostics.spark.session import settings_set
from diagnostics.watch import compaction, passes
from diagnostics.watch.jobs import JobStore
from diagnostics.watch.runner import ADAPTIVE, EvaluateAt, WatchConfig, Watcher
from tests.spark.conftest import canonical, read_table
from tests.spark.test_job import COLUMNS

pytestmark = pytest.mark.spark

RULES = Path(__file__).resolve().parents[2] / "rules"
NOW = datetime(2024, 3, 6, 12, 0, tzinfo=UTC)


def watcher(spark, logs: Path, state: Path) -> Watcher:
    config = WatchConfig(folders=(logs,), state=state, once=True, evaluate_at=EvaluateAt.DATA_END)
    return Watcher(spark, config, load_rules([RULES]), clock=lambda: NOW, say=print)


def assert_equals_one_shot(spark, logs: Path, agg: Path, tmp: Path) -> None:
    files = expand_inputs([str(logs)])
    one_shot = tmp / "one-shot"
    expected = run_aggregate(spark, files, one_shot)
    summary = json.loads((agg / "summary.json").read_text())
    assert summary == expected.summary
    for table, columns in COLUMNS.items():
        if not (one_shot / table).exists():
            assert not (agg / table).exists(), table
            continue
        assert canonical(read_table(agg / table), columns) == canonical(
            read_table(one_shot / table), columns
        ), table
    shutil.rmtree(one_shot)


def test_growing_files_equal_one_shot(spark, samples: Path, tmp_path: Path) -> None:
    logs, state = tmp_path / "logs", tmp_path / "state"
    (logs / "h12").mkdir(parents=True)
    lines = (samples / "PT1H.json").read_bytes().splitlines(keepends=True)
    live = logs / "h12" / "PT1H.json"
    live.write_bytes(b"".join(lines[:2]))
    shutil.copy(samples / "loganalytics-azurediagnostics.csv", logs / "export.csv")
    shutil.copy(samples / "bare-array.json", logs / "bare-array.json")
    # names Spark's file source skips and orderdoc aggregate reads (``_``), and hidden ones
    for folder in ("_old", ".hidden"):
        (logs / folder).mkdir()
        shutil.copy(samples / "PT1H.json", logs / folder / "PT1H.json")
    w = watcher(spark, logs, state)

    first = w.tick()
    assert first.passes == (1,)
    known = {f["path"] for f in json.loads((state / "manifest.json").read_text())["files"]}
    assert str((logs / "_old" / "PT1H.json").resolve()) in known
    assert not any("/.hidden/" in path for path in known)
    assert_equals_one_shot(spark, logs, state / "agg", tmp_path)

    # appended lines (the last one still being written), a new gzip file, a new folder
    partial = lines[4][: len(lines[4]) // 2]
    live.write_bytes(b"".join(lines[:4]) + partial)
    (logs / "h13").mkdir()
    shutil.copy(samples / "PT1H-archive.json.gz", logs / "h13" / "PT1H-archive.json.gz")
    shutil.copy(samples / "mixed-malformed.json", logs / "h13" / "PT1H.json")
    second = w.tick()
    assert second.passes == (2,)  # one batch of new files; its pass also reads the growth
    manifest = json.loads((state / "manifest.json").read_text())
    followed = {f["path"]: f for f in manifest["files"]}[str(live.resolve())]
    assert followed["offset"] == len(b"".join(lines[:4]))  # the partial line waits
    # the one-shot reads the half-written line as it is now: compare once it is complete

    live.write_bytes(b"".join(lines))
    export = (logs / "export.csv").read_text(encoding="utf-8")
    (logs / "export.csv").write_text(export + export.splitlines()[1] + "\n", encoding="utf-8")
    third = w.tick()
    assert third.passes == (3,)  # no new file: the pass after the query
    assert_equals_one_shot(spark, logs, state / "agg", tmp_path)

    # nothing changed: no pass, the table files untouched
    before = {p: p.stat().st_mtime_ns for p in (state / "agg").rglob("*") if p.is_file()}
    # the streaming query starts with adaptive execution off (Spark warns at every tick
    # otherwise); the session keeps its own setting
    with settings_set(spark, {ADAPTIVE: "true"}):
        assert w.tick().passes == ()
        assert spark.conf.get(ADAPTIVE) == "true"
    after = {p: p.stat().st_mtime_ns for p in (state / "agg").rglob("*") if p.is_file()}
    assert after == before


def test_deleted_inputs_failed_passes_and_a_corrupt_checkpoint(
    spark, samples: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A metrics file read and then rotated away keeps its rows; a Spark job failing in a pass
    (the new-files batch or the appended lines) is one warning and the pass is redone on the
    next tick; a corrupt checkpoint is rebuilt without reading anything twice."""
    logs, state = tmp_path / "logs", tmp_path / "state"
    (logs / "h10").mkdir(parents=True)
    real = samples.parent / "asa-real"
    lines = (real / "PT1H.json").read_bytes().splitlines(keepends=True)
    live = logs / "h10" / "PT1H.json"
    live.write_bytes(b"".join(lines[:3]))
    metrics_file = logs / "az-monitor-metrics.json"
    shutil.copy(real / "az-monitor-metrics.json", metrics_file)
    said: list[str] = []
    config = WatchConfig(folders=(logs,), state=state, once=True, evaluate_at=EvaluateAt.DATA_END)
    w = Watcher(spark, config, load_rules([RULES]), clock=lambda: NOW, say=said.append)
    assert w.tick().problems == ()
    engine = canonical(read_table(state / "agg" / "metrics"), COLUMNS["metrics"])

    # rotated away, then lines appended: the pass works and the metrics rows stay
    metrics_file.unlink()
    live.write_bytes(b"".join(lines[:4]))
    report = w.tick()
    assert (report.passes, report.problems) == ((2,), ())
    assert canonical(read_table(state / "agg" / "metrics"), COLUMNS["metrics"]) == engine

    # a Spark job fails while the derived tables are made: for appended lines, then for a new
    # file (in foreachBatch); one line each, the plan kept, nothing committed
    original = passes.derive

    def failing(*args, **kwargs):  # type: ignore[no-untyped-def]
        spark.read.parquet(str(tmp_path / "no-such-table")).collect()

    monkeypatch.setattr(passes, "derive", failing)
    live.write_bytes(b"".join(lines[:5]))
    for step in ("appended", "new file"):
        if step == "new file":
            (logs / "h11").mkdir()
            shutil.copy(real / "PT1H.json", logs / "h11" / "PT1H.json")
        report = w.tick()
        assert report.passes == ()
        [problem] = report.problems
        assert problem.startswith("pass failed: AnalysisException: [PATH_NOT_FOUND] "), problem
        assert "no-such-table" in problem
        assert problem.endswith("(retried next tick)")
        assert (state / "plan.json").exists()
        assert json.loads((state / "manifest.json").read_text())["passes"] == 2
    monkeypatch.setattr(passes, "derive", original)
    report = w.tick()  # redone: the plan, then the new file handed over again
    assert report.problems == ()
    assert report.passes == (3, 4)
    assert not (state / "plan.json").exists()

    # a corrupt checkpoint: rebuilt when the watcher starts; the files it lists again are
    # known to the manifest, so only the new one is read
    (state / "checkpoint" / "metadata").write_text("garbage\n", encoding="utf-8")
    said.clear()
    w = Watcher(spark, config, load_rules([RULES]), clock=lambda: NOW, say=said.append)
    [warning] = [m for m in said if m.startswith("warning:")]
    assert "checkpoint/metadata: corrupt streaming checkpoint" in warning
    assert "rebuilt it" in warning
    (logs / "h12").mkdir()
    shutil.copy(real / "PT1H.json", logs / "h12" / "PT1H.json")
    live.write_bytes(b"".join(lines))
    shutil.copy(real / "az-monitor-metrics.json", metrics_file)  # back, for the comparison
    report = w.tick()
    assert report.problems == ()
    assert report.passes == (5,)
    assert_equals_one_shot(spark, logs, state / "agg", tmp_path)


def _line(resource_id: str | None, minute: int, n: int = 1, **props: object) -> bytes:
    """A resource log record of ``resource_id`` (or, with ``resource_id`` None, an activity-log
    message naming ``props['name']`` only) as one JSON line."""
    if resource_id is None:
        name = props["name"]
        record: dict = {
            "message Time": f"2019-02-04 17:{minute:02d}:02Z", "type": "DiagnosticMessage",
            "message": f"First Occurred: 02/04/2019 17:{minute:02d}:00 | Resource Name: {name} "
                       f"| Message: Source 'telemetry-eh' had {n} occurrences of kind "
                       f"'EarlyInputEvent' between times '2019-02-04T17:{minute - 1:02d}:01Z' "
                       f"and '2019-02-04T17:{minute - 1:02d}:58Z'.",
        }  # fmt: skip
    elif props.get("idle"):
        record = {"time": f"2019-02-04T17:{minute:02d}:00Z", "resourceId": resource_id,
                  "properties": {"Source": "telemetry-eh", "Type": "InputPartitionNotProgressing",
                                 "Message": "Input Partition [2] does not have additional data "
                                 "for more than [5] minute(s). Partition will not progress "
                                 "until either events arrive or late arrival threshold is "
                                 "met."}}  # fmt: skip
    else:
        record = {"time": f"2019-02-04T17:{minute:02d}:52Z", "resourceId": resource_id,
                  "category": "Execution", "level": "Informational",
                  "properties": {"Source": "telemetry-eh", "Type": "DataError",
                                 "DataErrorType": "LateInputEvent", "EventCount": n,
                                 "FromTimestamp": f"2019-02-04T17:{minute - 1:02d}:49Z",
                                 "ToTimestamp": f"2019-02-04T17:{minute:02d}:48Z", **props}}  # fmt: skip
    return (json.dumps(record) + "\n").encode()


def _pass_files(agg: Path, *numbers: int) -> dict[Path, int]:
    """The data_errors files of passes ``numbers`` and their modification times."""
    tags = tuple(f"p{n:08d}-" for n in numbers)
    files = (agg / "data_errors").rglob("*.parquet")
    return {p: p.stat().st_mtime_ns for p in files if p.name.startswith(tags)}


@pytest.mark.parametrize("compacted", [False, True], ids=["passes", "compacted"])
def test_jobs_spelled_differently_over_passes_equal_one_shot(
    spark, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, compacted: bool
) -> None:
    """A job known first by ASA's upper-case id takes the casing a later record gives it, a
    record naming only the job joins it and leaves it when a second resource group has a job
    of that name, a rewritten file takes its spellings away; after every pass the tables are
    those of one aggregate, and a pass that changes no job rewrites no earlier file. The same
    when the passes' files are compacted after every pass (their job files merged)."""
    from tests.logs.test_jobs import arm_id, asa_id

    if compacted:
        monkeypatch.setattr(compaction, "EVERY", 1)

    logs, state = tmp_path / "logs", tmp_path / "state"
    agg = state / "agg"
    west, east = asa_id("rg-west", "myStreamingJob"), asa_id("rg-east", "myStreamingJob")
    live = logs / "h10" / "PT1H.json"
    live.parent.mkdir(parents=True)
    first = _line(west, 10, 1) + _line(west, 11, idle=True) + _line(west, 12, 2)
    live.write_bytes(first)
    w = watcher(spark, logs, state)

    assert w.tick().passes == (1,)
    assert json.loads((agg / "summary.json").read_text())["jobs"] == ["MYSTREAMINGJOB"]
    assert_equals_one_shot(spark, logs, agg, tmp_path)

    # the real casing (properties.JobName) and a message naming only the job, in one file
    with live.open("ab") as out:
        out.write(_line(west, 13, 4, JobName="myStreamingJob"))
        out.write(_line(None, 14, 8, name="myStreamingJob"))
    assert w.tick().passes == (2,)
    assert any("-named-" in p.name for p in _pass_files(agg, 2))
    errors = read_table(agg / "data_errors")
    assert set(errors["job"]) == {"myStreamingJob"}
    assert set(errors["job_id"]) == {arm_id("rg-west", "myStreamingJob").lower()}
    assert_equals_one_shot(spark, logs, agg, tmp_path)

    # nothing new about the job: the earlier passes' files are not rewritten
    before = _pass_files(agg, 1, 2)
    with live.open("ab") as out:
        out.write(_line(west, 15, 16))
    assert w.tick().passes == (3,)
    if not compacted:
        assert _pass_files(agg, 1, 2) == before
    else:  # one file per folder and kind, one job file
        assert len(JobStore(state / "jobs").numbers()) == 1
        assert {p.name for p in (agg / "data_errors").rglob("*.parquet")} == {
            "p00000003-compacted.parquet", "p00000003-named-compacted.parquet"
        }  # fmt: skip
    assert_equals_one_shot(spark, logs, agg, tmp_path)

    # the same job name in a second resource group, with metrics under an ARM-cased id: both
    # jobs are told apart by resource group, and the message naming only the name leaves;
    # the pass fails once after its rows were written (the earlier ones not yet rewritten)
    # and is redone on the next tick
    (logs / "h11").mkdir()
    (logs / "h11" / "PT1H.json").write_bytes(_line(east, 16, 32))
    metrics = {"value": [{
        "id": arm_id("rg-east", "myStreamingJob") + "/providers/Microsoft.Insights/metrics/x",
        "name": {"value": "InputEvents"},
        "timeseries": [{"metadatavalues": [], "data": [
            {"timeStamp": "2019-02-04T17:16:00Z", "total": 100}]}]}]}  # fmt: skip
    (logs / "metrics.json").write_text(json.dumps(metrics), encoding="utf-8")

    def fail_once(step: str) -> None:
        if step == "written":
            w.hook = lambda _step: None
            raise RuntimeError("killed")

    w.hook = fail_once
    assert w.tick().passes == ()
    assert (state / "plan.json").exists()
    assert w.tick().problems == ()
    summary = json.loads((agg / "summary.json").read_text())
    assert summary["jobs"] == [
        "myStreamingJob", "myStreamingJob (rg-east)", "myStreamingJob (rg-west)"
    ]  # fmt: skip
    assert_equals_one_shot(spark, logs, agg, tmp_path)

    # the file that gave the casing is rewritten without those lines: its rows and their
    # spellings go, and the job is shown as ASA names it again
    live.write_bytes(first)
    w.tick()
    summary = json.loads((agg / "summary.json").read_text())
    assert summary["jobs"] == ["MYSTREAMINGJOB (rg-west)", "myStreamingJob (rg-east)"]
    assert_equals_one_shot(spark, logs, agg, tmp_path)


def test_data_end_with_only_unreadable_records_waits_instead_of_failing(
    spark, tmp_path: Path
) -> None:
    """--evaluate-at data-end on a folder whose records were all quarantined: the data's end is
    not known yet, so the tick says the rules were not evaluated and goes on (it stopped the
    watcher with exit 2 before); the records are in the quarantine table."""
    logs = tmp_path / "logs" / "y=2024" / "m=03" / "d=05" / "h=10"
    logs.mkdir(parents=True)
    (logs / "PT1H.json").write_bytes(b'\x00\xff not a record\n{"time": \n')
    report = watcher(spark, tmp_path / "logs", tmp_path / "state").tick()
    assert report.evaluated_at is None
    assert any(
        p.startswith("rules not evaluated: no record read so far has a time")
        for p in report.problems
    ), report.problems
    quarantine = read_table(tmp_path / "state" / "agg" / "quarantine")
    assert quarantine.height == 2


def test_once_says_which_files_end_in_an_unfinished_line(spark, tmp_path: Path, capsys) -> None:
    """A pass reads complete lines only: with --once the unfinished last line is left for a
    later run, and the run says so (naming the file and its bytes) instead of saying nothing."""
    logs = tmp_path / "logs" / "y=2019" / "m=02" / "d=04" / "h=17"
    logs.mkdir(parents=True)
    cut = _line("/JOBS/A", 10)[:40]
    (logs / "PT1H.json").write_bytes(_line("/JOBS/A", 5) + cut)
    watcher(spark, tmp_path / "logs", tmp_path / "state").run(lambda _s: None)
    said = capsys.readouterr().out
    assert (
        f"{logs / 'PT1H.json'}: its last 40 bytes are not a complete line yet; a later pass "
        "reads them once the line is complete"
    ) in said
    assert read_table(tmp_path / "state" / "agg" / "data_errors").height == 1


def test_job_lifecycle_records_are_job_events_as_in_one_shot(spark, tmp_path: Path) -> None:
    """Authoring and activity-log lifecycle records read over passes: job events joined to
    the job of the data errors, counted as parsed, nothing quarantined, as one aggregate."""
    real = Path(__file__).resolve().parents[2] / "sample_logs" / "asa-real"
    logs, state = tmp_path / "logs", tmp_path / "state"
    (logs / "h17").mkdir(parents=True)
    authoring = (real / "authoring-PT1H.json").read_bytes().splitlines(keepends=True)
    live = logs / "h17" / "authoring.json"
    live.write_bytes(authoring[0])
    shutil.copy(real / "PT1H.json", logs / "h17" / "PT1H.json")
    w = watcher(spark, logs, state)
    assert w.tick().problems == ()
    assert_equals_one_shot(spark, logs, state / "agg", tmp_path)

    live.write_bytes(b"".join(authoring))  # appended lines, and the portal's export
    shutil.copy(real / "activity-log-portal.json", logs / "activity.json")
    assert w.tick().problems == ()
    assert_equals_one_shot(spark, logs, state / "agg", tmp_path)
    summary = json.loads((state / "agg" / "summary.json").read_text())
    assert (summary["job_events"], summary["records_quarantined"]) == (5, 0)
    events = read_table(state / "agg" / "job_events")
    assert set(events["job"]) == {"MYSTREAMINGJOB"}
