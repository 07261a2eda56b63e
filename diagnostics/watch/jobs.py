"""Jobs in the watcher's tables, resolved as one ``orderdoc aggregate`` resolves them.

``orderdoc aggregate`` settles each job's key and shown name over everything it reads
(:func:`diagnostics.logs.jobs.resolve_jobs`). The watcher reads pass by pass, and a later pass
can change how rows stored earlier are shown: a record with ``properties.JobName`` (or an
ARM-cased id) gives the real casing to a job known until then by ASA's upper-case id, a second
resource group with the same job name qualifies both (``myJob (rg-west)``), a record naming
only its job joins, or stops joining, the one job of that name. So:

* every pass keeps, in ``STATE/jobs/pNNNNNNNN.json``, the (``job_id``, ``job``) pairs its
  data_errors rows had as read, per source file (``sources``), and the pair each is stored
  under (``applied``);
* a pass writes its new rows already resolved over every pair known then (the earlier
  passes', its own and the engine metrics');
* after every pass, :func:`settle` resolves the pairs of all passes and metrics again and
  rewrites (each Parquet file atomically) only the data_errors files of the passes whose
  stored pairs that changes: most passes change nothing.

A stored row is rewritten from what it is stored under and whether its record had an id of
its own. A row with its own id stays that job and takes the job's shown name; a row whose
record named only its job (an activity-log message, a bare CSV ``Resource``) follows the jobs
of its name. Those rows are written to files of their own (``pNNNNNNNN-named-...``), so a
file tells which kind its rows are. Settling is idempotent: a rewrite interrupted half-way is
finished by the next :func:`settle`, and a pass redone after a crash drops its own file here
with its table files.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from diagnostics.aggregates import TableName, table_files
from diagnostics.errors import InputError
from diagnostics.logs.jobs import resolve_jobs
from diagnostics.watch.files import write_json_atomic, write_parquet_atomic

#: A (job_id, job) pair: as a record gives it, or as a row is stored.
Pair = tuple[str | None, str | None]
#: What follows the pass tag in the name of a file of rows whose records named only their job.
NAMED = "named-"
_TAG = re.compile(r"p(\d{8})-")
_STORE = re.compile(r"p(\d{8})\.json")
JOB_ID = "job_id"


def tag(number: int) -> str:
    """The start of the name of every table file pass ``number`` added."""
    return f"p{number:08d}-"


def is_named(pair: Pair) -> bool:
    """True for the pair of a record that names its job but has no resource id."""
    return pair[0] is None and pair[1] is not None


@dataclass(frozen=True)
class PassJobs:
    """The jobs of one pass's data_errors rows: the pairs read per source file, and the pair
    each is stored under."""

    number: int
    sources: Mapping[str, frozenset[Pair]]
    applied: Mapping[Pair, Pair] = field(default_factory=dict)

    def pairs(self) -> set[Pair]:
        """Every pair the pass's rows had as read."""
        return {pair for pairs in self.sources.values() for pair in pairs}

    def stale(self, target: Mapping[Pair, Pair]) -> bool:
        """True when some row of the pass is stored under another pair than ``target``'s."""
        return any(self.applied.get(pair) != target.get(pair, pair) for pair in self.pairs())

    def to_json(self) -> dict[str, Any]:
        """The JSON form of its file."""
        return {
            "sources": {s: sorted(map(list, p), key=_order) for s, p in self.sources.items()},
            "applied": sorted(([*k, *v] for k, v in self.applied.items()), key=_order),
        }

    @classmethod
    def from_json(cls, number: int, value: Any) -> PassJobs:
        """Parse the JSON form; raises ``TypeError``/``ValueError`` when malformed."""
        if not isinstance(value, dict):
            msg = "not a JSON object"
            raise TypeError(msg)
        for key in ("sources", "applied"):
            if key not in value:
                msg = f"no field {key!r}"
                raise ValueError(msg)
        if not isinstance(value["sources"], dict):
            msg = "'sources' is not an object"
            raise TypeError(msg)
        sources = {
            _text(name): frozenset(_pair(item) for item in _list(pairs))
            for name, pairs in value["sources"].items()
        }
        applied: dict[Pair, Pair] = {}
        for item in _list(value["applied"]):
            row = _list(item)
            if len(row) != 4:
                msg = f"an 'applied' entry {item!r} is not [job_id, job, job_id, job]"
                raise ValueError(msg)
            applied[_pair(row[:2])] = _pair(row[2:])
        return cls(number, sources, applied)


def _order(row: list) -> list[str]:
    return ["" if v is None else f"_{v}" for v in row]


def _list(value: Any) -> list:
    if not isinstance(value, list):
        msg = f"{value!r} is not a list"
        raise TypeError(msg)
    return value


def _text(value: Any) -> str:
    if not isinstance(value, str):
        msg = f"{value!r} is not a string"
        raise TypeError(msg)
    return value


