"""Hypothesis: every record of every shape is accounted for, with its own line number.

Random mixes of good records, broken records, text lines and blank lines are written in each
shape the reader knows (JSON Lines, a pretty-printed ``{"records": [...]}`` envelope, a
pretty-printed bare array, pretty-printed objects pasted one after another, and text); the
test knows which line each item starts on and checks, line by line, that:

* each good record is parsed exactly once, at its first line (its ``EventCount`` is unique, so
  the record parsed is the one generated), and nothing else is parsed;
* each broken record and each text line is quarantined exactly once, at its first line;
* blank lines give nothing, and no line is quarantined twice.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from diagnostics.logs.reader import read_records
from diagnostics.logs.records import DataError, Quarantined

RID = (
    "/SUBSCRIPTIONS/6A1F0C2E-0000-4B5C-9D7E-3C2B1A0F9E8D/RESOURCEGROUPS/RG-TELEMETRY/PROVIDERS/"
    "MICROSOFT.STREAMANALYTICS/STREAMINGJOBS/MYSTREAMINGJOB"
)


def _occurrences(n: int) -> str:
    return (
        f"Source 'telemetry-eh' had {n} occurrences of kind "
        "'InputDeserializerError.TypeConversionError' between times "
        "'2019-02-04T17:10:00.0000000Z' and '2019-02-04T17:11:00.0000000Z'."
    )


def _resource(n: int) -> dict:
    return {"time": "2019-02-04T17:11:52.7250696Z", "resourceId": RID, "category": "Execution",
            "level": "Informational",
            "properties": {"Source": "telemetry-eh", "Type": "DataError",
                           "DataErrorType": "LateInputEvent", "EventCount": n,
                           "FromTimestamp": "2019-02-04T17:10:49.7250696Z",
                           "ToTimestamp": "2019-02-04T17:11:48.7563961Z"}}  # fmt: skip


def _resource_string(n: int) -> dict:
    value = _resource(n)
    return value | {"properties": json.dumps(value["properties"])}


def _activity(n: int) -> dict:
    return {"message Time": "2019-02-04 17:20:02Z", "error": None, "type": "DiagnosticMessage",
            "message": f"First Occurred: 02/04/2019 17:20:00 | Resource Name: myStreamingJob | "
                       f"Message: {_occurrences(n)}",
            "correlation ID": "8c0f9a44-1f0e-4d3a-9b21-6a5e0c7d2f10"}  # fmt: skip


def _log_analytics(n: int) -> dict:
    props = _resource(n)["properties"]
    return {"TimeGenerated": "2019-02-04T17:16:00Z", "_ResourceId": RID.lower(),
            "Level": "Informational", "properties_s": json.dumps(props)}  # fmt: skip


#: Records in the documented shapes; ``n`` is the record's event count.
RECORDS = [_resource, _resource_string, _activity, _log_analytics]


def notification(n: int) -> str:
    """A portal notification copied as text (a record of ``n`` events)."""
    return f"[17:22:00] {_occurrences(n)}"


text_line = st.from_regex(r"[A-Za-z][A-Za-z0-9 .:'()/-]{0,40}", fullmatch=True)
blank_line = st.sampled_from(["", " ", "\t", "  \t ", "\r"])
#: Text lines with a portal notification's clock but not its wording.
clocked_text = text_line.map(lambda t: f"[17:23:05] {t}")


@dataclass
class File:
    """Lines being written, and what each line that starts an item must give."""

    lines: list[str] = field(default_factory=list)
    good: dict[int, list[int]] = field(default_factory=dict)  # line -> event counts parsed
    quarantined: set[int] = field(default_factory=set)  # lines quarantined exactly once
    next_count: int = 1

    def count(self) -> int:
        self.next_count += 1
        return self.next_count

    def add(
        self,
        text: str,
        *,
        good: int | list[int] | None = None,
        bad: bool = False,
        glued: bool = False,
    ) -> None:
        """Append ``text`` (possibly several lines); its first line gives what is said.
        ``glued``: ``text`` starts on the last line written, after a blank."""
        lines = text.split("\n")
        if glued:
            self.lines[-1] += " " + lines.pop(0).lstrip()
            number = len(self.lines)
            self.lines.extend(lines)
        else:
            number = len(self.lines) + 1
            self.lines.extend(lines)
        if good:
            self.good.setdefault(number, []).extend(good if isinstance(good, list) else [good])
        if bad:
            assert number not in self.quarantined
            self.quarantined.add(number)

    def data(self, crlf: bool) -> bytes:
        return ("\r\n" if crlf else "\n").join(self.lines).encode()


def check(file: File, name: str, crlf: bool) -> None:
    outcomes = list(read_records(file.data(crlf), name))
    parsed: dict[int, list[int | None]] = {}
    for outcome in outcomes:
        if isinstance(outcome, DataError):
            parsed.setdefault(outcome.source_line, []).append(outcome.event_count)
    assert parsed == file.good
    bad = Counter(o.source_line for o in outcomes if isinstance(o, Quarantined))
    assert bad == Counter(file.quarantined), [
        (o.source_line, o.reason) for o in outcomes if isinstance(o, Quarantined)
    ]


# --- damaging a pretty-printed record -------------------------------------------------------


@st.composite
def damaged(draw: st.DrawFn, pretty: str) -> str:
    """``pretty`` (a record as json.dumps(indent=...) writes it) broken on one inner line: a
    stray comma, a key without its colon, or cut short there (the rest of it lost)."""
    lines = pretty.split("\n")
    inner = draw(st.integers(1, len(lines) - 2))
    how = draw(st.sampled_from(["comma", "colon", "cut"]))
    if how == "colon" and ":" in lines[inner]:
        lines[inner] = lines[inner].replace(":", "", 1)
    elif how == "cut":
        line = lines[inner]
        lead = len(line) - len(line.lstrip()) + 1
        keep = draw(st.integers(lead, max(lead, len(line) - 1)))
        lines = [*lines[:inner], line[:keep]]
    else:
        lines[inner] += ",,"
    return "\n".join(lines)


def _closes(text: str) -> bool:
    """Whether ``text`` ends an element: its braces (outside strings) balance and it ends
    with ``}``. A cut that keeps an inner closing line whole leaves the element open."""
    depth, quoted, escaped = 0, False, False
    for char in text:
        if quoted:
            quoted = escaped or char != '"'
            escaped = not escaped and char == "\\"
        elif char == '"':
            quoted = True
        elif char in "{[":
            depth += 1
        elif char in "}]":
            depth -= 1
    return depth == 0 and text.rstrip().endswith("}")


def indented(text: str, by: int) -> str:
    return "\n".join(" " * by + line for line in text.split("\n"))


item = st.one_of(
    st.tuples(st.just("good"), st.sampled_from(RECORDS)),
    st.tuples(st.just("broken"), st.sampled_from(RECORDS)),
    st.tuples(st.just("text"), text_line | clocked_text),
    st.tuples(st.just("blank"), blank_line),
)


# --- JSON Lines ---------------------------------------------------------------------------------

array_element = st.sampled_from(RECORDS) | st.sampled_from([1, None, {}, "x", [], {"x": 1}])


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    items=st.lists(
        item | st.tuples(st.just("array"), st.lists(array_element, max_size=4)), max_size=25
    ),
    cut=st.data(),
    crlf=st.booleans(),
)
def test_json_lines(items: list, cut: st.DataObject, crlf: bool) -> None:
    """One record per line; a line holding an array: its good elements, and at most one
    quarantined record for the rest (an empty array is one quarantined record)."""
    file = File()
    file.add(json.dumps(_resource(1)), good=1)
    for kind, value in items:
        if kind == "good":
            n = file.count()
            file.add(json.dumps(value(n)), good=n)
        elif kind == "broken":
            line = json.dumps(value(0))
            file.add(line[: cut.draw(st.integers(1, len(line) - 1))], bad=True)
        elif kind == "text":
            file.add(value, bad=True)
        elif kind == "blank":
            file.add(value)
        else:
            counts = [file.count() if callable(v) else None for v in value]
            elements = [v(n) if n else v for v, n in zip(value, counts, strict=True)]
            good = [n for n in counts if n]
            file.add(json.dumps(elements), good=good, bad=len(good) < len(elements) or not value)
    check(file, "PT1H.json", crlf)


# --- documents spread over lines ----------------------------------------------------------------


#: Text after an element's closing bracket (not a JSON value, so one broken part).
trailing_text = text_line.filter(
    lambda t: not t.startswith(("null", "true", "false", "NaN", "Infinity"))
)
#: What follows a complete element: its comma, no comma (the next element on the next line,
#: or on the same line: ``} {``), or text and then the comma (``} x,``).
joint = st.sampled_from(["comma", "newline", "glued", "text"])


def _document(file: File, items: list, indent: int, draw: st.DrawFn) -> None:
    """Elements at ``indent``, commas after complete elements as json.dumps writes them, or
    missing (``}`` then the next element, on its line or the next), or after more text on the
    closing line (``} x,``): each element one outcome at its first line, that text one more."""
    glue = False
    for index, (kind, value) in enumerate(items):
        last = index == len(items) - 1
        glued, glue = glue and kind in ("good", "broken"), False
        if kind in ("good", "broken"):
            n = file.count() if kind == "good" else 0
            text = indented(json.dumps(value(n), indent=2), indent)
            if kind == "broken":
                text = draw(damaged(text))
            complete = _closes(text)
            how = draw(joint) if complete and not last else "none"
            if how == "comma":
                text += ","
            file.add(text, good=n or None, bad=not n, glued=glued)
            if how == "text":  # quarantined at the element's closing line
                file.add(draw(trailing_text) + ",", bad=True, glued=True)
            glue = how == "glued"
        elif kind == "text":
            file.add(" " * indent + value, bad=True)
        else:
            file.add(value)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(items=st.lists(item, max_size=15), data=st.data(), crlf=st.booleans())
def test_records_envelope_pretty_printed(items: list, data: st.DataObject, crlf: bool) -> None:
    file = File()
    file.add('{\n  "records": [')
    _document(file, items, 4, data.draw)
    file.add("  ]\n}")
    check(file, "PT1H.json", crlf)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(items=st.lists(item, max_size=15), data=st.data(), crlf=st.booleans(), bom=st.booleans())
def test_bare_array_pretty_printed(items: list, data: st.DataObject, crlf: bool, bom: bool) -> None:
    file = File()
    file.add("[")
    _document(file, items, 2, data.draw)
    file.add("]")
    body = file.data(crlf)
    outcomes = list(read_records((b"\xef\xbb\xbf" if bom else b"") + body, "export.json"))
    assert outcomes == list(read_records(body, "export.json"))
    check(file, "export.json", crlf)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(items=st.lists(item, max_size=15), data=st.data(), crlf=st.booleans())
def test_pasted_pretty_objects(items: list, data: st.DataObject, crlf: bool) -> None:
    """Pretty-printed objects one after another (a copy-paste), text and blank lines among
    them: each object is a record at its first line."""
    file = File()
    n = file.count()
    file.add(json.dumps(_activity(n), indent=2), good=n)
    for kind, value in items:
        if kind in ("good", "broken"):
            n = file.count() if kind == "good" else 0
            text = json.dumps(value(n), indent=4)
            file.add(data.draw(damaged(text)) if not n else text, good=n or None, bad=not n)
        elif kind == "text":
            file.add(value, bad=True)
        else:
            file.add(value)
    check(file, "pasted.json", crlf)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    items=st.lists(
        item | st.tuples(st.just("notification"), st.just(None))
        | st.tuples(st.just("json-line"), st.sampled_from(RECORDS)),
        max_size=20,
    ),
    data=st.data(),
    crlf=st.booleans(),
    name=st.sampled_from(["portal-notifications.txt", "notes.log", "pasted.json"]),
)  # fmt: skip
def test_text_with_notifications_and_json(
    items: list, data: st.DataObject, crlf: bool, name: str
) -> None:
    """A file that starts with text: notifications are records, other text lines are
    quarantined, JSON lines and pasted pretty-printed objects among them are records."""
    file = File()
    n = file.count()
    file.add(notification(n), good=n)
    for kind, value in items:
        if kind == "notification":
            n = file.count()
            file.add(notification(n), good=n)
        elif kind == "json-line":
            n = file.count()
            file.add(json.dumps(value(n)), good=n)
        elif kind == "good":
            n = file.count()
            file.add(json.dumps(value(n), indent=2), good=n)
        elif kind == "broken":
            file.add(data.draw(damaged(json.dumps(value(0), indent=2))), bad=True)
        elif kind == "text":
            file.add(value, bad=True)
        else:
            file.add(value)
    check(file, name, crlf)


def test_a_far_off_record_time_is_quarantined_in_asas_words(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from diagnostics.logs.aggregate import aggregate_files

    log = tmp_path / "PT1H.json"
    log.write_text(
        '{"time": "9999-12-31T00:00:00Z", "resourceId": "/X/JOB", "category": "Execution", '
        '"properties": {"Type": "DataError", "DataErrorType": "LateInputEvent", "EventCount": 1}}\n'
    )
    tables = aggregate_files([log])
    assert tables.summary["records_quarantined"] == 1
    assert tables.quarantine["reason"].to_list() == [
        "the record's time, 9999-12-31T00:00:00+00:00, is outside 1900-01-01 .. 2150-01-01, the "
        "times orderdoc replays and aggregates (a clock or an export error?)"
    ]
