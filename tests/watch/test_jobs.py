"""The watcher's job files without Spark: a pass's rows are rewritten only when how their jobs
are shown changes, rows naming only their job follow the jobs of that name, and a pass
written before jobs were resolved (one file mixing both kinds of rows) is split first."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from diagnostics.errors import InputError
from diagnostics.watch.jobs import JobStore, PassJobs, settle
from tests.logs.test_jobs import arm_id

WEST, EAST = (arm_id(group, "myJob").lower() for group in ("rg-west", "rg-east"))


def _write(agg: Path, name: str, rows: list[tuple[str | None, str | None, str, int]]) -> Path:
    """A data_errors file of ``rows`` (job_id, job, source_file, n); ``n`` tells rows apart."""
    path = agg / "data_errors" / "date=2019-02-04" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    columns = list(zip(*rows, strict=True))
    table = pa.table(
        {
            "job_id": pa.array(columns[0], pa.string()),
            "job": pa.array(columns[1], pa.string()),
            "source_file": pa.array(columns[2], pa.string()),
            "n": pa.array(columns[3], pa.int64()),
        }
    )
    pq.write_table(table, path)
    return path


def _rows(path: Path) -> list[tuple]:
    table = pq.read_table(path)
    return sorted(zip(*(table[c].to_pylist() for c in ("n", "job_id", "job")), strict=True))


def _mtimes(agg: Path) -> dict[Path, int]:
    return {p: p.stat().st_mtime_ns for p in (agg / "data_errors").rglob("*.parquet")}


def _killed(*_args: object) -> None:
    raise KeyboardInterrupt


def test_rows_follow_the_jobs_as_later_passes_show_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    agg, store = tmp_path / "agg", JobStore(tmp_path / "jobs")
    # pass 1 as a watcher wrote it before resolving jobs: rows as read, both kinds in one file
    mixed = _write(agg, "p00000001-part-0.parquet",
                   [(WEST, "MYJOB", "/l/a.json", 1), (None, "myJob", "/l/a.json", 2),
                    (WEST, "MYJOB", "/l/a.json", 3)])  # fmt: skip
    named = mixed.with_name("p00000001-named-part-0.parquet")

    mapping = settle(agg, store)
    assert mapping[(None, "myJob")] == (WEST, "myJob")  # joins the one job of its name
    assert _rows(mixed) == [(1, WEST, "myJob"), (3, WEST, "myJob")]
    assert _rows(named) == [(2, WEST, "myJob")]
    [recorded] = store.load().values()
    assert recorded.sources == {"/l/a.json": {(WEST, "MYJOB"), (None, "myJob")}}
    assert not recorded.stale(mapping)

    # settled already: nothing is rewritten
    before = _mtimes(agg)
    assert settle(agg, store) == mapping
    assert _mtimes(agg) == before

    # a second resource group with the job's name: both are told apart, the named row leaves;
    # interrupted after pass 1's files were rewritten (before that was recorded), then redone
    east = _write(agg, "p00000002-part-0.parquet", [(EAST, "MYJOB", "/l/b.json", 4)])
    pair = (EAST, "MYJOB")
    store.save(PassJobs(2, {"/l/b.json": frozenset({pair})}, {pair: pair}))
    with monkeypatch.context() as patched:
        patched.setattr(JobStore, "save", _killed)
        with pytest.raises(KeyboardInterrupt):
            settle(agg, store)
    assert _rows(named) == [(2, None, "myJob")]
    assert store.load()[1].applied[(None, "myJob")] == (WEST, "myJob")  # not recorded
    settle(agg, store)
    assert _rows(mixed) == [(1, WEST, "MYJOB (rg-west)"), (3, WEST, "MYJOB (rg-west)")]
    assert _rows(named) == [(2, None, "myJob")]
    assert _rows(east) == [(4, EAST, "MYJOB (rg-east)")]

    # pass 1's file is read again from the start in pass 3, which drops its rows from pass 1:
    # the east job alone has the name, which is no longer qualified
    store.forget(["/l/a.json"], 3)
    for path in (mixed, named):
        path.unlink()
    before = _mtimes(agg)
    settle(agg, store)
    assert _rows(east) == [(4, EAST, "MYJOB")]
    assert store.load()[1].sources == {}
    assert _mtimes(agg)[east] != before[east]


def test_a_corrupt_job_file_names_itself(tmp_path: Path) -> None:
    store = JobStore(tmp_path / "jobs")
    store.folder.mkdir()
    bad = ("{not json", '{"sources": {"/l/a.json": [["x"]]}, "applied": []}', "[]", "{}",
           '{"sources": [], "applied": []}', '{"sources": {}, "applied": [[null, "a", 1]]}')  # fmt: skip
    for text in bad:
        store.path(7).write_text(text, encoding="utf-8")
        with pytest.raises(InputError) as caught:
            store.load()
        message = str(caught.value)
        assert message.startswith(f"{store.path(7)}: corrupt watcher state (")
        assert "move the state folder away" in message
        assert "\n" not in message


def test_a_pass_written_before_job_ids_is_read_with_null_ids(tmp_path: Path) -> None:
    """A data_errors file of a watcher from before the ``job_id`` column (same manifest
    version) is read as rows without ids: they follow the job of their name, and the file is
    rewritten with the column."""
    agg, store = tmp_path / "agg", JobStore(tmp_path / "jobs")
    old = agg / "data_errors" / "date=2019-02-04" / "p00000001-part-0.parquet"
    old.parent.mkdir(parents=True)
    pq.write_table(
        pa.table({"job": ["MYJOB", "MYJOB"], "source_file": ["/l/a.json"] * 2, "n": [1, 2]}), old
    )
    _write(agg, "p00000002-part-0.parquet", [(WEST, "myJob", "/l/b.json", 3)])
    pair = (WEST, "myJob")
    store.save(PassJobs(2, {"/l/b.json": frozenset({pair})}, {pair: pair}))

    mapping = settle(agg, store)
    assert mapping[(None, "MYJOB")] == (WEST, "myJob")
    named = old.with_name("p00000001-named-part-0.parquet")
    assert not old.exists()
    assert pq.read_schema(named).names == ["job", "job_id", "source_file", "n"]
    assert _rows(named) == [(1, WEST, "myJob"), (2, WEST, "myJob")]
    assert store.load()[1].sources == {"/l/a.json": {(None, "MYJOB")}}
