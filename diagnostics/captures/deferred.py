"""A capture's columns kept out of memory: the passthrough columns of Event Hubs Capture
files (``SequenceNumber``, ``Offset``, ``Properties``, ``SystemProperties``, ``Body``) and
the body fields no ordering rule reads. They stay in the capture cache's entries (one a
file); a command takes into memory the few its query names (:meth:`Deferred.without`), and
the rest join the events again, row for row, where the command writes them: the outcomes
file (:func:`diagnostics.engine.outcomes_files.write_outcomes_file`), the example events of
``diagnostics.jsonl``, the app's ``events.parquet``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

#: The folder, beside the cache entries' folders, of what :meth:`Deferred.remember` keeps.
MEMO = "memo"
#: The Capture columns deferred, in the order they have among a capture's columns.
PASSTHROUGH = ("SequenceNumber", "Offset", "Properties", "SystemProperties", "Body")


@dataclass(frozen=True)
class DeferredColumn:
    """A deferred column: its name in the capture, the cache entry's column that holds it
    and its type in the capture (a file without the column gives nulls)."""

    name: str
    source: str
    dtype: pl.DataType


@dataclass(frozen=True)
class DeferredPart:
    """The deferred columns of one file: ``rows`` rows, read by ``read(sources)``; ``path``:
    the Parquet file that holds them, when one does; ``holds``: the sources it has."""

    rows: int
    read: Callable[[list[str]], pl.DataFrame]
    path: Path | None = None
    holds: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Deferred:
    """The deferred columns, where they stand among all the capture's columns (``order``,
    as the reader names them) and the files that hold them, in row order."""

    columns: tuple[DeferredColumn, ...]
    order: tuple[str, ...]
    parts: tuple[DeferredPart, ...]
    keep: Any = field(default=None, repr=False, compare=False)  # e.g. a temporary folder

    @property
    def names(self) -> tuple[str, ...]:
        """The deferred columns' names."""
        return tuple(c.name for c in self.columns)

    @property
    def rows(self) -> int:
        """The capture's events."""
        return sum(p.rows for p in self.parts)

    def _wanted(self, columns: Sequence[str] | None) -> list[DeferredColumn]:
        by_name = {c.name: c for c in self.columns}
        return list(self.columns) if columns is None else [by_name[c] for c in columns]

    def _exprs(self, part: DeferredPart, wanted: list[DeferredColumn]) -> list[pl.Expr]:
        return [
            pl.col(c.source).cast(c.dtype).alias(c.name)
            if c.source in part.holds
            else pl.lit(None, dtype=c.dtype).alias(c.name)
            for c in wanted
        ]

    def _read(self, part: DeferredPart, wanted: list[DeferredColumn]) -> pl.DataFrame:
        sources = _sources(part, wanted)
        found = part.read(sources) if sources else pl.DataFrame()
        return _as_wanted(found, part, wanted, part.rows)

    def _take(
        self, part: DeferredPart, wanted: list[DeferredColumn], rows: np.ndarray
    ) -> pl.DataFrame:
        """The rows ``rows`` of one file's ``wanted`` columns. A Parquet file is read by
        pyarrow in this thread: polars' threads may be busy writing the outcomes from these
        files, and only the rows taken become a polars frame."""
        if part.path is None:
            return self._read(part, wanted)[rows]
        import pyarrow.parquet as pq

        sources = _sources(part, wanted)
        table = pq.read_table(part.path, columns=sources, use_threads=False).take(rows)
        found = pl.from_arrow(table) if sources else pl.DataFrame()
        assert isinstance(found, pl.DataFrame)
        return _as_wanted(found, part, wanted, len(rows))

    def frames(self, columns: Sequence[str] | None = None) -> Iterator[pl.DataFrame]:
        """The deferred columns (or ``columns`` of them), one file at a time, in row order."""
        wanted = self._wanted(columns)
        for part in self.parts:
            yield self._read(part, wanted)

    def frame(self, columns: Sequence[str] | None = None) -> pl.DataFrame:
        """The deferred columns (or ``columns`` of them) of every row (in memory): the
        files read side by side when each is a Parquet file, else one by one."""
        scan = self.scan(columns)
        if scan is not None:
            try:
                return scan.collect()
            except (OSError, pl.exceptions.PolarsError):
                pass  # an entry went away since: read each file as it can be
        frames = list(self.frames(columns))
        if not frames:
            return self.empty(columns)
        return pl.concat(frames, how="vertical", rechunk=False)

    def empty(self, columns: Sequence[str] | None = None) -> pl.DataFrame:
        """The deferred columns (or ``columns`` of them), no rows."""
        return pl.DataFrame(schema={c.name: c.dtype for c in self._wanted(columns)})

    def scan(self, columns: Sequence[str] | None = None) -> pl.LazyFrame | None:
        """The deferred columns (or ``columns`` of them) of every row, read as they are
        needed (``None``: some file's columns are not in a Parquet file)."""
        if not self.parts or any(p.path is None for p in self.parts):
            return None
        wanted = self._wanted(columns)
        scans = [self._scan(p.path, p, wanted) for p in self.parts if p.path is not None]
        return pl.concat(scans, how="vertical")

    def _scan(self, path: Path, part: DeferredPart, wanted: list[DeferredColumn]) -> pl.LazyFrame:
        """One file's ``wanted`` columns, read as they are needed."""
        scan = pl.scan_parquet(path)
        exprs = self._exprs(part, wanted)
        if any(c.source in part.holds for c in wanted):
            return scan.select(exprs)
        # nulls alone: a select would make one row of them, a column added has the file's
        rows = scan.select(pl.first().alias("\x00rows"))
        return rows.with_columns(exprs).select(pl.nth(list(range(1, len(wanted) + 1))))

    def gather(self, rows: Sequence[int]) -> pl.DataFrame:
        """The deferred columns of the rows ``rows`` (0-based, any order), in that order."""
        wanted = np.asarray(rows, dtype=np.int64)
        columns = list(self.columns)
        starts = np.cumsum([0, *[p.rows for p in self.parts]])
        pieces: list[pl.DataFrame] = []
        positions: list[np.ndarray] = []
        for i, part in enumerate(self.parts):
            mine = np.flatnonzero((wanted >= starts[i]) & (wanted < starts[i + 1]))
            if len(mine):
                pieces.append(self._take(part, columns, wanted[mine] - starts[i]))
                positions.append(mine)
        if not pieces:
            return self.empty()
        found = pl.concat(pieces, how="vertical")
        order = np.argsort(np.concatenate(positions), kind="stable")
        return found[order]

    def full_order(self, light: Sequence[str]) -> list[str]:
        """All the columns in the reader's order, the non-deferred ones named as ``light``
        names them (the same columns, in order, perhaps renamed since)."""
        deferred = set(self.names)
        names = iter(light)
        ordered = [c if c in deferred else next(names) for c in self.order]
        return [*ordered, *names]  # columns added since (a nested field's own column)

    def remember(self, key: dict[str, object], compute: Callable[[], str | None]) -> str | None:
        """``compute()``, kept beside the cache entries these columns are read from (a small
        JSON file a ``key`` and those entries name) and read from there next time: what
        depends only on the capture's files, such as which column names its senders. Not
        kept for a temporary cache or columns that are not in cache entries."""
        paths = [p.path for p in self.parts]
        if self.keep is not None or not paths or any(p is None for p in paths):
            return compute()
        named = json.dumps(
            {"entries": [p.name for p in paths if p is not None], **key}, sort_keys=True
        )
        first = paths[0]
        assert first is not None
        memo = first.parent.parent / MEMO / f"{hashlib.sha256(named.encode()).hexdigest()}.json"
        with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
            value = json.loads(memo.read_text(encoding="utf-8"))["value"]
            if value is None or isinstance(value, str):
                return value
        value = compute()
        with contextlib.suppress(OSError):
            memo.parent.mkdir(exist_ok=True)
            partial = memo.with_name(f".tmp-{uuid.uuid4().hex}")
            partial.write_text(json.dumps({"value": value}), encoding="utf-8")
            partial.replace(memo)
        return value

    def without(self, names: Sequence[str]) -> Deferred:
        """These deferred columns no longer deferred (taken into memory)."""
        gone = set(names)
        return dataclasses.replace(
            self, columns=tuple(c for c in self.columns if c.name not in gone)
        )


