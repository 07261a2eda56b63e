"""``orderdoc explain AGG_DIR`` on logs alone: the tolerance flags apply to the logs (no
``--timestamp-by`` needed), flags that cannot apply are one-line errors, an unknown ``--job``
lists the known ones, and the words read right (one event, not "1 events")."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from diagnostics.cli import main
from diagnostics.report.pipeline import write_agg_dir

RID = "/SUBSCRIPTIONS/S/RESOURCEGROUPS/R/PROVIDERS/MICROSOFT.STREAMANALYTICS/STREAMINGJOBS/"
IDLE = "Input Partition [{p}] does not have additional data for more than [{m}] minute(s)."
REAL = Path(__file__).resolve().parents[2] / "sample_logs" / "asa-real"


def _record(job: str, minute: int, **properties: object) -> dict[str, object]:
    return {
        "time": f"2024-03-05T10:{minute:02d}:00Z",
        "resourceId": RID + job,
        "level": "Warning",
        "properties": {"Source": "telemetry", **properties},
    }


@pytest.fixture(scope="module")
def agg(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Job JOBX: partition 3 silent, 2 late events and 1 early one named only by counts
    (no example event), 7 events of a kind orderdoc does not know."""
    folder = tmp_path_factory.mktemp("logs")
    records = [
        _record("JOBX", 10, Type="InputPartitionNotProgressing", Message=IDLE.format(p=3, m=5)),
        _record("JOBX", 11, Type="DataError", DataErrorType="LateInputEvent", EventCount=2),
        _record("JOBX", 12, Type="DataError", DataErrorType="EarlyInputEvent", EventCount=1),
        _record("JOBX", 13, Type="DataError", DataErrorType="SomeNewKind.Foo", EventCount=7),
    ]
    log = folder / "PT1H.json"
    log.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    write_agg_dir([log], [], folder / "agg")
    return folder / "agg"


