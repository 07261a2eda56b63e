"""Event Hubs Capture file paths: which files make a capture, and each file's partition and
path time, from the naming Capture writes (``{Namespace}/{EventHub}/{PartitionId}/{Year}/
{Month}/{Day}/{Hour}/{Minute}/{Second}``, or a custom one with the same placeholders).

A path on this machine is matched as an absolute path (``.`` and relative paths resolved), so
``cd <capture>/ns/hub && orderdoc replay .`` and ``orderdoc replay 00.avro`` inside a
partition's folder find the same partitions as the capture's root does. An upload's path is
relative to the folder the user chose (``hub/0/2024/.../00.avro``): it may lack the leading
segments of the naming, as long as the segment holding ``{PartitionId}`` is there.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from diagnostics.errors import InputError, Setting, SettingError

DEFAULT_PATH_FORMAT = (
    "{Namespace}/{EventHub}/{PartitionId}/{Year}/{Month}/{Day}/{Hour}/{Minute}/{Second}"
)
_PLACEHOLDERS = {
    "Namespace": r"[^/]+",
    "EventHub": r"[^/]+",
    "PartitionId": r"\d+",
    "Year": r"\d{4}",
    "Month": r"\d{1,2}",
    "Day": r"\d{1,2}",
    "Hour": r"\d{1,2}",
    "Minute": r"\d{1,2}",
    "Second": r"\d{1,2}",
}
_TIME_KEYS = ("Year", "Month", "Day", "Hour", "Minute", "Second")


@dataclass(frozen=True, slots=True)
class CaptureFile:
    """One Capture file, its partition (from the path; ``None``: not known) and path time."""

    path: Path
    partition: int | None
    time: tuple[int, ...]
    data: bytes | None = None  # an upload's content (``path`` then only names it)


def _compile(path_format: str, text: str) -> re.Pattern[str]:
    parts = re.split(r"\{([^}]*)\}", text)
    pattern = ""
    seen = set()
    for i, part in enumerate(parts):
        if i % 2 == 0:
            pattern += re.escape(part)
            continue
        if part not in _PLACEHOLDERS:
            msg = (
                f"capture path format '{path_format}': unknown placeholder {{{part}}}; use "
                f"{', '.join('{' + p + '}' for p in _PLACEHOLDERS)}"
            )
            raise SettingError(msg, Setting.PATH_FORMAT)
        pattern += f"(?P<{part}>{_PLACEHOLDERS[part]})" if part not in seen else f"(?P={part})"
        seen.add(part)
    if "PartitionId" not in seen:
        msg = f"capture path format '{path_format}' has no {{PartitionId}}"
        raise SettingError(msg, Setting.PATH_FORMAT)
    return re.compile(r"(?:^|/)" + pattern + r"$")


def path_regex(path_format: str) -> re.Pattern[str]:
    """The pattern a file path (without ``.avro``) must end with; a :class:`SettingError`
    if ``path_format`` names an unknown placeholder or lacks ``{PartitionId}``."""
    return _compile(path_format, path_format.strip("/"))


def path_regexes(path_format: str, *, relative: bool = False) -> list[re.Pattern[str]]:
    """:func:`path_regex`, and with ``relative`` also the naming without its leading
    segments, down to the one holding ``{PartitionId}`` (for paths inside the capture)."""
    full = path_regex(path_format)
    if not relative:
        return [full]
    segments = path_format.strip("/").split("/")
    last = max(i for i, s in enumerate(segments) if "{PartitionId}" in s)
    return [full] + [_compile(path_format, "/".join(segments[k:])) for k in range(1, last + 1)]


def _match(text: str, regexes: Sequence[re.Pattern[str]]) -> tuple[int, tuple[int, ...]] | None:
    for regex in regexes:
        match = regex.search(text)
        if match is not None:
            values = match.groupdict()
            time = tuple(int(values[k]) for k in _TIME_KEYS if values.get(k) is not None)
            return int(values["PartitionId"]), time
    return None


def _stem(path: str) -> str:
    return path[: -len(".avro")] if path.lower().endswith(".avro") else path


def _local_match(
    path: Path, regexes: Sequence[re.Pattern[str]]
) -> tuple[int, tuple[int, ...]] | None:
    """The absolute path's match (``.``/``..`` resolved; then symlinks, if that fails)."""
    found = _match(_stem(Path(os.path.abspath(path)).as_posix()), regexes)
    if found is None:
        found = _match(_stem(path.resolve().as_posix()), regexes)
    return found


def _ordered(files: list[CaptureFile]) -> list[CaptureFile]:
    return sorted(files, key=lambda f: (f.partition or 0, f.time, f.path.as_posix()))


def _off_format(path: object, path_format: str) -> SettingError:
    msg = f"{path}: the path does not follow the capture path format '{path_format}'"
    return SettingError(msg, Setting.PATH_FORMAT)


def capture_files(root: Path, path_format: str = DEFAULT_PATH_FORMAT) -> list[CaptureFile]:
    """The ``.avro`` files of ``root`` (a file or a folder), in partition then path-time order.

    In a folder every file's path must follow ``path_format``; a single file that does not
    follow it is partition 0. Paths are matched as absolute paths (see the module).
    """
    regexes = path_regexes(path_format)
    paths = sorted(root.rglob("*.avro")) if root.is_dir() else [root]
    if not paths:
        msg = f"{root}: no .avro files in this folder"
        raise InputError(msg)
    found = []
    for path in paths:
        match = _local_match(path, regexes)
        if match is None:
            if root.is_dir():
                raise _off_format(path, path_format)
            found.append(CaptureFile(path, None, ()))
            continue
        found.append(CaptureFile(path, *match))
    return _ordered(found)


def uploaded_files(
    files: Sequence[tuple[str, bytes]], path_format: str = DEFAULT_PATH_FORMAT
) -> list[CaptureFile]:
    """Uploaded ``.avro`` files (name: the path inside the folder the user chose, as a
    folder upload names them) in partition then path-time order. One file whose name does
    not follow ``path_format`` is partition 0; of several, each must follow it."""
    if not files:
        msg = "no .avro files were uploaded"
        raise InputError(msg)
    regexes = path_regexes(path_format, relative=True)
    found = []
    for name, data in files:
        text = name.replace("\\", "/").strip("/")
        match = _match(_stem(text), regexes)
        if match is None:
            if len(files) > 1:
                raise _off_format(name, path_format)
            found.append(CaptureFile(Path(text), None, (), data))
            continue
        found.append(CaptureFile(Path(text), *match, data))
    return _ordered(found)
