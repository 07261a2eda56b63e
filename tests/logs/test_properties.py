"""Hypothesis: nothing is lost, whatever the bytes (records_total == parsed + quarantined)."""

from __future__ import annotations

import datetime as dt
import gzip
import json
from collections import Counter

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from diagnostics.logs.reader import read_records
from diagnostics.logs.records import DataError, Quarantined

GOOD = json.dumps(
    {
        "time": "2024-01-01T00:01:00Z",
        "resourceId": "/x/STREAMINGJOBS/J",
        "properties": {"Type": "DataError", "DataErrorType": "LateInputEvent", "EventCount": 2},
    }
).encode()

json_scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text()
json_values = st.recursive(
    json_scalars,
    lambda inner: st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=10,
)
wrong_types = st.builds(
    lambda key, value: json.dumps(
        {
            "time": "2024-01-01T00:00:00Z",
            "properties": {"DataErrorType": "LateInputEvent", key: value},
        }
    ).encode(),
    st.sampled_from(["EventCount", "Source", "FromTimestamp", "Type", "DataErrorType"]),
    json_scalars,
)
garbage_line = st.one_of(
    st.binary(max_size=60).map(lambda b: b"x" + b.replace(b"\n", b"")),  # not JSON
    st.integers(1, len(GOOD) - 1).map(lambda n: GOOD[:n]),  # truncated JSON
    st.just(b'{"a": "\xff\xfe"}'),  # invalid UTF-8
    json_values.map(lambda v: json.dumps({"v": v}).encode()),  # valid JSON, not a diagnostic
    wrong_types,
    st.just(GOOD),
    st.sampled_from([b"", b"  ", b"\r", b"\t \r"]),  # blank lines
)


def count(outcomes: list) -> tuple[int, int]:
    good = sum(isinstance(o, DataError) for o in outcomes)
    bad = sum(isinstance(o, Quarantined) for o in outcomes)
    assert good + bad == len(outcomes)  # nothing else comes out
    return good, bad


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lines=st.lists(garbage_line, max_size=30), crlf=st.booleans(), bom=st.booleans())
def test_every_non_blank_line_is_one_record(lines: list[bytes], crlf: bool, bom: bool) -> None:
    data = (
        (b"\xef\xbb\xbf" if bom else b"") + GOOD + b"\n" + (b"\r\n" if crlf else b"\n").join(lines)
    )
    outcomes = list(read_records(data, "g.json"))
    count(outcomes)
    non_blank = [1] + [n for n, line in enumerate(lines, start=2) if line.strip()]
    assert [o.source_line for o in outcomes] == non_blank
    good_lines = [1] + [n for n, line in enumerate(lines, start=2) if line == GOOD]
    parsed = {o.source_line for o in outcomes if isinstance(o, DataError)}
    assert parsed >= set(good_lines)
    assert all(o.source_line in parsed for o in outcomes if isinstance(o, DataError))


@settings(max_examples=200, deadline=None)
@given(
    data=st.binary(max_size=400),
    name=st.sampled_from(["a.json", "b.csv", "c.json.gz"]),
    cut=st.integers(1, 40),
)
def test_arbitrary_bytes_never_raise(data: bytes, name: str, cut: int) -> None:
    """Every outcome is at a line of the file read (decompressed: the line count of ``data``
    bounds a gzip stream of it, whole or cut short)."""
    sources = [data]
    if name.endswith(".gz"):
        packed = gzip.compress(data)
        sources += [packed, packed[: max(1, len(packed) - cut)]]
    for source in sources:
        outcomes = list(read_records(source, name))
        count(outcomes)
        # bytes that merely start like gzip decompress to what they happen to hold
        bounded = source is not data or not data.startswith(b"\x1f\x8b")
        for item in outcomes:
            assert item.source_line >= 1
            assert item.source_line <= data.count(b"\n") + 1 or not bounded


