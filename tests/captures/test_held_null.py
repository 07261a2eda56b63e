"""Issue 39, point 9: a TIMESTAMP BY field written null is told from one the event does not
have (both are null in the events' column), through the columnar Capture reader cold and
warm (each way it reads a body: the usual template, polars' JSON reader, Python's) and in
JSON Lines; explain counts the two apart from the values that are not a time."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from diagnostics.captures.capture_cache import CaptureCache
from diagnostics.captures.reader import read_capture

from .helpers import capture_record, run_cli, write_avro

T0 = 1_717_401_600_000  # 2024-06-03T08:00:00Z

#: (body, whether it holds ``ts`` as null): the usual shape (the template), another key
#: order (polars' reader), escapes (Python's), an empty value, no body, a body not JSON.
BODIES: list[tuple[bytes | None, bool]] = [
    (b'{"dev":"a","ts":"2024-06-03T08:00:00Z","n":1}', False),
    (b'{"dev":"a","ts":null,"n":2}', True),
    (b'{"dev":"a","ts":"","n":3}', False),
    (b'{"dev":"a","ts":"6/3/2024 8:00:04 AM","n":4}', False),
    (b'{"n":5,"dev":"b"}', False),
    (b'{"n":6,"ts":null,"dev":"b"}', True),
    (b'{"n":7,"dev":"b","ts":"2024-06-03T08:00:07Z"}', False),
    (b'{"dev":"c\\u00e9","ts":null,"n":8}', True),
    (b'{"dev":"c\\n","n":9}', False),
    (None, False),
    (b"not json {", False),
    (b'{"dev":"a","ts":"2024-06-03T08:00:11Z","n":12}', False),
]
EXPECTED = [held for _, held in BODIES]


def _capture(root: Path) -> Path:
    records = [capture_record(i, b, T0 + 1_000 * i, "") for i, (b, _) in enumerate(BODIES)]
    hub = root / "ns" / "hub"
    write_avro(hub / "0" / "2024/06/03/08/00/00.avro", records[:6], "deflate")
    write_avro(hub / "0" / "2024/06/03/08/05/00.avro", [], "deflate")
    write_avro(hub / "1" / "2024/06/03/08/00/00.avro", records[6:], "null")
    return root


def test_capture_tells_null_from_missing_cold_and_warm(tmp_path: Path) -> None:
    root = _capture(tmp_path / "capture")
    plain = read_capture(root)
    assert plain.null_values("ts").to_list() == EXPECTED
    assert plain.null_values("dev").to_list() == [False] * len(BODIES)  # never null
    assert plain.null_values("nothing") is None
    cache = tmp_path / "cache"
    cold = read_capture(root, cache=CaptureCache.open(cache), defer=True)
    warm = read_capture(root, cache=CaptureCache.open(cache), defer=True)
    assert warm.cache_line is not None
    assert "3 of 3 Capture files read" in warm.cache_line
    for capture in (cold, warm):
        assert capture.null_values("ts").to_list() == EXPECTED
        # the column holds no value in both cases: only the flag tells them apart
        ts = capture.with_columns(["ts"]).events["ts"].to_list()
        assert [ts[i] is None for i in (1, 4, 5, 7, 8, 9, 10)] == [True] * 7


JSONL = [
    {"dev": "a", "ts": "2024-06-03T08:00:00Z"},
    {"dev": "a", "ts": None},
    {"dev": "b"},
    {"dev": "b", "meta": {"ts": None}},  # a nested field of that name is not the field
    {"dev": "c", "ts": ""},
    {"dev": "c", "note": 'writes "ts": null in text', "ts": "6/3/2024 8:00:05 AM"},
    {"ts": None, "dev": "c"},
]


def _jsonl(path: Path) -> Path:
    lines = [
        json.dumps({**e, "EventEnqueuedUtcTime": f"2024-06-03T08:00:{i:02d}Z"})
        for i, e in enumerate(JSONL)
    ]
    path.write_text("\n".join([*lines[:3], "", *lines[3:]]) + "\n")  # a blank line too
    return path


def test_json_lines_tell_null_from_missing(tmp_path: Path) -> None:
    capture = read_capture(_jsonl(tmp_path / "events.jsonl"))
    assert capture.null_values("ts").to_list() == [False, True, False, False, False, False, True]
    assert capture.null_values("nothing") is None
    csv = tmp_path / "events.csv"
    csv.write_text("dev,ts,EventEnqueuedUtcTime\na,,2024-06-03T08:00:00Z\n")
    assert read_capture(csv).null_values("ts") is None  # a CSV cannot tell


def _invalid(args: list[str]) -> dict:
    code, out, err = run_cli("explain", *args, "--format", "json")
    assert code == 0, err
    (found,) = [f for f in json.loads(out)["findings"] if f["cause"] == "invalid_timestamps"]
    return found["evidence"]


@pytest.mark.parametrize("kind", ["capture", "jsonl"])
def test_explain_counts_missing_null_and_unparsable_apart(tmp_path: Path, kind: str) -> None:
    if kind == "capture":
        source = _capture(tmp_path / "capture")
        # null or empty: rows 1, 2, 5, 7; missing: 4, 8 and the record without a body;
        # the body that is not JSON is the input's data error, not an invalid time
        counts = {"unparsable": 1, "null_or_empty": 4, "field_missing": 3}
        example = "6/3/2024 8:00:04 AM"
    else:
        counts = {"unparsable": 1, "null_or_empty": 3, "field_missing": 2}
        example = "6/3/2024 8:00:05 AM"
        source = _jsonl(tmp_path / "events.jsonl")
    evidence = _invalid(["--events", str(source), "--timestamp-by", "ts"])
    assert evidence["invalid_timestamp"] == sum(counts.values())
    for name, n in counts.items():
        assert evidence[name]["events"] == n, name
    assert "missing_or_null" not in evidence
    assert evidence["unparsable"]["examples"] == [example]
    code, text, err = run_cli("explain", "--events", str(source), "--timestamp-by", "ts")
    assert code == 0, err
    said = " ".join(text.split())
    assert f"of which the event does not have the field: {counts['field_missing']} events" in said
    assert f"of which the field is null or empty: {counts['null_or_empty']} events" in said


def test_the_app_counts_missing_and_null_apart_as_explain_does(tmp_path: Path) -> None:
    """The app's Findings page explains the events it stored when the capture was loaded:
    what the capture told of null and missing fields is kept beside them."""
    from diagnostics.appdata.build import CaptureSettings, capture_context
    from diagnostics.appdata.capture_input import build_from_reader
    from diagnostics.appdata.jobfix import explain_folder
    from diagnostics.engine.policy import OrderingPolicy

    source = _capture(tmp_path / "capture")
    agg = tmp_path / "agg"
    policy = OrderingPolicy(timestamp_by="ts")
    build_from_reader(read_capture(source), CaptureSettings(policy=policy), agg)
    ctx = capture_context(agg)
    assert ctx is not None
    held = ctx.held_null()
    assert held is not None
    assert held.to_list() == EXPECTED
    report = explain_folder(agg, None)
    (found,) = [f for f in report.findings if f.cause == "invalid_timestamps"]
    evidence = found.evidence
    assert evidence["null_or_empty"]["events"] == 4
    assert evidence["field_missing"]["events"] == 3
    assert "missing_or_null" not in evidence