def _sources(part: DeferredPart, wanted: list[DeferredColumn]) -> list[str]:
    """The entry's columns that hold ``wanted`` (once each)."""
    return list(dict.fromkeys(c.source for c in wanted if c.source in part.holds))


def _as_wanted(
    found: pl.DataFrame, part: DeferredPart, wanted: list[DeferredColumn], rows: int
) -> pl.DataFrame:
    """``found`` (``rows`` rows of the entry's columns) as the ``wanted`` columns: named and
    typed as the capture has them, nulls for those the file lacks."""
    return pl.DataFrame(
        [
            found[c.source].cast(c.dtype).alias(c.name)
            if c.source in part.holds
            else pl.Series(c.name, [None], dtype=c.dtype).new_from_index(0, rows)
            for c in wanted
        ]
    )


def in_order(frame: pl.LazyFrame | pl.DataFrame, names: Sequence[str]) -> Any:
    """``frame``'s columns ``names`` in this order, each taken by its position: a body
    field may be named like a polars pattern (``*``, ``^...$``)."""
    columns = frame.collect_schema().names()
    at = {name: i for i, name in enumerate(columns)}
    return frame.select(pl.nth([at[name] for name in names]))


def attach(frame: pl.DataFrame, deferred: Deferred | None) -> pl.DataFrame:
    """``frame`` (the capture's non-deferred columns, in order) with the deferred columns
    joined back in place, row for row."""
    if deferred is None:
        return frame
    heavy = deferred.frame() if frame.height else deferred.empty()
    inputs = deferred.full_order(frame.columns)
    return in_order(pl.concat([frame, heavy], how="horizontal"), inputs)


