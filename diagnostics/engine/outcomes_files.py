"""Where a replay's outcomes are on disk, and reading them: one file or one folder.

The local replay writes ``outcomes.parquet``; ``replay --spark`` writes ``outcomes/``, a
Parquet dataset folder of ``part-NNNNN.parquet`` files numbered in input order
(docs/schemas.md, "ASA replay outcomes"). Every reader of outcomes goes through
:func:`outcomes_in` and :func:`read_outcomes`, so each takes the folder as it takes the file.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import polars as pl

from diagnostics.captures.deferred import in_order
from diagnostics.errors import InputError

if TYPE_CHECKING:
    from diagnostics.captures.deferred import Deferred

#: The local replay's outcomes file.
OUTCOMES_FILE = "outcomes.parquet"
#: The Spark replay's outcomes folder (a Parquet dataset).
OUTCOMES_FOLDER = "outcomes"
#: The part files of an outcomes folder (files being written have a hidden temporary name).
PART_GLOB = "part-*.parquet"


def outcomes_in(folder: Path) -> Path | None:
    """The outcomes a replay wrote into ``folder``: ``outcomes.parquet``, else the
    ``outcomes/`` folder, else ``None``."""
    file = folder / OUTCOMES_FILE
    if file.is_file():
        return file
    parts = folder / OUTCOMES_FOLDER
    return parts if parts.is_dir() else None


def part_files(path: Path) -> list[Path]:
    """The files that hold the outcomes at ``path``: the file itself, or a folder's part
    files in name order (input order). A folder without one is an :class:`InputError`."""
    if not path.is_dir():
        return [path]
    parts = sorted(p for p in path.glob(PART_GLOB) if p.is_file())
    if not parts:
        msg = (
            f"{path}: no {PART_GLOB} file in this outcomes folder (a replay that did not "
            "finish?); replay the capture again"
        )
        raise InputError(msg)
    return parts


def read_outcomes(path: str | Path, columns: Sequence[str] | None = None) -> pl.DataFrame:
    """The outcomes at ``path`` (``outcomes.parquet`` or an ``outcomes/`` folder) as one
    frame in input order; ``columns``: only these."""
    path = Path(path)
    if not path.exists():
        msg = f"{path}: no such outcomes file or folder"
        raise InputError(msg)
    wanted = None if columns is None else list(columns)
    frames = []
    for part in part_files(path):
        try:
            frames.append(pl.read_parquet(part, columns=wanted))
        except (OSError, pl.exceptions.PolarsError) as exc:
            detail = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            msg = f"{part}: cannot be read as replay outcomes ({detail})"
            raise InputError(msg) from exc
    if len(frames) == 1:
        return frames[0]
    try:
        return pl.concat(frames, how="vertical").rechunk()
    except pl.exceptions.PolarsError as exc:
        detail = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        msg = f"{path}: its part files do not hold the same columns ({detail})"
        raise InputError(msg) from exc


#: The outcome files' compression: lz4 writes in less CPU than zstd (a replay of 2M
#: Capture events: 0.2 CPU-s less, a file 1.6 times larger; docs/performance.md)
COMPRESSION: Literal["lz4"] = "lz4"
#: Rows of outcomes per Parquet row group when the passthrough columns join them on the way.
ROW_GROUP = 65_536


def write_outcomes_file(
    path: Path, outcomes: pl.DataFrame, deferred: Deferred | None = None, inputs: int = 0
) -> None:
    """Write ``outcomes`` (Parquet, :data:`COMPRESSION`) to ``path``; with ``deferred``, its passthrough
    columns joined back in place, row for row, a row group at a time (the first ``inputs``
    columns of ``outcomes`` are the capture's other input columns, perhaps renamed)."""
    if deferred is None:
        outcomes.write_parquet(path, compression=COMPRESSION)
        return
    if deferred.rows != outcomes.height:
        msg = f"{deferred.rows} rows of passthrough columns for {outcomes.height} outcomes"
        raise ValueError(msg)
    order = [*deferred.full_order(outcomes.columns[:inputs]), *outcomes.columns[inputs:]]
    heavy = deferred.scan()
    if heavy is not None:  # streamed from the cache's files into the outcomes file
        try:
            joined = in_order(pl.concat([outcomes.lazy(), heavy], how="horizontal"), order)
            joined.sink_parquet(path, compression=COMPRESSION)
        except pl.exceptions.PolarsError as exc:
            raise OSError(str(exc).splitlines()[0] if str(exc) else type(exc).__name__) from exc
        return
    import pyarrow as pa
    import pyarrow.parquet as pq

    writer: pq.ParquetWriter | None = None
    start = 0
    pending: list[pl.DataFrame] = []
    held = 0

    def flush() -> None:
        nonlocal writer, start, held
        if not pending:
            return
        heavy = pl.concat(pending, how="vertical")
        rows = outcomes.slice(start, heavy.height)
        chunk = in_order(pl.concat([rows, heavy], how="horizontal"), order).to_arrow()
        if writer is None:
            writer = pq.ParquetWriter(path, chunk.schema, compression=COMPRESSION)
        writer.write_table(chunk, row_group_size=max(heavy.height, 1))
        start += heavy.height
        pending.clear()
        held = 0

    try:
        for frame in deferred.frames():
            pending.append(frame)
            held += frame.height
            if held >= ROW_GROUP:
                flush()
        flush()
        if writer is None:  # no rows: the columns alone
            empty = pl.concat([outcomes.head(0), deferred.frame().head(0)], how="horizontal")
            pq.write_table(in_order(empty, order).to_arrow(), path)
    except (pa.ArrowException, pl.exceptions.PolarsError) as exc:
        raise OSError(str(exc).splitlines()[0] if str(exc) else type(exc).__name__) from exc
    finally:
        if writer is not None:
            writer.close()
