"""Compaction of the files passes add: the rows stay, the files and job files become one per
folder, and a crash at any point is finished by the next start with the same result."""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from diagnostics.aggregates import TableName, table_files
from diagnostics.errors import InputError
from diagnostics.watch import compaction
from diagnostics.watch.jobs import JobStore, PassJobs, pass_files, tag

TS = pa.timestamp("us", tz="UTC")
JOB = (
    "/subscriptions/0/resourcegroups/rg/providers/microsoft.streamanalytics/streamingjobs/a",
    "a",
)


def errors(number: int, rows: int, *, named: bool = False, job_id: bool = True) -> pa.Table:
    columns = {
        "job": [JOB[1]] * rows,
        "job_id": [None if named else JOB[0]] * rows,
        "kind": ["LateInputEvent"] * rows,
        "event_count": list(range(rows)),
        "record_time": pa.array([1_700_000_000_000_000 + number] * rows, pa.int64()).cast(TS),
        "source_file": [f"/logs/{number % 3}.json"] * rows,
        "source_line": [number * 100 + i for i in range(rows)],
    }
    if not job_id:
        del columns["job_id"]
    return pa.table(columns)


def quarantined(number: int, rows: int) -> pa.Table:
    return pa.table(
        {
            "source_file": [f"/logs/{number}.json"] * rows,
            "source_line": pa.array(range(rows), pa.int64()),
            "reason": ["not JSON"] * rows,
        }
    )


def make_state(root: Path, passes: int) -> None:
    """A state folder as ``passes`` passes leave it: per pass two data_errors files in a date
    folder (some passes a second date, some rows named only by their job), a quarantine file
    (empty for most passes) and a job file."""
    agg = root / "agg"
    store = JobStore(root / "jobs")
    for n in range(1, passes + 1):
        day = "2024-03-05" if n % 4 else "2024-03-06"
        folder = agg / "data_errors" / f"date={day}"
        folder.mkdir(parents=True, exist_ok=True)
        for part in range(2):
            pq.write_table(errors(n, 3 + part), folder / f"{tag(n)}part-{part:05d}.parquet")
        if n % 3 == 0:
            pq.write_table(errors(n, 2, named=True), folder / f"{tag(n)}named-part-00000.parquet")
        (agg / "quarantine").mkdir(parents=True, exist_ok=True)
        pq.write_table(
            quarantined(n, 2 if n % 5 == 0 else 0), agg / "quarantine" / f"{tag(n)}part-0.parquet"
        )
        sources = {f"/logs/{n % 3}.json": frozenset({JOB, (None, "a")} if n % 3 == 0 else {JOB})}
        store.save(PassJobs(n, sources, {JOB: JOB, (None, "a"): JOB}))


def rows(root: Path) -> dict[str, list[tuple]]:
    """Every row of both tables, with the folder and kind (named or not) of its file."""
    found: dict[str, list[tuple]] = {}
    agg = root / "agg"
    for table in (TableName.DATA_ERRORS, TableName.QUARANTINE):
        got = []
        for path in table_files(agg, table):
            data = pq.read_table(path)
            kind = "named" if "-named-" in path.name else "own"
            for row in data.to_pylist():
                got.append((str(path.parent.relative_to(agg)), kind, tuple(sorted(row.items()))))
        found[table.value] = sorted(got, key=repr)
    return found


def test_compaction_keeps_every_row_in_one_file_per_folder(tmp_path: Path) -> None:
    make_state(tmp_path, 10)
    before = rows(tmp_path)
    work = compaction.compact(tmp_path, 10)
    assert rows(tmp_path) == before
    names = sorted(
        str(p.relative_to(tmp_path / "agg")) for p in (tmp_path / "agg").rglob("*.parquet")
    )
    assert names == [
        "data_errors/date=2024-03-05/p00000010-compacted.parquet",
        "data_errors/date=2024-03-05/p00000010-named-compacted.parquet",
        "data_errors/date=2024-03-06/p00000010-compacted.parquet",
        "quarantine/p00000010-compacted.parquet",
    ]
    assert len(work.merges) == 4
    # the empty quarantine files are gone: only the rows of passes 5 and 10 are left
    assert pq.read_metadata(tmp_path / "agg" / names[-1]).num_rows == 4
    # one job file: what every pass read, per source file, and how it is stored
    store = JobStore(tmp_path / "jobs")
    assert store.numbers() == {10}
    merged = store.load()[10]
    assert merged.sources == {
        "/logs/0.json": frozenset({JOB, (None, "a")}),
        "/logs/1.json": frozenset({JOB}),
        "/logs/2.json": frozenset({JOB}),
    }
    assert set(pass_files(tmp_path / "agg")) == {10}
    assert not (tmp_path / compaction.PLAN).exists()
    # later passes add files of their own; the next compaction takes them in
    make_more = tmp_path / "agg" / "data_errors" / "date=2024-03-05"
    pq.write_table(errors(11, 5), make_more / f"{tag(11)}part-00000.parquet")
    JobStore(tmp_path / "jobs").save(PassJobs(11, {"/logs/9.json": frozenset({JOB})}, {JOB: JOB}))
    before = rows(tmp_path)
    compaction.compact(tmp_path, 11)
    assert rows(tmp_path) == before
    assert len(list((tmp_path / "agg").rglob("*.parquet"))) == 4
    assert set(JobStore(tmp_path / "jobs").load()[11].sources) == {
        "/logs/0.json", "/logs/1.json", "/logs/2.json", "/logs/9.json"
    }  # fmt: skip


