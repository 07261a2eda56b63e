"""The app's event captures: an upload (a table or one Event Hubs Capture ``.avro`` file) or
a path on this machine (a file or a Capture folder), read by the command line's reader
(:mod:`diagnostics.captures.reader`: same renames, same column detection), then replayed."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from diagnostics.appdata.build import CaptureSettings, Progress, build_from_capture
from diagnostics.captures.reader import Capture, read_capture, read_capture_bytes
from diagnostics.errors import InputError


def _quiet(_fraction: float, _message: str) -> None:
    return None


def read_upload(name: str, data: bytes, settings: CaptureSettings) -> Capture:
    """An uploaded capture, read as ``settings`` names its columns."""
    return read_capture_bytes(
        name, data, arrival=settings.arrival_col, partition=settings.partition_col
    )


def read_path(path: str, settings: CaptureSettings) -> Capture:
    """A capture file or Event Hubs Capture folder on this machine."""
    if not path.strip():
        msg = "give the path of a capture file or an Event Hubs Capture folder"
        raise InputError(msg)
    return read_capture(
        path.strip(), arrival=settings.arrival_col, partition=settings.partition_col
    )


def fingerprint(path: str) -> bytes:
    """Changes when a file under ``path`` changes (names, sizes, modification times)."""
    root = Path(path.strip())
    files = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file())
    parts = [f"{p}:{p.stat().st_size}:{p.stat().st_mtime_ns}" for p in files]
    return ("capture-path|" + str(root.resolve()) + "|" + "|".join(parts)).encode()


def build_from_reader(
    capture: Capture,
    settings: CaptureSettings,
    out: Path,
    progress: Progress = _quiet,
    partitions: Sequence[int] | None = None,
) -> Path:
    """Replay ``capture`` under ``settings`` (columns as the reader chose them) into ``out``."""
    events, policy = capture.apply(settings.policy)
    resolved = replace(settings, policy=policy, columns=capture.columns)
    said = [c.describe() for c in capture.choices]
    said += [f"renamed {r.describe()}" for r in capture.renames]
    progress(0.01, f"read {capture.source}: " + "; ".join(said))
    return build_from_capture(events, resolved, out, progress, partitions)
