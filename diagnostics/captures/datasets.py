"""Parquet captures of several files: a folder of ``.parquet`` files (no ``.avro`` in it: that
is an Event Hubs Capture folder), or a glob (``day/*.parquet``, ``**`` reaching into
subfolders). The files are read in path order (a Spark replay's ``outcomes/`` folder gives
input order) and must share one schema: a file whose columns differ is a one-line error
naming it. Names starting with ``.`` or ``_`` (Spark's ``_SUCCESS``, checksums) are skipped.
"""

from __future__ import annotations

import glob
from pathlib import Path

import polars as pl

from diagnostics.captures.names import Rename, rename_empty
from diagnostics.errors import InputError

PARQUET_SUFFIXES = (".parquet", ".pq")


def _hidden(path: Path, root: Path | None) -> bool:
    parts = path.relative_to(root).parts if root is not None else (path.name,)
    return any(part.startswith((".", "_")) for part in parts)


def _parquet(path: Path) -> bool:
    return path.is_file() and path.suffix.lower() in PARQUET_SUFFIXES


def is_glob(path: str | Path) -> bool:
    """Whether ``path`` is a pattern rather than a file or folder that exists."""
    text = str(path)
    return glob.has_magic(text) and not Path(text).exists()


def parquet_files(path: str | Path) -> list[Path] | None:
    """The Parquet files ``path`` names, in path order, when it is a glob or a folder holding
    Parquet files and no ``.avro`` file; ``None`` when it is neither. A glob that matches no
    Parquet file is an :class:`InputError`."""
    if is_glob(path):
        matched = [Path(p) for p in glob.glob(str(path), recursive=True)]
        files = sorted(p for p in matched if _parquet(p) and not _hidden(p, None))
        if not files:
            what = "no file" if not matched else "no Parquet file (.parquet)"
            msg = f"{path}: the pattern matches {what}; a glob names Parquet files"
            raise InputError(msg)
        return files
    root = Path(path)
    if not root.is_dir() or next(root.rglob("*.avro"), None) is not None:
        return None
    found = sorted(p for p in root.rglob("*") if _parquet(p) and not _hidden(p, root))
    return found or None


def check_schemas(files: list[Path], schemas: list[pl.Schema]) -> None:
    """One line naming the first file whose columns (names, order, types) differ from the
    first file's."""
    for file, schema in zip(files[1:], schemas[1:], strict=True):
        if schema == schemas[0]:
            continue
        first = schemas[0]
        added = [n for n in schema if n not in first]
        lost = [n for n in first if n not in schema]
        typed = [n for n in schema if n in first and schema[n] != first[n]]
        if added or lost:
            detail = "; ".join(
                part
                for part in (
                    f"has {', '.join(repr(n) for n in added)}" if added else "",
                    f"lacks {', '.join(repr(n) for n in lost)}" if lost else "",
                )
                if part
            )
        elif typed:
            n = typed[0]
            detail = f"column '{n}' is {schema[n]} here but {first[n]} there"
        else:
            detail = "its columns come in another order"
        msg = (
            f"{file}: its columns differ from those of {files[0]} ({detail}); the files of "
            "one Parquet capture share one schema"
        )
        raise InputError(msg)


def read_parquet_files(files: list[Path]) -> tuple[pl.DataFrame, tuple[Rename, ...]]:
    """The files' rows, one after the other, and the renames of their (shared) columns."""
    frames = []
    try:
        for file in files:
            frames.append(pl.read_parquet(file))
    except (OSError, pl.exceptions.PolarsError) as exc:
        detail = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        msg = f"{files[len(frames)]}: cannot be read as parquet: {detail}"
        raise InputError(msg) from exc
    check_schemas(files, [f.schema for f in frames])
    frame, renames = rename_empty(pl.concat(frames, how="vertical"))
    return frame, renames