def test_files_of_an_older_watcher_get_their_job_id_column(tmp_path: Path) -> None:
    folder = tmp_path / "agg" / "data_errors" / "date=2024-03-05"
    folder.mkdir(parents=True)
    pq.write_table(errors(1, 2, job_id=False), folder / f"{tag(1)}part-0.parquet")
    pq.write_table(errors(2, 2), folder / f"{tag(2)}part-0.parquet")
    compaction.compact(tmp_path, 2)
    [path] = table_files(tmp_path / "agg", TableName.DATA_ERRORS)
    table = pq.read_table(path)
    assert table.num_rows == 4
    assert table["job_id"].to_pylist() == [None, None, JOB[0], JOB[0]]


def test_only_committed_passes_and_only_when_due(tmp_path: Path) -> None:
    make_state(tmp_path, compaction.EVERY)
    assert not compaction.due(tmp_path)
    make_state(tmp_path, compaction.EVERY + 1)
    assert compaction.due(tmp_path)
    compaction.compact(tmp_path, 4)  # passes after 4 are left as they are
    numbers = set(pass_files(tmp_path / "agg"))
    assert numbers == {4, *range(5, compaction.EVERY + 2)}
    assert JobStore(tmp_path / "jobs").numbers() == numbers


class Crash(Exception):
    pass


def compact_dying_at(root: Path, at: int) -> int:
    """Compact, dying at the ``at``-th rename or delete (kill -9 leaves the files as they are,
    and so does this); how many renames and deletes it got to."""
    calls = {"n": 0}
    real_replace, real_unlink = os.replace, Path.unlink

    def counted(real):  # type: ignore[no-untyped-def]
        def call(*args, **kwargs):  # type: ignore[no-untyped-def]
            calls["n"] += 1
            if calls["n"] == at:
                raise Crash
            return real(*args, **kwargs)

        return call

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(os, "replace", counted(real_replace))
        patch.setattr(Path, "unlink", counted(real_unlink))
        with contextlib.suppress(Crash):
            compaction.compact(root, 10)
    return calls["n"]


def test_a_crash_at_any_step_is_finished_on_the_next_start(tmp_path: Path) -> None:
    """Killed at each rename or delete in turn: the next start finishes the compaction (or,
    killed before its plan was written, the next pass does it again), every row once."""
    make_state(tmp_path / "whole", 10)
    steps = compact_dying_at(tmp_path / "whole", 0)
    expected = rows(tmp_path / "whole")
    assert steps > 20
    for at in range(1, steps + 1):
        root = tmp_path / str(at)
        make_state(root, 10)
        compact_dying_at(root, at)
        if compaction.finish(root) is None and compaction.due(root):
            compaction.compact(root, 10)  # died before the plan was written: done again
        assert rows(root) == expected, at
        assert len(list((root / "agg").rglob("*.parquet"))) == 4, at
        assert JobStore(root / "jobs").numbers() == {10}, at
        assert not (root / compaction.PLAN).exists()
        assert not [p for p in root.rglob(".*") if p.is_file()], at  # no temporary file left


def test_a_corrupt_plan_is_one_line(tmp_path: Path) -> None:
    (tmp_path / compaction.PLAN).write_text(json.dumps({"through": "x", "merges": []}))
    with pytest.raises(InputError, match=r"compaction\.json: corrupt watcher state \('through'"):
        compaction.finish(tmp_path)


def test_a_failed_compaction_is_a_warning_and_finished_before_the_next_pass(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from diagnostics.rules.loader import load_rules
    from diagnostics.watch.runner import WatchConfig, Watcher

    logs, state = tmp_path / "logs", tmp_path / "state"
    logs.mkdir()
    make_state(state, 10)
    before = rows(state)
    config = WatchConfig(folders=(logs,), state=state, once=True)
    watcher = Watcher(None, config, load_rules([]), clock=lambda: None)  # type: ignore[arg-type]
    real = compaction._merge_files

    def full(target: Path, sources: list[Path]) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(compaction, "_merge_files", full)
    watcher._compact(10)
    assert list(watcher._warnings) == [
        "compacting the state failed: OSError: [Errno 28] No space left on device "
        "(finished next pass)"
    ]
    assert (state / compaction.PLAN).exists()
    monkeypatch.setattr(compaction, "_merge_files", real)
    watcher.run_pass([])  # before the next pass's plan: the compaction is finished
    assert rows(state) == before
    assert not (state / compaction.PLAN).exists()
    assert len(list((state / "agg").rglob("*.parquet"))) == 4
