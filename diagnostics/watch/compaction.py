"""Compaction: the files many passes added, merged, so that the state stays small.

Every pass adds its ``data_errors`` and ``quarantine`` rows in files of its own (names starting
``pNNNNNNNN-``, :mod:`diagnostics.watch.passes`) and the jobs of its rows in
``jobs/pNNNNNNNN.json`` (:mod:`diagnostics.watch.jobs`). Left alone, the files grow with the
number of passes, and so does the time of every pass, which reads them all. So once
:data:`EVERY` passes have added files since the last compaction, the passes committed so far
(up to pass ``K``, the last one) are compacted into one:

1. the plan is written (``STATE/compaction.json``): per folder of each table (a ``date=``
   partition), the files to merge into one (the rows of records that named only their job,
   ``pK-named-...``, apart from the others), and the file each becomes;
2. the job files up to ``K`` are merged into ``jobs/pK.json``: per source file, every pair its
   rows had as read, and the pair each is stored under (all passes were settled to the same
   pairs before: :func:`diagnostics.watch.jobs.settle` ran in the last pass);
3. per entry, the merged file is written (to a hidden temporary name, flushed, renamed:
   atomic), then its sources are deleted; a single file is renamed. A file of no rows is
   dropped when the folder has others;
4. the job files before ``K`` are deleted, then the plan.

Each step is safe to redo: a plan found when the watcher starts or before a pass is finished
first (:func:`finish`). A target that exists is complete (it appears by a rename), so only its
sources are left to delete; merging the job files again gives the same union. Compaction only
ever touches committed passes: pass ``K + 1``, redone after a crash, deletes only its own
``pK+1-`` files. The tables' rows are unchanged, only their files; the derived tables are
not touched.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from diagnostics.aggregates import TableName, table_files
from diagnostics.errors import InputError
from diagnostics.watch.files import sync_folder, write_json_atomic
from diagnostics.watch.jobs import JOB_ID, NAMED, JobStore, Pair, PassJobs, tag, with_job_id

#: Passes that added files since the last compaction, after which the next compaction runs.
EVERY = 8
PLAN = "compaction.json"
TABLES = (TableName.DATA_ERRORS, TableName.QUARANTINE)
_TAG = re.compile(r"p(\d{8})-")
_ROWS = 64 * 1024  # rows per batch when merging


@dataclass(frozen=True)
class Merge:
    """Files of one folder (relative to ``STATE/agg``) merged into ``target``."""

    target: str
    sources: tuple[str, ...]


@dataclass(frozen=True)
class Compaction:
    """Everything up to pass ``through`` merged: the table files (``merges``) and job files."""

    through: int
    merges: tuple[Merge, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "through": self.through,
            "merges": [{"target": m.target, "sources": list(m.sources)} for m in self.merges],
        }

    @classmethod
    def from_json(cls, value: Any) -> Compaction:
        """Parse the plan; raises ``TypeError``/``KeyError``/``ValueError`` when malformed."""
        through = value["through"]
        if isinstance(through, bool) or not isinstance(through, int) or through < 1:
            msg = f"'through' is {through!r}, not a pass number"
            raise TypeError(msg)
        merges = []
        for item in value["merges"]:
            sources = item["sources"]
            if not isinstance(item["target"], str) or not all(isinstance(s, str) for s in sources):
                msg = f"a merge {item!r} is not a target and a list of files"
                raise TypeError(msg)
            merges.append(Merge(item["target"], tuple(sources)))
        return cls(through, tuple(merges))


def pass_number(path: Path) -> int | None:
    """The pass that added a table file (from its name), or ``None``."""
    match = _TAG.match(path.name)
    return None if match is None else int(match.group(1))


def due(root: Path) -> bool:
    """True when :data:`EVERY` passes or more have job files of their own since the last
    compaction (a compacted state has one job file)."""
    return len(JobStore(root / "jobs").numbers()) > EVERY


def plan(root: Path, through: int) -> Compaction:
    """The compaction of the committed passes up to ``through``."""
    agg = root / "agg"
    groups: dict[tuple[Path, bool], list[Path]] = {}
    for table in TABLES:
        for path in table_files(agg, table):
            number = pass_number(path)
            if number is None or number > through:
                continue
            named = path.name[len(tag(number)) :].startswith(NAMED)
            groups.setdefault((path.parent, named), []).append(path)
    merges = []
    for (folder, named), paths in sorted(groups.items()):
        kind = NAMED if named else ""
        target = folder / f"{tag(through)}{kind}compacted.parquet"
        sources = [p for p in paths if p != target]
        if sources:
            merges.append(
                Merge(str(target.relative_to(agg)), tuple(str(p.relative_to(agg)) for p in sources))
            )
    return Compaction(through, tuple(merges))


def compact(
    root: Path, through: int, hook: Callable[[str], None] = lambda _step: None
) -> Compaction:
    """Plan the compaction of the passes up to ``through`` and carry it out (``hook`` is
    called after the plan is written and after the first merge: the crash tests' points)."""
    work = plan(root, through)
    write_json_atomic(root / PLAN, work.to_json())
    hook("compaction planned")
    _carry_out(root, work, hook)
    return work


def pending(root: Path) -> Compaction | None:
    """The plan of a compaction a crash interrupted, if there is one; a corrupt plan is an
    :class:`InputError` naming the file."""
    path = root / PLAN
    if not path.exists():
        return None
    try:
        return Compaction.from_json(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError, KeyError) as exc:
        msg = (
            f"{path}: corrupt watcher state ({exc}); move the state folder away to start over "
            "(the logs are read again)"
        )
        raise InputError(msg) from exc


def finish(root: Path) -> Compaction | None:
    """Carry out a compaction a crash interrupted (its plan is there); the plan, if any."""
    work = pending(root)
    if work is not None:
        _carry_out(root, work)
    return work


def _carry_out(
    root: Path, work: Compaction, hook: Callable[[str], None] = lambda _step: None
) -> None:
    agg, store = root / "agg", JobStore(root / "jobs")
    merged = merge_jobs(store, work.through)
    if merged is not None:
        store.save(merged)
    for index, merge in enumerate(work.merges):
        _merge_files(agg / merge.target, [agg / s for s in merge.sources])
        if index == 0:
            hook("compaction merged")
    for number in store.numbers():
        if number < work.through:
            store.drop(number)
    (root / PLAN).unlink(missing_ok=True)
    sync_folder(root)


def merge_jobs(store: JobStore, through: int) -> PassJobs | None:
    """The union of the job files of the passes up to ``through``, numbered ``through``."""
    found = {n: j for n, j in store.load().items() if n <= through}
    if not found:
        return None
    sources: dict[str, set[Pair]] = {}
    applied: dict[Pair, Pair] = {}
    for number in sorted(found):
        jobs = found[number]
        for source, pairs in jobs.sources.items():
            sources.setdefault(source, set()).update(pairs)
        applied.update(jobs.applied)
    frozen = {source: frozenset(pairs) for source, pairs in sources.items()}
    return PassJobs(through, frozen, applied)


def _batches(path: Path, schema: pa.Schema) -> Iterator[pa.RecordBatch]:
    with pq.ParquetFile(path) as file:
        for batch in file.iter_batches(batch_size=_ROWS):
            table = pa.Table.from_batches([batch])
            if JOB_ID in schema.names:
                table = with_job_id(table)
            yield from table.select(schema.names).cast(schema).to_batches()


def _schema(paths: list[Path]) -> pa.Schema:
    schemas = []
    for path in paths:
        schema = pq.read_schema(path)
        if "job" in schema.names and JOB_ID not in schema.names:  # an older watcher's file
            schema = with_job_id(schema.empty_table()).schema
        schemas.append(schema.remove_metadata())
    return pa.unify_schemas(schemas, promote_options="permissive")


def _merge_files(target: Path, sources: list[Path]) -> None:
    """Merge ``sources`` into ``target`` (atomically), then delete them; done already when
    ``target`` exists."""
    present = [p for p in sources if p.exists()]
    if not target.exists() and present:
        rows = {p: pq.read_metadata(p).num_rows for p in present}
        kept = [p for p in present if rows[p]] or present[:1]
        if len(kept) == 1:
            os.replace(kept[0], target)
        else:
            schema = _schema(kept)
            temp = target.with_name(f".{target.name}.tmp")
            with pq.ParquetWriter(temp, schema, compression="snappy") as out:
                for path in kept:
                    for batch in _batches(path, schema):
                        out.write_batch(batch)
            with open(temp, "rb") as handle:
                os.fsync(handle.fileno())
            os.replace(temp, target)
        sync_folder(target.parent)
    for path in present:
        path.unlink(missing_ok=True)
    sync_folder(target.parent)
