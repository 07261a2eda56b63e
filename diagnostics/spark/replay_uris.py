"""A capture named by a URI (``abfss://``, ``wasbs://``, ``s3a://``, ``hdfs://``, ``dbfs:/``,
``file://``...) on Spark: listed and read by the cluster's own file systems (stage S0,
docs/spark-replay.md).

The URI is handed to Spark as it is: reading a storage account is the cluster's
configuration (its Hadoop connectors and credentials, as on Databricks and Synapse), never
this program's. Spark's ``binaryFile`` reader lists the files (path and length: no data is
read on the driver), then its tasks copy each file's bytes into a folder of the run's output
folder, which the executors already share (they write ``outcomes/`` there); the replay then
reads that copy as it reads a local capture, so a URI capture is replayed exactly as the same
files on a local disk. Both steps are DataFrame reads, so they work on Spark Connect too.

The ``binaryFile`` reader holds one file's bytes in a task's memory (the copy's Arrow batches
hold one file each) and refuses files over 2 GiB: cut larger files before replaying them
from a URI.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlparse

import pyarrow as pa

from diagnostics.errors import InputError, UsageError
from diagnostics.spark.session import settings_set

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

#: The folder of the run's output folder a URI capture is copied into (removed at the end).
COPY_FOLDER = ".capture"
#: ``scheme:/`` or ``scheme://`` with a scheme of two characters or more (``C:/`` is a
#: Windows drive, not a scheme).
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]+):/")
_GLOB = re.compile(r"[*?\[{]")
_BATCH_CONF = "spark.sql.execution.arrow.maxRecordsPerBatch"
_COPIED = pa.schema([("path", pa.string()), ("bytes", pa.int64())])
#: What Spark (classic or Connect) says when the cluster cannot open a scheme's paths.
_NO_FILE_SYSTEM = (
    "No FileSystem for scheme",
    "UnsupportedFileSystemException",
    "ClassNotFoundException: Class org.apache.hadoop.fs",
)


def scheme_of(path: str) -> str | None:
    """The URI scheme ``path`` starts with (``abfss``, ``file``, ``dbfs``...), or ``None``
    for a path on this machine."""
    found = _SCHEME.match(path)
    return found.group(1).lower() if found else None


@dataclass(frozen=True, slots=True)
class Listed:
    """The files Spark lists at ``uri``: (URI, path relative to the folder the URI names,
    length); ``local``: what to read in the copy of that folder (the file's name, the glob's
    remaining pattern, or empty: the folder itself)."""

    uri: str
    files: tuple[tuple[str, str, int], ...]
    local: str


def _path_of(uri: str) -> str:
    return unquote(urlparse(uri).path).rstrip("/") or "/"


def _split_glob(path: str) -> tuple[str, str]:
    """``path`` as (folder without wildcards, the rest: empty without a glob)."""
    parts = PurePosixPath(path).parts
    for i, part in enumerate(parts):
        if _GLOB.search(part):
            return str(PurePosixPath(*parts[:i])), str(PurePosixPath(*parts[i:]))
    return path, ""


def _one_line(uri: str, exc: Exception, doing: str = "list") -> Exception:
    text = str(exc)
    scheme = scheme_of(uri) or "file"
    if any(mark in text for mark in _NO_FILE_SYSTEM):
        msg = (
            f"{uri}: this Spark has no file system for scheme '{scheme}' (reading {scheme}: "
            "paths is the cluster's configuration: its connector and credentials)"
        )
        return UsageError(msg)
    if "PATH_NOT_FOUND" in text or "Path does not exist" in text:
        return InputError(f"{uri}: no such file or folder")
    first = next((line.strip() for line in text.splitlines() if line.strip()), type(exc).__name__)
    return InputError(f"{uri}: Spark cannot {doing} it: {first}")


def _reader(spark: SparkSession):  # type: ignore[no-untyped-def]
    return spark.read.format("binaryFile").option("recursiveFileLookup", "true")


def list_uri(spark: SparkSession, uri: str) -> Listed:
    """The files at ``uri`` (a file, a folder, read recursively, or a glob), listed by Spark
    (files whose names start with ``_`` or ``.`` left out, as Spark's readers do)."""
    try:
        rows = _reader(spark).load(uri).select("path", "length").collect()
    except Exception as exc:  # Spark's errors, classic or Connect: one line
        raise _one_line(uri, exc) from exc
    folder, local = _split_glob(_path_of(uri))
    found = sorted((str(r["path"]), _path_of(str(r["path"])), int(r["length"])) for r in rows)
    if not local and len(found) == 1 and found[0][1] == folder:  # the URI names one file
        folder, local = str(PurePosixPath(folder).parent), PurePosixPath(folder).name
    files = []
    for path, at, length in found:
        relative = PurePosixPath(at).relative_to(folder) if at.startswith(folder) else None
        if relative is None or ".." in relative.parts:
            msg = f"{uri}: Spark listed {path}, outside the folder asked for"
            raise InputError(msg)
        files.append((path, str(relative), length))
    return Listed(uri, tuple(files), local)


def copy_batches(
    targets: dict[str, str], batches: Iterator[pa.RecordBatch]
) -> Iterator[pa.RecordBatch]:
    """The copy's task: each file's bytes (columns ``path``, ``content``) written to its
    target (through a temporary name); its path and size out."""
    for batch in batches:
        paths = batch.column("path").to_pylist()
        contents = batch.column("content")
        for i, path in enumerate(paths):
            data = contents[i].as_py()
            target = Path(targets[str(path)])
            target.parent.mkdir(parents=True, exist_ok=True)
            tmp = target.with_name(f".{target.name}.tmp")
            tmp.write_bytes(data)
            tmp.replace(target)
            yield pa.RecordBatch.from_pylist(
                [{"path": str(path), "bytes": len(data)}], schema=_COPIED
            )


def copy_capture(spark: SparkSession, uri: str, folder: Path) -> str:
    """The capture at ``uri`` copied by Spark's tasks into ``folder`` (its layout kept, so the
    local reader sees the same folders and names); the local path to replay (the file, the
    folder, or the folder and the glob's pattern)."""
    listed = list_uri(spark, uri)
    if not listed.files:
        msg = f"{uri}: no files (Spark lists none there)"
        raise InputError(msg)
    targets = {path: str(folder / relative) for path, relative, _ in listed.files}
    folder.mkdir(parents=True, exist_ok=True)
    # one file's bytes in a task's Python at a time
    with settings_set(spark, {_BATCH_CONF: "1"}):
        try:
            copied = (
                _reader(spark)
                .load(uri)
                .select("path", "content")
                .mapInArrow(partial(copy_batches, targets), "path string, bytes long")
                .collect()
            )
        except Exception as exc:  # Spark's errors, classic or Connect: one line
            raise _one_line(uri, exc, "copy") from exc
    sizes = {str(r["path"]): int(r["bytes"]) for r in copied}
    for path, _, length in listed.files:
        if sizes.get(path) != length:
            msg = (
                f"{path}: {length} bytes listed, {sizes.get(path, 0)} copied (changed while read?)"
            )
            raise InputError(msg)
    return str(folder / listed.local) if listed.local else str(folder)


@contextmanager
def removed(folder: Path) -> Iterator[Path]:
    """``folder``, removed when the block ends (a URI capture's copy, if one was made)."""
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)
