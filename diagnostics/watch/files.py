"""Small file-system helpers of the watcher: atomic writes and reading byte ranges.

Every state file of ``orderdoc watch`` is replaced atomically (written to a temporary file in
the same folder, flushed to disk, then renamed over the old one), so a process killed at any
instant leaves either the old or the new content, never a mix.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq


def write_atomic(path: Path, data: bytes) -> None:
    """Replace ``path`` by ``data`` atomically (temporary file + fsync + rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
    sync_folder(path.parent)


def write_json_atomic(path: Path, value: Any) -> None:
    """``value`` as indented JSON, replacing ``path`` atomically."""
    write_atomic(path, (json.dumps(value, indent=1, sort_keys=True) + "\n").encode())


def write_parquet_atomic(path: Path, table: pa.Table) -> None:
    """``table`` as a Parquet file (snappy), replacing ``path`` atomically."""
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, compression="snappy")
    write_atomic(path, sink.getvalue().to_pybytes())


def sync_folder(folder: Path) -> None:
    """Flush a folder's entries (renames) to disk where the platform allows it."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def read_range(path: str, start: int, end: int) -> bytes:
    """Bytes ``[start, end)`` of ``path`` (fewer if the file is shorter)."""
    with open(path, "rb") as handle:
        handle.seek(start)
        return handle.read(max(0, end - start))
