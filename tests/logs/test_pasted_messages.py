"""A message pasted from the portal's JSON view is a record (issue 24, point 1).

Users copy one member of an activity-log object (``"Message": "First Occurred: ... |
Message: Source 'X' had 1 occurrences of kind 'K' between processing times 'A' and 'B'. "``),
with its trailing comma or not, or its bare string, into a text file. The line is not a JSON
document, yet it carries an ASA message: it is read as the text notification it is, with its
count and times. The Spark job parses lines with the same functions; its equality with this
reference on these lines is tested in tests/spark/test_job.py.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from diagnostics.logs.aggregate import aggregate_files
from diagnostics.logs.records import DataError

UTC = dt.UTC
#: The line as a user pasted it (issue 24), key and all, without the trailing comma.
LINE = (
    '"Message": "First Occurred: 06/02/2020 16:47:26 | Resource Name: X | Message: Source \'X\' '
    "had 1 occurrences of kind 'OutputDataConversionError.TypeConversionError' between "
    "processing times '2020-06-02T16:47:26.9059077Z' and '2020-06-02T16:47:26.9215736Z'. \""
)
BARE = LINE.removeprefix('"Message": ')
#: The four ways the member is pasted: with or without its key, with or without its comma.
VARIANTS = {
    "member": LINE,
    "member,": LINE + ",",
    "string": BARE,
    "string,": BARE + ",",
}
IDLE_LINE = (
    '"Message": "First Occurred: 02/04/2019 17:11:48 | Resource Name: ASAjob | Message: Input '
    'Partition [2] does not have additional data for more than [5] minute(s).",'
)
DATA_ERRORS_LINE = (
    "Source 'in' had 24 data errors of kind 'InputDeserializerError.InvalidData' between "
    "processing times '2019-02-04T17:05:00Z' and '2019-02-04T17:06:00Z'."
)
NOTE = "copied from the portal on Tuesday"
JSON_RECORD = json.dumps({
    "time": "2019-02-04T17:10:49Z",
    "resourceId": "/SUBSCRIPTIONS/S/RESOURCEGROUPS/R/PROVIDERS/MICROSOFT.STREAMANALYTICS/STREAMINGJOBS/J",
    "properties": {"Source": "in", "Type": "DataError", "DataErrorType": "LateInputEvent",
                   "EventCount": 3, "FromTimestamp": "2019-02-04T17:10:00Z",
                   "ToTimestamp": "2019-02-04T17:10:49Z"},
})  # fmt: skip


def assert_the_pasted_record(record: DataError, line: int) -> None:
    """The facts the pasted message states: its count, kind, times, source and job."""
    assert record.source_line == line
    assert record.kind == "OutputDataConversionError.TypeConversionError"
    assert (record.event_count, record.count_known) == (1, True)
    assert record.from_time == dt.datetime(2020, 6, 2, 16, 47, 26, 905907, tzinfo=UTC)
    assert record.to_time == dt.datetime(2020, 6, 2, 16, 47, 26, 921573, tzinfo=UTC)
    assert record.record_time == record.to_time  # a text record is placed at its range's end
    assert (record.source, record.job) == ("X", "X")


@pytest.mark.parametrize("name", ["pasted.txt", "pasted.json"])
@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_the_pasted_line_alone_is_a_record(read, variant: str, name: str) -> None:
    parsed, bad = read((VARIANTS[variant] + "\n").encode(), name)
    assert bad == []
    (record,) = parsed
    assert_the_pasted_record(record, 1)


@pytest.mark.parametrize("name", ["pasted.txt", "pasted.json"])
@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_the_pasted_line_among_text_and_json_lines(read, variant: str, name: str) -> None:
    """After a note (a text file) and after a JSON record (JSON Lines) alike."""
    for first in (NOTE, JSON_RECORD):
        data = "\n".join([first, VARIANTS[variant], "", VARIANTS[variant]]).encode()
        parsed, bad = read(data, name)
        pasted = [r for r in parsed if r.kind != "LateInputEvent"]
        assert len(pasted) == 2
        assert_the_pasted_record(pasted[0], 2)
        assert_the_pasted_record(pasted[1], 4)
        if first == NOTE:
            assert [(q.source_line, q.reason) for q in bad] == [
                (1, "a text line that is neither JSON nor an ASA message")
            ]
        else:
            assert bad == []
            assert [(r.source_line, r.event_count) for r in parsed[:1]] == [(1, 3)]


def test_the_other_wordings_pasted(read) -> None:
    """An idle partition's message (dated by its First Occurred) and the data-errors
    wording, pasted the same ways."""
    lines = [IDLE_LINE, DATA_ERRORS_LINE, json.dumps(DATA_ERRORS_LINE) + ","]
    parsed, bad = read("\n".join(lines).encode(), "pasted.txt")
    assert bad == []
    idle, errors, quoted = parsed
    assert (idle.kind, idle.partition_id, idle.idle_minutes, idle.event_count, idle.job) == (
        "InputPartitionNotProgressing", 2, 5, 1, "ASAjob"
    )  # fmt: skip
    assert idle.record_time == dt.datetime(2019, 2, 4, 17, 11, 48, tzinfo=UTC)
    for record in (errors, quoted):
        assert (record.kind, record.event_count, record.source) == (
            "InputDeserializerError.InvalidData", 24, "in"
        )  # fmt: skip
        assert record.record_time == dt.datetime(2019, 2, 4, 17, 6, tzinfo=UTC)


def test_only_lines_that_carry_nothing_known_are_quarantined(read) -> None:
    escaped = LINE.replace("'X'", "\\u0027X\\u0027")  # JSON escapes in the pasted string
    lines = [
        '"Type": "DiagnosticMessage",',
        escaped,
        "\"Message\": \"Source 'X' had 1 occurrences of kind 'K'\",",  # no date at all
        "[17:25:00] Job started.",
    ]
    parsed, bad = read("\n".join(lines).encode(), "pasted.txt")
    assert [r.source_line for r in parsed] == [2]
    assert_the_pasted_record(parsed[0], 2)
    assert [(q.source_line, q.reason.split(" (")[0]) for q in bad] == [
        (1, "a pasted JSON member that carries no ASA message"),
        (3, "message: an ASA message as text without a date"),
        (4, "a text line with a portal notification's clock but not its wording"),
    ]


def write_pasted(folder: Path) -> int:
    """``pasted.txt`` and ``pasted.json`` in ``folder``: the four variants of the pasted line
    in each, after a note line; returns the number of records they hold (notes included)."""
    for name in ("pasted.txt", "pasted.json"):
        (folder / name).write_text("\n".join([NOTE, *VARIANTS.values()]) + "\n")
    return 2 * (1 + len(VARIANTS))


def test_the_polars_reference_aggregates_the_pasted_lines(tmp_path: Path) -> None:
    total = write_pasted(tmp_path)
    tables = aggregate_files(sorted(str(p) for p in tmp_path.iterdir()))
    summary = tables.summary
    assert (summary["records_total"], summary["records_quarantined"]) == (total, 2)
    assert summary["events_by_kind"] == {"OutputDataConversionError.TypeConversionError": 8}
    assert summary["jobs"] == ["X"]
    rows = tables.data_errors.sort("source_file", "source_line")
    assert rows["source_line"].to_list() == [2, 3, 4, 5] * 2
    assert set(rows["to_time"].to_list()) == {
        dt.datetime(2020, 6, 2, 16, 47, 26, 921573, tzinfo=UTC)
    }
    assert tables.quarantine["source_line"].to_list() == [1, 1]