def _pair(value: Any) -> Pair:
    items = _list(value)
    if len(items) != 2 or not all(v is None or isinstance(v, str) for v in items):
        msg = f"{value!r} is not a [job_id, job] pair"
        raise ValueError(msg)
    return items[0], items[1]


class JobStore:
    """The per-pass job files under ``STATE/jobs``, each replaced atomically."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def path(self, number: int) -> Path:
        """The file of pass ``number``."""
        return self.folder / f"p{number:08d}.json"

    def numbers(self) -> set[int]:
        """The passes that have a file."""
        if not self.folder.is_dir():
            return set()
        matches = (_STORE.fullmatch(p.name) for p in self.folder.iterdir())
        return {int(m.group(1)) for m in matches if m is not None}

    def load(self) -> dict[int, PassJobs]:
        """Every pass's jobs; a corrupt file is an :class:`InputError` naming it."""
        found: dict[int, PassJobs] = {}
        for number in sorted(self.numbers()):
            path = self.path(number)
            try:
                found[number] = PassJobs.from_json(number, json.loads(path.read_bytes()))
            except (OSError, UnicodeDecodeError, TypeError, ValueError) as exc:
                msg = (
                    f"{path}: corrupt watcher state ({exc}); move the state folder away to "
                    "start over (the logs are read again)"
                )
                raise InputError(msg) from exc
        return found

    def save(self, jobs: PassJobs) -> None:
        """Write (or replace) the file of ``jobs.number``."""
        write_json_atomic(self.path(jobs.number), jobs.to_json())

    def drop(self, number: int) -> None:
        """Delete the file of pass ``number`` (before the pass is redone)."""
        self.path(number).unlink(missing_ok=True)

    def forget(self, source_files: Iterable[str], number: int) -> None:
        """Remove ``source_files`` from the passes before ``number`` (their rows there were
        removed: the files are read again from the start)."""
        gone = set(source_files)
        if not gone:
            return
        for jobs in self.load().values():
            if jobs.number != number and gone & set(jobs.sources):
                kept = {s: p for s, p in jobs.sources.items() if s not in gone}
                self.save(PassJobs(jobs.number, kept, jobs.applied))


class Resolution:
    """The pair a stored row is shown under, from ``mapping`` (pair read -> pair shown, as
    :func:`resolve_jobs` gives it) and whether the row's record named only its job."""

    def __init__(self, mapping: Mapping[Pair, Pair]) -> None:
        self._by_id: dict[str, Pair] = {}
        self._by_name: dict[str, Pair] = {}
        for (job_id, name), shown in mapping.items():
            if job_id is not None:
                self._by_id[job_id] = shown
            elif name is not None:
                self._by_name[name.lower()] = shown

    def row(self, named: bool, stored: Pair) -> Pair:
        """The pair for a row stored under ``stored``. A row with an id of its own keeps it;
        a row that named only its job is found by that name: the id it joined ends with it
        (``.../streamingjobs/<name>``), and a name shown without an id is the name itself."""
        job_id, name = stored
        if not named:
            return stored if job_id is None else self._by_id.get(job_id, stored)
        if name is None:
            return stored
        key = job_id.rsplit("/", 1)[-1] if job_id is not None else name.lower()
        return self._by_name.get(key, stored)


def with_job_id(table: pa.Table) -> pa.Table:
    """``table`` with a ``job_id`` column. A data_errors file written by a watcher from before
    the column existed read no resource ids: its rows get a null id (placed after ``job``, as
    the schema orders them), so they are rows whose records named only their job."""
    if JOB_ID in table.column_names:
        return table
    names = table.column_names
    at = names.index("job") + 1 if "job" in names else len(names)
    return table.add_column(
        at, pa.field(JOB_ID, pa.string()), pa.nulls(table.num_rows, pa.string())
    )


def _read(path: Path, columns: list[str] | None = None) -> pa.Table:
    """The data_errors file ``path`` (or its ``columns``), with a ``job_id`` column even when
    it was written without one (:func:`with_job_id`)."""
    with pq.ParquetFile(path) as file:
        present = JOB_ID in file.schema_arrow.names
        wanted = columns if columns is None or present else [c for c in columns if c != JOB_ID]
        table = file.read(columns=wanted)
    if present:
        return table
    table = with_job_id(table)
    return table if columns is None else table.select(columns)


