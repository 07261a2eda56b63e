"""The app's event captures: an upload (a table, one Event Hubs Capture ``.avro`` file, or a
Capture folder / several ``.avro`` files, each named by its path inside the folder chosen)
or a path on this machine (a file or a Capture folder), read by the command line's reader
(:mod:`diagnostics.captures.reader`: same renames, same column detection), then replayed."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import polars as pl

from diagnostics.appdata.build import (
    CAPTURE_DIR,
    HELD_NULL_FILE,
    SOURCE_FILE,
    CaptureSettings,
    Progress,
    build_from_capture,
    write_held_null,
)
from diagnostics.captures.capture_cache import CaptureCache, default_root
from diagnostics.captures.reader import (
    Capture,
    is_avro,
    read_capture,
    read_capture_bytes,
    read_capture_uploads,
)
from diagnostics.errors import InputError

#: What :func:`build_from_capture` writes beside the tables, removed if it fails midway.
CAPTURE_FILES = (
    "events.parquet",
    "outcomes.parquet",
    "diagnostics.jsonl",
    "metrics.parquet",
    SOURCE_FILE,
    HELD_NULL_FILE,
)


def _quiet(_fraction: float, _message: str) -> None:
    return None


def is_capture_folder(files: Sequence[tuple[str, bytes]]) -> bool:
    """Whether uploads are Event Hubs Capture files read together (a folder upload or
    several ``.avro`` files): more than one, all Avro."""
    return len(files) > 1 and all(is_avro(name, data) for name, data in files)


def read_upload(
    name: str, data: bytes, settings: CaptureSettings, path_format: str | None = None
) -> Capture:
    """An uploaded capture (one file), read as ``settings`` names its columns."""
    return read_capture_bytes(
        name,
        data,
        arrival=settings.arrival_col,
        partition=settings.partition_col,
        path_format=path_format or None,
    )


def read_uploads(
    files: Sequence[tuple[str, bytes]],
    settings: CaptureSettings,
    path_format: str | None = None,
) -> Capture:
    """Uploaded Capture files (``(path inside the folder chosen, bytes)``) as one capture:
    each file's partition from its path, as ``path_format`` (default Capture's) names it."""
    if len(files) == 1:
        return read_upload(*files[0], settings, path_format)
    return read_capture_uploads(
        files,
        arrival=settings.arrival_col,
        partition=settings.partition_col,
        path_format=path_format or None,
    )


def read_path(path: str, settings: CaptureSettings, path_format: str | None = None) -> Capture:
    """A capture file or Event Hubs Capture folder on this machine (Capture files through the
    capture cache, their passthrough columns kept there until the files are written)."""
    if not path.strip():
        msg = "give the path of a capture file or an Event Hubs Capture folder"
        raise InputError(msg)
    return read_capture(
        path.strip(),
        arrival=settings.arrival_col,
        partition=settings.partition_col,
        path_format=path_format or None,
        cache=capture_cache(),
        defer=True,
    )


def capture_cache() -> CaptureCache:
    """The capture cache the command line uses by default (``$ORDERDOC_CACHE``, else the
    user's cache folder); a temporary one when that cannot be used."""
    try:
        return CaptureCache.open(default_root())
    except InputError:
        return CaptureCache.temporary()


def fingerprint(path: str) -> bytes:
    """Changes when a file under ``path`` changes (names, sizes, modification times)."""
    root = Path(path.strip())
    files = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file())
    parts = [f"{p}:{p.stat().st_size}:{p.stat().st_mtime_ns}" for p in files]
    return ("capture-path|" + str(root.resolve()) + "|" + "|".join(parts)).encode()


def _remove_partial(out: Path) -> None:
    for name in CAPTURE_FILES:
        (out / CAPTURE_DIR / name).unlink(missing_ok=True)


def build_from_reader(
    capture: Capture,
    settings: CaptureSettings,
    out: Path,
    progress: Progress = _quiet,
    partitions: Sequence[int] | None = None,
) -> Path:
    """Replay ``capture`` under ``settings`` (columns as the reader chose them) into ``out``.
    If that fails, no partial ``outcomes.parquet`` (or other capture file) is left; a write
    that fails is an :class:`InputError` naming the capture."""
    events, policy = capture.apply(settings.policy)
    resolved = replace(settings, policy=policy, columns=capture.columns)
    said = [c.describe() for c in capture.choices]
    said += [f"renamed {r.describe()}" for r in capture.renames]
    said += [*capture.notes, *capture.warnings]
    progress(0.01, f"read {capture.source}: " + "; ".join(said))
    try:
        built = build_from_capture(
            events, resolved, out, progress, partitions, capture.warnings, capture.deferred
        )
        column = policy.timestamp_by
        write_held_null(out / CAPTURE_DIR, None if column is None else capture.null_values(column))
        return built
    except (OSError, pl.exceptions.PolarsError) as exc:
        _remove_partial(out)
        detail = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        msg = f"{capture.source}: the replay could not be written ({detail})"
        raise InputError(msg) from exc
    except BaseException:
        _remove_partial(out)
        raise
