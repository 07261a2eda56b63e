"""The summary ``orderdoc aggregate`` prints: known counts, and how many records named none."""

from __future__ import annotations

from pathlib import Path

from diagnostics.cli.aggregate import format_summary
from diagnostics.logs.aggregate import aggregate_files
from diagnostics.logs.inputs import expand_inputs

REAL = Path(__file__).resolve().parents[2] / "sample_logs" / "asa-real"


def test_summary_shows_records_without_a_count_as_at_least() -> None:
    files = expand_inputs([str(REAL)])
    summary = aggregate_files(files.logs, files.metrics).summary
    text = format_summary(summary, Path("agg"))
    lines = {line.split()[0]: line for line in text.splitlines() if line.startswith("  ")}
    assert lines["InputDeserializerError.InvalidData"].split() == [
        "InputDeserializerError.InvalidData", "7", "+", "1", "record(s)", "without", "a",
        "count", "(at", "least", "8)",
    ]  # fmt: skip
    assert lines["LateInputEvent"].split() == ["LateInputEvent", "33"]
    assert "jobs: MYSTREAMINGJOB" in text