def _array_text(
    values: list, joints: list[str] | None = None
) -> tuple[str, list[tuple[int, int, int]]]:
    """``json.dumps(values, indent=1)`` and, per element, (start, end offset, first line).

    ``joints`` says what follows each element but the last: ``comma`` (as json.dumps writes
    it), ``newline`` (no comma), ``glued`` (no comma, the next element on the same line:
    ``} {``), or ``text`` (``} x,``: more text on the element's last line, then the comma)."""
    if not values:
        return "[]", []
    joints = joints or ["comma"] * len(values)
    text, spans = "[\n", []
    for index, value in enumerate(values):
        element = json.dumps(value, indent=1).replace("\n", "\n ")
        if not text.endswith(" "):
            text += " "
        start = len(text)
        spans.append((start, start + len(element), text.count("\n") + 1))
        text += element
        if index == len(values) - 1:
            text += "\n"
        else:
            text += {"comma": ",\n", "newline": "\n", "glued": " ", "text": " x,\n"}[joints[index]]
    return text + "]", spans


@settings(max_examples=200, deadline=None)
@given(
    values=st.lists(json_values | st.just(json.loads(GOOD)), max_size=10), cut=st.integers(0, 50)
)
def test_documents_and_truncated_documents(values: list, cut: int) -> None:
    """Every element of a pretty-printed array is one outcome at its first line, good ones
    parsed; cut short, every element before the cut still is, the one the cut runs through
    is one outcome, and the missing end at most one more (at line 1)."""
    text, spans = _array_text(values)
    assert text == json.dumps(values, indent=1)
    end = max(1, len(text) - cut)
    outcomes = list(read_records(text[:end].encode(), "d.json"))
    count(outcomes)
    lines = Counter(o.source_line for o in outcomes)
    started = [(span, value) for span, value in zip(spans, values, strict=True) if span[0] < end]
    for (_start, stop, line), value in started:
        assert lines.pop(line) == 1
        if stop <= end and value == json.loads(GOOD):
            assert any(isinstance(o, DataError) and o.source_line == line for o in outcomes)
    complete = all(span[1] <= end for span in spans) and end == len(text)
    # the missing end (or, for a one-line "[]", the empty array) is one outcome at line 1
    assert lines == (Counter() if complete and values else Counter({1: lines[1]}))
    assert lines[1] <= 1
    parsed = sum(isinstance(o, DataError) for o in outcomes)
    if complete:
        assert parsed == sum(v == json.loads(GOOD) for v in values)


@settings(max_examples=200, deadline=None)
@given(
    elements=st.lists(
        st.tuples(
            json_values | st.just(json.loads(GOOD)),
            st.sampled_from(["comma", "newline", "glued", "text"]),
        ),
        min_size=1,
        max_size=10,
    )
)
def test_documents_with_missing_commas_and_trailing_text(elements: list) -> None:
    """A missing comma loses nothing: each element is one outcome at its first line (good
    ones parsed), also when the next one starts on its closing line (``} {``); text after an
    element (``} x,``) is one more outcome at that line, except after a one-line element
    that starts its line: that line (element and text) is one outcome."""
    values = [value for value, _ in elements]
    # an element glued to the next starts on a one-line element's line: that line is read
    # as one line, so glue only after elements spread over lines
    joints = [
        "comma" if how == "glued" and "\n" not in json.dumps(value, indent=1) else how
        for value, how in elements[:-1]
    ]
    joints.append("comma")  # nothing follows the last element
    text, spans = _array_text(values, joints)
    outcomes = list(read_records(text.encode(), "d.json"))
    count(outcomes)
    expected: Counter[int] = Counter()
    starts_line = True
    for (start, stop, line), how in zip(spans, joints, strict=True):
        expected[line] += 1
        spread = "\n" in text[start:stop]
        if how == "text" and (spread or not starts_line):  # else the line is one outcome
            expected[line + text.count("\n", start, stop)] += 1
        starts_line = how != "glued"
    assert Counter(o.source_line for o in outcomes) == expected, [
        (o.source_line, getattr(o, "reason", "")) for o in outcomes
    ]
    parsed = {o.source_line for o in outcomes if isinstance(o, DataError)}
    good = {
        line for (_, _, line), value in zip(spans, values, strict=True) if value == json.loads(GOOD)
    }
    assert parsed == good


def test_several_megabyte_record() -> None:
    big = json.dumps({"time": "2024-01-01T00:00:00Z", "properties": {"pad": "y" * 5_000_000}})
    outcomes = list(read_records(GOOD + b"\n" + big.encode() + b"\n" + GOOD, "big.json"))
    assert count(outcomes) == (2, 1)
    assert outcomes[1].raw_bytes == len(big)


ENVELOPE_KEYS = ["time", "resourceId", "level", "correlationId", "Resource", "orderdoc",
                 "message", "message Time", "type", "correlation ID"]  # fmt: skip