def _pair_codes(table: pa.Table) -> tuple[list[Pair], pa.ChunkedArray]:
    """The distinct (job_id, job) pairs of ``table`` and, per row, the index of its pair."""
    columns = [table["job_id"], table["job"]]
    values = [pc.unique(c) for c in columns]
    codes = [
        pc.index_in(c, value_set=v, skip_nulls=False).cast(pa.int64())
        for c, v in zip(columns, values, strict=True)
    ]
    width = max(1, len(values[1]))
    combined = pc.add(pc.multiply(codes[0], width), codes[1])
    present = pc.unique(combined)
    ids, names = values[0].to_pylist(), values[1].to_pylist()
    pairs = [(ids[code // width], names[code % width]) for code in present.to_pylist()]
    return pairs, pc.index_in(combined, value_set=present)


def settle_file(path: Path, named: bool, resolution: Resolution) -> bool:
    """Rewrite the data_errors file ``path`` (atomically) so that every row is stored under
    the pair ``resolution`` gives it; False when they all are already (nothing written)."""
    pairs, _ = _pair_codes(_read(path, [JOB_ID, "job"]))
    wanted = [resolution.row(named, pair) for pair in pairs]
    if wanted == pairs:
        return False
    table = _read(path)
    pairs, index = _pair_codes(table)  # the same pairs, with the row index of the full read
    wanted = [resolution.row(named, pair) for pair in pairs]
    for position, column in enumerate(("job_id", "job")):
        values = pa.array([pair[position] for pair in wanted], pa.string())
        at = table.schema.get_field_index(column)
        table = table.set_column(at, table.schema.field(at), pc.take(values, index))
    write_parquet_atomic(path, table)
    return True


def pass_files(agg: Path) -> dict[int, list[tuple[Path, bool]]]:
    """The data_errors files by the pass that added them, each with True for a file of rows
    whose records named only their job."""
    found: dict[int, list[tuple[Path, bool]]] = {}
    for path in table_files(agg, TableName.DATA_ERRORS):
        match = _TAG.match(path.name)
        if match is not None:
            named = path.name[match.end() :].startswith(NAMED)
            found.setdefault(int(match.group(1)), []).append((path, named))
    return found


def _split_named(path: Path, number: int) -> None:
    """Move the rows of a file that mixes rows with and without ids of their own (as the
    watcher wrote them before it resolved jobs) so that the named ones have a file of their
    own. A file written before the ``job_id`` column existed is rewritten with it (null ids:
    :func:`with_job_id`). Safe to redo: the named rows are written before they leave
    ``path``."""
    with pq.ParquetFile(path) as file:
        old = JOB_ID not in file.schema_arrow.names
        table = with_job_id(file.read())
    mask = pc.and_(pc.is_null(table[JOB_ID]), pc.is_valid(table["job"]))
    count = pc.sum(mask).as_py() or 0
    if count == 0:
        if old:
            write_parquet_atomic(path, table)
        return
    prefix = tag(number)
    target = path.with_name(prefix + NAMED + path.name.removeprefix(prefix))
    if count == table.num_rows:
        if old:
            write_parquet_atomic(target, table)
            path.unlink()
        else:
            path.replace(target)
        return
    write_parquet_atomic(target, table.filter(mask))
    write_parquet_atomic(path, table.filter(pc.invert(mask)))


def adopt_unrecorded(agg: Path, store: JobStore) -> None:
    """Give a job file to the passes whose data_errors files have none: those a watcher wrote
    before it resolved jobs (their rows are stored as read). Their named rows are moved to
    files of their own first."""
    known = store.numbers()
    for number, files in sorted(pass_files(agg).items()):
        if number in known:
            continue
        for path, named in files:
            if not named:
                _split_named(path, number)
        sources: dict[str, set[Pair]] = {}
        for path, _named in pass_files(agg).get(number, []):
            table = _read(path, ["source_file", JOB_ID, "job"])
            for row in table.group_by(["source_file", JOB_ID, "job"]).aggregate([]).to_pylist():
                sources.setdefault(row["source_file"], set()).add((row["job_id"], row["job"]))
        pairs = {pair for found in sources.values() for pair in found}
        frozen = {s: frozenset(p) for s, p in sources.items()}
        store.save(PassJobs(number, frozen, {pair: pair for pair in pairs}))


def known_pairs(store: JobStore, *, besides: int | None = None) -> set[Pair]:
    """The pairs of every pass's rows (but pass ``besides``)."""
    return {p for n, jobs in store.load().items() if n != besides for p in jobs.pairs()}


def settle(agg: Path, store: JobStore, extra: Iterable[Pair] = ()) -> dict[Pair, Pair]:
    """Resolve the pairs of every pass and ``extra`` (the engine metrics') and rewrite the
    data_errors files of the passes stored under other pairs; the resolved mapping."""
    adopt_unrecorded(agg, store)
    passes = store.load()
    target = resolve_jobs({*extra, *(p for jobs in passes.values() for p in jobs.pairs())})
    resolution = Resolution(target)
    files = pass_files(agg)
    for number, jobs in sorted(passes.items()):
        if not jobs.stale(target):
            continue
        for path, named in files.get(number, []):
            settle_file(path, named, resolution)
        pairs = jobs.pairs()
        store.save(PassJobs(number, jobs.sources, {p: target[p] for p in pairs}))
    return target
