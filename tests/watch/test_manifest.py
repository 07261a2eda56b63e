"""The offset manifest: appends read once each, with the line numbers of the whole file."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from diagnostics.errors import InputError
from diagnostics.logs.batches import parse_file
from diagnostics.watch.manifest import Manifest, ReadMode, StateFiles, is_empty, plan_pass
from diagnostics.watch.passes import parse_read

RECORD = {
    "time": "2024-03-05T10:01:00Z",
    "resourceId": "/SUBSCRIPTIONS/0/RESOURCEGROUPS/RG/PROVIDERS/MICROSOFT.STREAMANALYTICS/STREAMINGJOBS/J",
    "category": "Execution",
    "operationName": "Process Events",
    "level": "Information",
    "properties": {"Source": "eh", "Type": "DataError", "DataErrorType": "LateInputEvent",
                   "BriefMessage": "late", "EventCount": 3},
}  # fmt: skip


def rows(batches) -> list[dict]:
    return pa.Table.from_batches(list(batches)).to_pylist() if batches else []


def passes_over(path: Path, versions: list[bytes]) -> tuple[list[dict], Manifest]:
    """Write each version of the file in turn and run a pass after each: the rows kept."""
    manifest, kept = Manifest(), []
    for data in versions:
        path.write_bytes(data)
        plan = plan_pass(manifest, [str(path)])
        kept = [r for r in kept if r["source_file"] not in plan.replaced]
        for read in plan.reads:
            kept.extend(rows(list(parse_read(read))))
        manifest = plan.after
    return kept, manifest


line_text = st.one_of(
    st.integers(0, 10_000).map(
        lambda n: json.dumps({**RECORD, "properties": {**RECORD["properties"], "EventCount": n}})
    ),
    st.text("abc{}:,\"' ", max_size=20).map(lambda t: "{broken " + t),
    st.just(""),
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    lines=st.lists(line_text, min_size=1, max_size=12),
    cuts=st.lists(st.floats(0, 1), max_size=5),
    crlf=st.booleans(),
    bom=st.booleans(),
)
def test_appends_in_any_pieces_give_the_rows_of_the_whole_file(
    tmp_path: Path, lines: list[str], cuts: list[float], crlf: bool, bom: bool
) -> None:
    end = "\r\n" if crlf else "\n"
    final = ("\ufeff" if bom else "") + json.dumps(RECORD) + end + end.join(lines) + end
    data = final.encode()
    points = sorted({int(c * len(data)) for c in cuts})
    path = tmp_path / "PT1H.json"
    path.unlink(missing_ok=True)
    got, manifest = passes_over(path, [data[:p] for p in points] + [data])
    want = rows(list(parse_file(data, str(path))))
    key = lambda r: (r["source_line"], str(r))  # noqa: E731
    assert sorted(got, key=key) == sorted(want, key=key)
    [state] = manifest.files
    assert (state.mode, state.offset) == (ReadMode.LINES, len(data))


def test_a_half_written_line_waits_and_complete_json_does_not(tmp_path: Path) -> None:
    path = tmp_path / "PT1H.json"
    line = json.dumps(RECORD).encode()
    got, manifest = passes_over(path, [line + b"\n" + line[:30]])
    assert [r["source_line"] for r in got] == [1]
    assert manifest.files[0].offset == len(line) + 1
    # a last line without a newline is taken once it is complete JSON
    got, manifest = passes_over(path, [line + b"\n" + line[:30], line + b"\n" + line])
    assert [r["source_line"] for r in got] == [1, 2]
    assert manifest.files[0].line == 2


def test_rewritten_and_gzip_files_are_read_again_whole(tmp_path: Path) -> None:
    line = json.dumps(RECORD).encode() + b"\n"
    path = tmp_path / "PT1H.json"
    got, _manifest = passes_over(path, [line * 3, line * 2])  # shrank: read again
    assert [r["source_line"] for r in got] == [1, 2]
    packed = tmp_path / "old.json.gz"
    packed.write_bytes(gzip.compress(line * 2))
    plan = plan_pass(Manifest(), [str(packed)])
    assert [(r.mode, r.start) for r in plan.reads] == [(ReadMode.WHOLE, 0)]
    assert is_empty(plan_pass(plan.after, []), plan.after)
    packed.write_bytes(gzip.compress(line * 3))
    again = plan_pass(plan.after, [])
    assert again.replaced == (str(packed),)
    assert len(rows(list(parse_read(again.reads[0])))) == 3


def test_unreadable_files_wait_and_non_logs_are_listed(tmp_path: Path) -> None:
    odd = tmp_path / "looks-like.json"
    odd.mkdir()  # stat works, reading fails
    (tmp_path / "notes.md").write_text("not a log", encoding="utf-8")
    plan = plan_pass(Manifest(), [str(odd), str(tmp_path / "notes.md")])
    assert plan.reads == ()
    assert plan.after.waiting == (str(odd),)
    assert plan.after.skipped == (str(tmp_path / "notes.md"),)
    assert plan.unreadable[0].startswith(f"{odd}: ")


def test_state_files_round_trip_and_reject_garbage(tmp_path: Path) -> None:
    line = json.dumps(RECORD).encode() + b"\n"
    (tmp_path / "logs").mkdir()
    log = tmp_path / "logs" / "PT1H.json"
    log.write_bytes(line)
    files = StateFiles(tmp_path / "state")
    plan = plan_pass(files.manifest(), [str(log)])
    files.save_plan(plan)
    assert files.pending_plan(files.manifest()) == plan
    files.commit(plan)
    assert files.manifest() == plan.after
    assert files.pending_plan(files.manifest()) is None
    (tmp_path / "state" / "manifest.json").write_text('{"version": 1}', encoding="utf-8")
    with pytest.raises(InputError, match=r"manifest\.json: corrupt watcher state"):
        files.manifest()


def test_paths_from_the_file_source_are_local_paths(tmp_path: Path) -> None:
    from diagnostics.watch.discovery import local_path

    spaced = tmp_path / "a b" / "PT1H.json"
    spaced.parent.mkdir()
    spaced.write_text("", encoding="utf-8")
    assert local_path(f"file:{spaced}") == str(spaced.resolve())
    encoded = str(spaced).replace(" ", "%20")
    assert local_path(f"file://{encoded}") == str(spaced.resolve())


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        (lambda v: v["files"][0].update(offset="abc"), "files: 'offset' is 'abc'"),
        (lambda v: v["files"][0].update(head=7), "files: 'head' is 7, not a string"),
        (lambda v: v["files"][0].update(mode="zip"), "has the mode 'zip'"),
        (lambda v: v["files"][0].pop("line"), "an entry of 'files' has the fields"),
        (lambda v: v.update(passes="2"), "'passes' is '2', not a whole number"),
        (lambda v: v.update(passes=True), "'passes' is True"),
        (lambda v: v.update(metrics="m.json"), "'metrics' is not a list of strings"),
        (lambda v: v.update(files={}), "'files' is not a list of objects"),
        (lambda v: v.pop("skipped"), "no field 'skipped'"),
    ],
)
def test_wrong_value_types_are_found_upfront(tmp_path: Path, change, reason: str) -> None:
    value = {"version": 1, "passes": 1, "metrics": [], "skipped": [], "files": [
        {"path": "/logs/PT1H.json", "mode": "lines", "offset": 10, "line": 2, "size": 10,
         "mtime_ns": -5, "head": "00"}]}  # fmt: skip
    files = StateFiles(tmp_path)
    (tmp_path / "manifest.json").write_text(json.dumps(value), encoding="utf-8")
    assert files.manifest().files[0].offset == 10  # the unchanged value is sound
    change(value)
    (tmp_path / "manifest.json").write_text(json.dumps(value), encoding="utf-8")
    with pytest.raises(InputError) as caught:
        files.manifest()
    assert reason in str(caught.value)
    assert "\n" not in str(caught.value)
    # a plan carries a manifest: the same checks, and its own fields'
    (tmp_path / "manifest.json").unlink()
    plan = {"number": 1, "reads": [{"path": "/x", "start": 0, "end": "9", "first_line": 1,
            "mode": "lines"}], "replaced": [], "after": value}  # fmt: skip
    (tmp_path / "plan.json").write_text(json.dumps(plan), encoding="utf-8")
    with pytest.raises(InputError, match=r"reads: 'end' is '9'"):
        files.pending_plan(Manifest())