PROPERTY_KEYS = ["Source", "Type", "DataErrorType", "BriefMessage", "Message", "EventCount",
                 "FromTimestamp", "ToTimestamp", "PartitionId"]  # fmt: skip
time_like = st.sampled_from(
    ["2024-01-01T00:00:00Z", "0001-01-01T00:00:00+01:00", "9999-12-31T23:59:59-01:00",
     "2/30/2019 8:54:16 PM UTC", "13:00", "2024-01-01T25:00:00Z", "٢٠٢٤-01-01T00:00:00Z"]
)  # fmt: skip
field_value = json_scalars | time_like | st.sampled_from(["12", " 7 ", "²", "-3", "InputPartitionNotProgressing", "DataError"])  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(
    envelope=st.dictionaries(st.sampled_from(ENVELOPE_KEYS), field_value | json_values, max_size=6),
    props=st.dictionaries(st.sampled_from(PROPERTY_KEYS), field_value, max_size=9),
    as_string=st.booleans(),
)
def test_structured_garbage_never_raises(envelope: dict, props: dict, as_string: bool) -> None:
    from diagnostics.logs.normalise import normalise

    value = envelope | {"properties": json.dumps(props) if as_string else props}
    outcome = normalise(value, "s.json", 1, json.dumps(value))
    assert isinstance(outcome, DataError | Quarantined)
    if isinstance(outcome, DataError):
        assert outcome.count_known == (outcome.event_count is not None)
        assert outcome.event_count is None or outcome.event_count >= 0
        assert outcome.record_time.utcoffset().total_seconds() == 0


json_fragment = st.sampled_from(
    [b"{", b"}", b'"a"', b":", b"1", b",", b" ", b"\r", b"\t", b"\x00", b"\xed\xa0\x80",
     b"\xff", b"\\ud800", b'"', b"[", b"]", b"NaN", b"1e999", b"\xc3\xa9", b"null", b"\\"]
)  # fmt: skip


def _decoded(load, line: bytes) -> tuple[str, str]:
    try:
        return "value", repr(load(line))
    except (ValueError, RecursionError) as exc:
        return type(exc).__name__, str(exc)


@settings(max_examples=500, deadline=None)
@given(
    line=st.lists(json_fragment, max_size=12).map(lambda parts: b"{" + b"".join(parts))
    | st.binary(max_size=24)
    | json_values.map(lambda v: json.dumps({"v": v}, ensure_ascii=False).encode())
)
def test_line_decoding_shortcut_is_json_loads(line: bytes) -> None:
    """The reader's shortcut for ordinary lines gives exactly json.loads' value or error."""
    from diagnostics.logs.lines import _loads

    assert _decoded(_loads, line) == _decoded(json.loads, line)


iso_time = st.builds(
    lambda when, sep, fraction, zone: when.isoformat(sep=sep).split(".")[0] + fraction + zone,
    st.datetimes(min_value=dt.datetime(1, 1, 2), max_value=dt.datetime(9999, 12, 30)),
    st.sampled_from(["T", " "]),
    st.sampled_from(["", ".5", ".123456", ".1234567", ",25"]),
    st.sampled_from(["", "Z", "z", "+00:00", "+01:00", "-0130", " UTC", "+14:00", "-12:00"]),
)


@settings(max_examples=500, deadline=None)
@given(text=iso_time)
def test_iso_fast_paths_agree_with_the_general_parser(text: str) -> None:
    """parse_log_time's fromisoformat shortcuts give what the regular-expression path gives."""
    from diagnostics.logs import times

    match = times._ISO.match(text)
    assert match is not None
    year, month, day, hour, minute, second, frac, off = match.groups()
    try:
        expected = dt.datetime(
            int(year), int(month), int(day), int(hour), int(minute), int(second),
            times._micros(frac), tzinfo=dt.UTC,
        ) - times._offset(off)  # fmt: skip
    except (ValueError, OverflowError):
        expected = None
    assert times.parse_log_time(text) == expected


# --- every line accounted for, in every line-shaped file ------------------------------------------