def _json(capsys: pytest.CaptureFixture[str], argv: list[str]) -> dict:
    assert main([*argv, "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def _finding(report: dict, cause: str) -> dict:
    return next(f for f in report["findings"] if f["cause"] == cause)


def test_the_late_arrival_flag_applies_to_logs_without_timestamp_by(
    agg: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    default = _json(capsys, ["explain", str(agg)])
    assert default["policy"] is None
    assert default["tolerances"] == [
        "job JOBX: tolerances not given, ASA's defaults assumed (late arrival 5 s, out of "
        "order 0 s, Adjust); pass --job-definition, or --late-arrival and --out-of-order"
    ]
    idle = _finding(default, "idle_partition")
    assert idle["impact"]["delay"] == (
        "the late-arrival tolerance: 5 s (ASA's default, assumed; the job's own was not given: "
        "pass --job-definition, or --late-arrival and --out-of-order)"
    )
    late = _finding(default, "late_arrivals")
    assert late["title"] == (
        "2 events arrived later than the late-arrival tolerance (5 s, ASA's default, assumed)"
    )
    assert late["evidence"]["tolerances_assumed"] is True
    given = _json(capsys, ["explain", str(agg), "--late-arrival", "10s"])
    assert given["policy"] == (
        "late 10s, out-of-order 0s, adjust (as given, to read the logs; TIMESTAMP BY column "
        "not given)"
    )
    idle = _finding(given, "idle_partition")
    assert (idle["impact"]["delay"], idle["impact"]["delay_seconds"]) == (
        "the late-arrival tolerance: 10 s",
        10.0,
    )
    late = _finding(given, "late_arrivals")
    assert late["title"] == "2 events arrived later than the late-arrival tolerance (10 s)"
    assert late["evidence"]["current_late_tolerance_seconds"] == 10
    assert "tolerances_assumed" not in late["evidence"]
    assert given["tolerances"] == []


def test_the_other_tolerance_flags_apply_too(agg: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["explain", str(agg), "--out-of-order", "3s", "--action", "drop", "--partition-by"]
    report = _json(capsys, argv)
    assert report["policy"].startswith("late 5s, out-of-order 3s, drop, PARTITION BY PartitionId")
    idle = _finding(report, "idle_partition")
    # PARTITION BY is already on: only the senders are left to fix
    assert [s["kind"] for s in idle["suggestions"]] == ["feed_all_partitions"]
    unlimited = _json(capsys, ["explain", str(agg), "--late-arrival", "unlimited"])
    idle = _finding(unlimited, "idle_partition")
    assert idle["impact"]["delay"] == "unlimited: output waits until the partition sends again"


@pytest.mark.parametrize(
    ("flags", "error"),
    [
        (
            ["--no-early-policy"],
            "--no-early-policy is a what-if of a replay, so it needs --events CAPTURE",
        ),
        (
            ["--partitions", "4"],
            "--partitions declares the capture's partitions, so it needs --events CAPTURE",
        ),
        (
            ["--late-arrival", "10s", "--over", "device"],
            "TIMESTAMP BY ... OVER needs a TIMESTAMP BY column (use --timestamp-by)",
        ),
    ],
    ids=["no-early-policy", "partitions", "over"],
)
def test_flags_that_cannot_apply_to_logs_are_one_line_errors(
    agg: Path, capsys: pytest.CaptureFixture[str], flags: list[str], error: str
) -> None:
    assert main(["explain", str(agg), *flags]) == 2
    captured = capsys.readouterr()
    assert captured.err.splitlines() == [f"orderdoc explain: error: {error}"]
    assert captured.out == ""


def test_an_unknown_job_is_an_error_listing_the_known_ones(
    agg: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["explain", str(agg), "--job", "nosuch"]) == 2
    captured = capsys.readouterr()
    assert captured.err.splitlines() == [
        f"orderdoc explain: error: job name 'nosuch' is not in the aggregate folder {agg}; "
        "its jobs: JOBX (use --job)"
    ]
    assert captured.out == ""
    assert main(["explain", str(agg), "--job", "jobx"]) == 0  # names compare ignoring case
    assert "Job JOBX:" in capsys.readouterr().out


def test_an_unknown_data_error_kind_is_a_finding(
    agg: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    unknown = _finding(_json(capsys, ["explain", str(agg)]), "unknown_data_errors")
    assert unknown["severity"] == "warning"
    assert unknown["title"] == (
        "7 events of a data-error kind orderdoc does not know: SomeNewKind.Foo (7 events)"
    )
    assert unknown["evidence"]["events_by_kind"] == {"SomeNewKind.Foo": 7}
    assert unknown["impact"]["events_affected"] == 7
    assert unknown["suggestions"][0]["kind"] == "inspect_records"
    assert main(["explain", str(agg)]) == 0
    text = capsys.readouterr().out
    assert "impact: 7 events reported, fate unknown." in text


def test_late_events_without_an_example_say_how_to_size_the_tolerance(
    agg: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    late = _finding(_json(capsys, ["explain", str(agg)]), "late_arrivals")
    assert late["evidence"]["lateness"]["from"].startswith("not measured: no log record")
    assert "fix_adds_release_delay_seconds" not in late["impact"]
    (suggestion,) = late["suggestions"]
    assert suggestion["kind"] == "measure_lateness"
    # the library says what to do; the command line adds the flags that do it
    assert suggestion["snippet"].endswith(
        "explain it with the capture and its TIMESTAMP BY column, which sizes the tolerance "
        "to the 99.9th percentile of the events' lateness; or aggregate the job's resource "
        "logs (diagnostic setting, category Execution), whose data-error records carry an "
        "example event (use --events, --timestamp-by)"
    )
    assert main(["explain", str(agg)]) == 0
    text = capsys.readouterr().out
    assert "lateness: not measured: no log record carries an example event" in text
    assert "lateness: ," not in text
    assert "early by: not measured" in text
    assert "indefinitely" not in text
    assert "- measure first: Measure the lateness before changing Events that arrive late" in text


def test_counts_of_one_read_in_the_singular(agg: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", str(agg)]) == 0
    printed = capsys.readouterr().out
    assert printed.startswith("orderdoc explain: 4 findings from logs\n")
    text = " ".join(printed.split())  # the terminal text is wrapped
    assert "Job JOBX: 1 event was dropped for arriving more than 5 minutes early" in text
    assert "1 event adjusted or dropped; 1 of them dropped." in text
    assert "Job JOBX: Input partition 3 stopped sending (5 idle minutes)" in text
    assert "(5 min, 1 notice)" in text
    assert "over 1 minute" in text
    assert not re.search(r"(?<![\d,])1 events", printed)
    assert "(s)" not in printed
    assert main(["explain", str(agg), "--job", "JOBX", "--format", "markdown"]) == 0
    assert not re.search(r"(?<![\d,])1 events", capsys.readouterr().out)


def test_metrics_alone_are_not_called_logs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_agg_dir([], [REAL / "az-monitor-metrics.json"], tmp_path / "agg")
    report = _json(capsys, ["explain", str(tmp_path / "agg")])
    assert report["sources"] == ["metrics"]
    assert main(["explain", str(tmp_path / "agg")]) == 0
    assert capsys.readouterr().out.startswith("orderdoc explain: 4 findings from metrics\n")


def test_tolerances_beside_an_arrival_time_definition_are_an_error(
    agg: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    definition = tmp_path / "job.json"
    definition.write_text(
        json.dumps(
            {
                "name": "arrivaljob",
                "jobId": "x",
                "eventsOutOfOrderPolicy": "Adjust",
                "inputs": [{"name": "telemetry", "properties": {"type": "Stream"}}],
                "transformation": {"query": "SELECT * INTO o FROM telemetry"},
            }
        ),
        encoding="utf-8",
    )
    argv = ["explain", str(agg), "--job-definition", str(definition)]
    assert main([*argv, "--late-arrival", "10s"]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("orderdoc explain: error: --late-arrival: the query of job arrivaljob")
    assert line.endswith(
        "reads the input on arrival time (no TIMESTAMP BY), so no ordering policy applies; "
        "give --timestamp-by COL or remove them"
    )
    assert main(argv) == 0  # the definition alone: its logs read against ASA's defaults
    replay = ["replay", str(tmp_path / "cap.csv"), "--out", str(tmp_path / "o")]
    (tmp_path / "cap.csv").write_text("arrival_time,v\n2024-01-01T00:00:00Z,1\n")
    capsys.readouterr()
    assert main([*replay, "--job-definition", str(definition), "--action", "drop"]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("orderdoc replay: error: --action: the query of job arrivaljob")
    assert "where no tolerance or early-arrival rule applies" in line


def test_the_command_line_adds_the_flags_of_a_suggestions_settings() -> None:
    from diagnostics.cli.flags import with_flags
    from diagnostics.explain.model import Cause, Finding, Report
    from diagnostics.explain.snippets import late_tolerance, measure_disorder
    from diagnostics.kinds import Severity

    measure = measure_disorder("event_time")
    assert "--" not in measure.snippet  # the library names what to do, not flags
    finding = Finding(
        cause=Cause.OUT_OF_ORDER,
        title="t",
        severity=Severity.WARNING,
        confidence=1.0,
        explanation="e",
        suggestions=(measure, late_tolerance(5)),
    )
    (shown,) = with_flags(Report(findings=[finding], sources=(), policy=None)).findings
    assert shown.suggestions[0].snippet == (
        "The out-of-order tolerance is already as large as the late-arrival tolerance lets it "
        "act: capture the input and explain it with the capture and its TIMESTAMP BY column "
        "(event_time), which measures how far out of order the events are and finds a sender "
        "column for TIMESTAMP BY ... OVER (use --events, --timestamp-by)"
    )
    assert shown.suggestions[1] == late_tolerance(5)  # no settings: as the library says it
