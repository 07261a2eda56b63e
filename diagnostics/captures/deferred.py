"""A capture's passthrough columns kept out of memory: ``SequenceNumber``, ``Offset``,
``Properties``, ``SystemProperties`` and ``Body`` of Event Hubs Capture files, which no
ordering rule reads. They stay in the capture cache's entries (one a file) and join the
events again, row for row, where a command writes them: the outcomes file
(:func:`diagnostics.engine.outcomes_files.write_outcomes`) and the example events of
``diagnostics.jsonl``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

#: The Capture columns deferred, in the order they have among a capture's columns.
PASSTHROUGH = ("SequenceNumber", "Offset", "Properties", "SystemProperties", "Body")


@dataclass(frozen=True)
class DeferredPart:
    """The deferred columns of one file: ``rows`` rows, read by ``read(columns)``; ``path``:
    the Parquet file that holds them, when one does."""

    rows: int
    read: Callable[[list[str]], pl.DataFrame]
    path: Path | None = None


@dataclass(frozen=True)
class Deferred:
    """The deferred columns (``names``), where they stand among all the capture's columns
    (``order``, as the reader names them) and the files that hold them, in row order."""

    names: tuple[str, ...]
    order: tuple[str, ...]
    parts: tuple[DeferredPart, ...]
    keep: Any = field(default=None, repr=False, compare=False)  # e.g. a temporary folder

    @property
    def rows(self) -> int:
        """The capture's events."""
        return sum(p.rows for p in self.parts)

    def frames(self, columns: Sequence[str] | None = None) -> Iterator[pl.DataFrame]:
        """The deferred columns (or ``columns`` of them), one file at a time, in row order."""
        wanted = list(self.names if columns is None else columns)
        for part in self.parts:
            yield part.read(wanted) if part.rows else _empty(part, wanted)

    def scan(self, columns: Sequence[str] | None = None) -> pl.LazyFrame | None:
        """The deferred columns (or ``columns`` of them) of every row, read as they are
        needed (``None``: some file's columns are not in a Parquet file)."""
        if not self.parts or any(p.path is None for p in self.parts):
            return None
        wanted = list(self.names if columns is None else columns)
        paths = [p.path for p in self.parts if p.path is not None]
        return pl.scan_parquet(paths).select(wanted)

    def frame(self, columns: Sequence[str] | None = None) -> pl.DataFrame:
        """The deferred columns of every row (in memory)."""
        frames = list(self.frames(columns))
        return pl.concat(frames, how="vertical") if frames else pl.DataFrame()

    def gather(self, rows: Sequence[int]) -> pl.DataFrame:
        """The deferred columns of the rows ``rows`` (0-based, any order), in that order."""
        wanted = np.asarray(rows, dtype=np.int64)
        starts = np.cumsum([0, *[p.rows for p in self.parts]])
        pieces: list[pl.DataFrame] = []
        positions: list[np.ndarray] = []
        for i, part in enumerate(self.parts):
            mine = np.flatnonzero((wanted >= starts[i]) & (wanted < starts[i + 1]))
            if len(mine):
                frame = part.read(list(self.names))
                pieces.append(frame[wanted[mine] - starts[i]])
                positions.append(mine)
        if not pieces:
            return self.frame().head(0)
        found = pl.concat(pieces, how="vertical")
        order = np.argsort(np.concatenate(positions), kind="stable")
        return found[order]

    def full_order(self, light: Sequence[str]) -> list[str]:
        """All the columns in the reader's order, the non-deferred ones named as ``light``
        names them (the same columns, in order, perhaps renamed since)."""
        names = iter(light)
        ordered = [c if c in self.names else next(names) for c in self.order]
        return [*ordered, *names]  # columns added since (a nested field's own column)


def _empty(part: DeferredPart, columns: list[str]) -> pl.DataFrame:
    return part.read(columns).head(0)


def attach(
    frame: pl.DataFrame, deferred: Deferred | None, light: int | None = None
) -> pl.DataFrame:
    """``frame`` (its first ``light`` columns the capture's non-deferred columns, default
    all) with the deferred columns joined back in place, row for row."""
    if deferred is None:
        return frame
    light = frame.width if light is None else light
    heavy = deferred.frame()
    inputs = deferred.full_order(frame.columns[:light])
    joined = pl.concat([frame, heavy], how="horizontal")
    return joined.select([*inputs, *frame.columns[light:]])


def still_deferred(deferred: Deferred | None, frame: pl.DataFrame) -> Deferred | None:
    """``deferred``, unless ``frame`` holds its columns already (a column setting named one
    of them, and the capture was read whole)."""
    if deferred is None or any(name in frame.columns for name in deferred.names):
        return None
    return deferred


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
        return pl.concat([light, heavy], how="horizontal").select(order)

    return rows