_RID = "/SUBSCRIPTIONS/S/RESOURCEGROUPS/R/PROVIDERS/MICROSOFT.STREAMANALYTICS/STREAMINGJOBS/J"
_TEXT = (
    "Source 'in' had 58 occurrences of kind 'InputDeserializerError.TypeConversionError' "
    "between times '2020-05-13T09:10:00.0000000Z' and '2020-05-13T09:11:00.0000000Z'."
)
GOOD_LINES = {
    "resource": json.dumps({"time": "2019-02-04T17:11:52.7250696Z", "resourceId": _RID,
                            "properties": {"Type": "DiagnosticMessage", "Message": _TEXT}}),
    "resource-string": json.dumps({"time": "2019-02-04 17:11:52Z", "resourceId": _RID.lower(),
                                   "properties": json.dumps({"type": "DataError",
                                                             "dataErrorType": "InputDeserializerError.InvalidData",
                                                             "message": "Could not deserialize"})}),
    "activity": json.dumps({"Message Time": "2/3/2019 8:54:16 PM UTC", "Message": _TEXT,
                            "Type": "DiagnosticMessage", "Correlation ID": "c"}),
    "loganalytics": json.dumps({"TimeGenerated": "02/04/2019 17:11:48", "_ResourceId": _RID,
                                "properties_s": json.dumps({"Type": "InputPartitionNotProgressing",
                                                            "Message": "Input Partition [2] does not have additional data for more than [5] minute(s)."})}),
    "notification": "[17:22:00] " + _TEXT,
}  # fmt: skip
broken_line = st.sampled_from(list(GOOD_LINES.values())).flatmap(
    lambda good: st.integers(1, len(good) - 1).map(lambda n: good[:n])
)
text_line = st.text(
    st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp")), min_size=1, max_size=40
).filter(lambda t: t.strip() != "")
blank_line = st.sampled_from(["", " ", "\t", "  \t "])
mixed_line = st.one_of(
    st.sampled_from(list(GOOD_LINES.values())).map(lambda line: ("good", line)),
    broken_line.map(lambda line: ("broken", line)),
    st.sampled_from(["[]", '{"records": []}', "[1", "{}", "null"]).map(lambda t: ("broken", t)),
    text_line.map(lambda line: ("text", line)),
    blank_line.map(lambda line: ("blank", line)),
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    first=st.sampled_from(sorted(GOOD_LINES)),
    lines=st.lists(mixed_line, max_size=25),
    crlf=st.booleans(),
    name=st.sampled_from(["PT1H.json", "notes.txt", "export.log"]),
)
def test_every_line_is_parsed_or_quarantined_with_its_own_number(
    first: str, lines: list[tuple[str, str]], crlf: bool, name: str
) -> None:
    """A file's non-blank lines == its parsed + quarantined records, line by line; blank
    lines are neither. Whatever shape the first line has (JSON or a text notification)."""
    rows = [("good", GOOD_LINES[first]), *lines]
    data = ("\r\n" if crlf else "\n").join(text for _, text in rows).encode()
    outcomes = list(read_records(data, name))
    non_blank = [n for n, (_, text) in enumerate(rows, start=1) if text.strip()]
    assert sorted(o.source_line for o in outcomes) == non_blank
    good = {n for n, (kind, _) in enumerate(rows, start=1) if kind == "good"}
    assert {o.source_line for o in outcomes if isinstance(o, DataError)} >= good


@settings(max_examples=100, deadline=None)
@given(
    rows=st.lists(st.sampled_from(["good", "short", "blank"]), max_size=15),
    crlf=st.booleans(),
)
def test_every_csv_row_is_parsed_or_quarantined(rows: list[str], crlf: bool) -> None:
    props = json.dumps({"Type": "DataError", "DataErrorType": "LateInputEvent", "EventCount": 2})
    cells = {
        "good": f'"2/4/2019, 5:16:00.000 PM",{_RID.lower()},Informational,"{props.replace(chr(34), 2 * chr(34))}"',
        "short": '"2/4/2019, 5:16:00.000 PM",x',
        "blank": "",
    }
    end = "\r\n" if crlf else "\n"
    text = end.join(
        ["TimeGenerated [UTC],_ResourceId,Level,properties_s", *(cells[r] for r in rows)]
    )
    outcomes = list(read_records(text.encode(), "export.csv"))
    non_blank = [n for n, r in enumerate(rows, start=2) if r != "blank"]
    assert sorted(o.source_line for o in outcomes) == non_blank
    assert sum(isinstance(o, DataError) for o in outcomes) == rows.count("good")