def take_columns(
    frame: pl.DataFrame, deferred: Deferred, names: Sequence[str]
) -> tuple[pl.DataFrame, Deferred | None]:
    """``frame`` (the capture's non-deferred columns, in order) with the deferred columns
    ``names`` read into it, each in its place, and what stays deferred."""
    wanted = [n for n in dict.fromkeys(names) if n in deferred.names]
    if not wanted:
        return frame, deferred
    added = deferred.frame(wanted) if frame.height else deferred.empty(wanted)
    rest = deferred.without(wanted)
    staying = set(rest.names)
    order = [c for c in deferred.full_order(frame.columns) if c not in staying]
    joined = in_order(pl.concat([frame, added], how="horizontal"), order)
    return joined, rest if rest.columns else None


@dataclass(frozen=True)
class BodyFields:
    """The deferred body fields that may name senders (:attr:`names`), read on a call (all
    of them, or the ``names`` given), row for row with the events: what
    :func:`diagnostics.engine.summary.summarize` reads to name the senders of a few events,
    and :meth:`remember` keeps which column names them (:meth:`Deferred.remember`)."""

    rest: Deferred
    names: tuple[str, ...]
    rows: int

    def __call__(self, names: Sequence[str] | None = None) -> pl.DataFrame:
        wanted = list(self.names if names is None else names)
        return self.rest.frame(wanted) if self.rows else self.rest.empty(wanted)

    def remember(self, key: dict[str, object], compute: Callable[[], str | None]) -> str | None:
        """:meth:`Deferred.remember` of the capture these fields belong to."""
        return self.rest.remember(key, compute)


def body_fields_reader(
    deferred: Deferred | None, frame: pl.DataFrame, held: Sequence[str] = ()
) -> BodyFields | None:
    """The deferred body fields (not the passthrough columns) that ``frame`` lacks (and the
    caller does not hold: ``held``) and that may name senders (text, whole numbers), to read
    row for row with it; ``None`` when there are none (to name the senders of a few events:
    :func:`diagnostics.engine.summary.summarize`)."""
    rest = still_deferred(deferred, frame)
    if rest is None:
        return None
    names = tuple(
        c.name
        for c in rest.columns
        if c.name not in PASSTHROUGH and c.name not in held and _may_name(c.dtype)
    )
    if not names:
        return None
    return BodyFields(rest, names, frame.height)


def _may_name(dtype: pl.DataType) -> bool:
    """Whether a column of ``dtype`` may name senders (text or whole numbers; a reading,
    a float, never does: ``diagnostics.whatif.sender_names.kind_ok``)."""
    return dtype == pl.String or dtype == pl.Categorical or dtype.is_integer()


def still_deferred(deferred: Deferred | None, frame: pl.DataFrame) -> Deferred | None:
    """The columns of ``deferred`` that ``frame`` does not hold (those a query names are
    read into the events: :func:`take_columns`); ``None`` when it holds them all."""
    if deferred is None:
        return None
    held = [name for name in deferred.names if name in frame.columns]
    rest = deferred.without(held) if held else deferred
    return rest if rest.columns else None


def rows_with_deferred(
    frame: pl.DataFrame, deferred: Deferred | None, inputs: int
) -> Callable[[Sequence[int]], pl.DataFrame] | None:
    """A function giving the rows ``ids`` (row numbers) of ``frame`` with the deferred
    columns joined in place (``frame``'s first ``inputs`` columns are the capture's other
    input columns); ``None`` when ``frame`` holds every column."""
    deferred = still_deferred(deferred, frame)
    if deferred is None:
        return None
    found = deferred

    def rows(ids: Sequence[int]) -> pl.DataFrame:
        at = sorted({int(i) for i in ids})
        light = frame[at]
        heavy = found.gather(at)
        order = [*found.full_order(light.columns[:inputs]), *light.columns[inputs:]]
        return in_order(pl.concat([light, heavy], how="horizontal"), order)

    return rows
