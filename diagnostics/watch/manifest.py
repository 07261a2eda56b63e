"""The offset manifest: which bytes of which log file the watcher has already aggregated.

Spark's file source hands every new file to the watcher once; it never looks at a file again,
but ASA keeps appending lines to the hour's ``PT1H.json``. The manifest (``STATE/manifest.json``)
records per file how far it was read, and each pass plans what to read next:

* a **JSON Lines** file (the shape ASA appends to; detected as :func:`diagnostics.logs.reader.prepare`
  does) is followed by byte offset: a pass reads the complete lines added since the last pass
  (up to the last newline; a final line without a newline only when it is complete JSON), with
  its line numbers continuing where the last pass stopped, so every record gets the file and
  line it has in a one-shot ``orderdoc aggregate`` of the final file;
* a file of any **other shape** (gzip, CSV, a JSON document) is read whole and read again when
  its size or modification time changes;
* a file that **shrank or was rewritten** (its first bytes changed) is read again from the
  start, and the rows of its earlier reads are dropped (``Plan.replaced``).

A file that disappears keeps the rows already aggregated. Plans are written before a pass starts
(``STATE/plan.json``) and the manifest only after its tables are in place, both atomically: a
pass interrupted at any point is redone with the same plan (:mod:`diagnostics.watch.passes`).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field, fields, replace
from enum import StrEnum
from pathlib import Path
from typing import Any, TypeVar

from diagnostics.errors import InputError
from diagnostics.logs.inputs import classify
from diagnostics.logs.reader import prepare
from diagnostics.watch.files import read_range, write_json_atomic
from diagnostics.watch.state_json import objects, reason, strings, whole

#: Bytes hashed to recognise a rewritten file, and bytes read to detect a file's shape.
HEAD_BYTES = 4096
SHAPE_BYTES = 1024 * 1024
VERSION = 1
_GZIP = b"\x1f\x8b"
_T = TypeVar("_T")


class ReadMode(StrEnum):
    """How a log file is followed: by byte offset (JSON Lines) or re-read whole (other shapes)."""

    LINES = "lines"
    WHOLE = "whole"


@dataclass(frozen=True)
class FileState:
    """What the watcher has read of one log file. ``offset`` bytes were aggregated; the line
    starting there is number ``line``; ``head`` is the SHA-256 of its first bytes (up to
    :data:`HEAD_BYTES`, at most ``offset``)."""

    path: str
    mode: ReadMode
    offset: int
    line: int
    size: int
    mtime_ns: int
    head: str


@dataclass(frozen=True)
class Read:
    """Bytes ``[start, end)`` of ``path`` to parse; the line starting at ``start`` is
    ``first_line``. A :attr:`ReadMode.WHOLE` read always starts at 0."""

    path: str
    start: int
    end: int
    first_line: int
    mode: ReadMode


@dataclass(frozen=True)
class Manifest:
    """The state after ``passes`` passes: the log files read, the metrics files, the skipped."""

    passes: int = 0
    files: tuple[FileState, ...] = ()
    metrics: tuple[str, ...] = ()
    skipped: tuple[str, ...] = ()
    waiting: tuple[str, ...] = ()  # found but not readable yet: tried again each pass

    def by_path(self) -> dict[str, FileState]:
        """The file states keyed by path."""
        return {state.path: state for state in self.files}

    def to_json(self) -> dict[str, Any]:
        """The JSON form of ``manifest.json``."""
        return {"version": VERSION, **asdict(self)}

    @classmethod
    def from_json(cls, value: Mapping[str, Any]) -> Manifest:
        """Parse the JSON form; raises ``KeyError``/``TypeError``/``ValueError`` when malformed
        (a field missing or of the wrong type: every field is checked, so that a bad value is
        found here and not half-way through a pass)."""
        if value.get("version") != VERSION:
            msg = f"unknown manifest version {value.get('version')!r}"
            raise ValueError(msg)
        files = tuple(
            _typed(FileState, {**item, "mode": _mode(item, "files")}, "files")
            for item in objects(value, "files")
        )
        return cls(
            whole(value, "passes"),
            files,
            strings(value, "metrics"),
            strings(value, "skipped"),
            strings(value, "waiting", optional=True),
        )


@dataclass(frozen=True)
class Plan:
    """Pass number ``number``: what to read, which files' earlier rows to drop first, and the
    manifest once it is done."""

    number: int
    reads: tuple[Read, ...]
    replaced: tuple[str, ...]
    after: Manifest = field(default_factory=Manifest)
    unreadable: tuple[str, ...] = ()  # files that could not be read this time (tried again)

    def to_json(self) -> dict[str, Any]:
        """The JSON form of ``plan.json``."""
        return {
            "number": self.number,
            "reads": [asdict(r) for r in self.reads],
            "replaced": list(self.replaced),
            "after": self.after.to_json(),
            "unreadable": list(self.unreadable),
        }

    @classmethod
    def from_json(cls, value: Mapping[str, Any]) -> Plan:
        """Parse the JSON form; raises ``KeyError``/``TypeError``/``ValueError`` when malformed
        (every field's type is checked, as in :meth:`Manifest.from_json`)."""
        reads = tuple(
            _typed(Read, {**r, "mode": _mode(r, "reads")}, "reads") for r in objects(value, "reads")
        )
        after = value["after"]
        if not isinstance(after, dict):
            msg = "'after' is not an object"
            raise TypeError(msg)
        return cls(
            whole(value, "number"),
            reads,
            strings(value, "replaced"),
            Manifest.from_json(after),
            strings(value, "unreadable", optional=True),
        )


def _mode(item: Mapping[str, Any], where: str) -> ReadMode:
    try:
        return ReadMode(item["mode"])
    except KeyError as exc:
        msg = f"an entry of {where!r} has no 'mode'"
        raise KeyError(msg) from exc
    except ValueError as exc:
        msg = f"an entry of {where!r} has the mode {item['mode']!r} (not lines or whole)"
        raise ValueError(msg) from exc


def _typed(kind: type[_T], item: dict[str, Any], where: str) -> _T:
    """``kind(**item)`` after checking that ``item`` has exactly its fields, of its types
    (``str``, ``int``, or the mode)."""
    hints = {f.name: f.type for f in fields(kind)}  # type: ignore[arg-type]
    if set(item) != set(hints):
        msg = f"an entry of {where!r} has the fields {sorted(item)}, not {sorted(hints)}"
        raise KeyError(msg)
    for name, hint in hints.items():
        got = item[name]
        if hint == "int":  # a modification time may be before 1970
            ok = isinstance(got, int) and not isinstance(got, bool)
            ok = ok and (got >= 0 or name == "mtime_ns")
        elif hint == "str":
            ok = isinstance(got, str)
        else:
            ok = isinstance(got, ReadMode)
        if not ok:
            wanted = "a whole number >= 0" if hint == "int" else "a string"
            msg = f"{where}: {name!r} is {got!r}, not {wanted}"
            raise TypeError(msg)
    return kind(**item)


def _digest(path: str, length: int) -> str:
    return hashlib.sha256(read_range(path, 0, min(length, HEAD_BYTES))).hexdigest()


def detect_mode(path: str) -> ReadMode:
    """:attr:`ReadMode.LINES` when ``path`` is (so far) uncompressed JSON Lines."""
    head = read_range(path, 0, SHAPE_BYTES)
    if head[:2] == _GZIP:
        return ReadMode.WHOLE
    _data, _error, shape = prepare(head, path)
    return ReadMode.LINES if shape == "lines" else ReadMode.WHOLE


def complete_end(tail: bytes) -> int:
    """How many bytes of ``tail`` (the bytes after the last read) hold complete lines: up to
    its last newline, or all of it when the text after that newline is complete JSON."""
    cut = tail.rfind(b"\n") + 1
    rest = tail[cut:]
    if rest.strip():
        try:
            json.loads(rest)
        except (ValueError, RecursionError):
            return cut
        return len(tail)
    return cut


def _follow(state: FileState, size: int, mtime_ns: int) -> tuple[Read | None, FileState]:
    """The read of a JSON Lines file from ``state.offset`` on, and the state after it."""
    tail = read_range(state.path, state.offset, size)
    end = state.offset + complete_end(tail)
    taken = tail[: end - state.offset]
    after = replace(
        state,
        offset=end,
        line=state.line + taken.count(b"\n"),
        size=size,
        mtime_ns=mtime_ns,
        head=_digest(state.path, end),
    )
    if end == state.offset:
        return None, after
    return Read(state.path, state.offset, end, state.line, ReadMode.LINES), after


def _fresh(path: str, size: int, mtime_ns: int) -> tuple[Read | None, FileState]:
    mode = detect_mode(path)
    start = FileState(path, mode, 0, 1, size, mtime_ns, _digest(path, 0))
    if mode is ReadMode.LINES:
        return _follow(start, size, mtime_ns)
    done = replace(start, offset=size, head=_digest(path, size))
    return (Read(path, 0, size, 1, mode) if size else None), done


def _changed(state: FileState, size: int, mtime_ns: int) -> bool:
    """True when ``state`` no longer describes the start of the file (rewritten or shrunk)."""
    if state.mode is ReadMode.WHOLE:
        return (size, mtime_ns) != (state.size, state.mtime_ns)
    return size < state.offset or _digest(state.path, state.offset) != state.head


def plan_pass(manifest: Manifest, discovered: Iterable[str]) -> Plan:
    """The next pass over the known files and the ``discovered`` ones (absolute paths).

    The plan is empty (no reads, nothing replaced, same file lists) when nothing changed.
    """
    known = manifest.by_path()
    paths = sorted(set(known) | {str(Path(p)) for p in discovered})
    reads: list[Read] = []
    replaced: list[str] = []
    states: list[FileState] = []
    metrics: set[str] = set(manifest.metrics)
    skipped: set[str] = set(manifest.skipped)
    unreadable: list[str] = []
    waiting: list[str] = []
    for path in paths:
        state = known.get(path)
        try:
            step = _step(path, state, manifest_metrics=metrics, skipped=skipped)
        except OSError as exc:  # unreadable now: keep what was read, try again next pass
            if os.path.exists(path):
                unreadable.append(f"{path}: {exc.strerror or exc}")
            if state is not None:
                states.append(state)
            elif os.path.exists(path):
                waiting.append(path)
            continue
        if step is None:
            continue
        read, after, was_replaced = step
        if was_replaced:
            replaced.append(path)
        if read is not None:
            reads.append(read)
        states.append(after)
    after_manifest = Manifest(
        manifest.passes + 1,
        tuple(states),
        tuple(sorted(metrics)),
        tuple(sorted(skipped)),
        tuple(waiting),
    )
    return Plan(
        manifest.passes + 1, tuple(reads), tuple(replaced), after_manifest, tuple(unreadable)
    )


def _step(
    path: str, state: FileState | None, *, manifest_metrics: set[str], skipped: set[str]
) -> tuple[Read | None, FileState, bool] | None:
    """One file's read, state after it, and whether its earlier rows are dropped; ``None``
    for a file that is not a log (recorded in ``manifest_metrics`` or ``skipped``)."""
    stat = os.stat(path)
    if state is None:
        kind = classify(Path(path))
        if kind != "log":
            (manifest_metrics if kind == "metrics" else skipped).add(path)
            return None
        return (*_fresh(path, stat.st_size, stat.st_mtime_ns), False)
    if _changed(state, stat.st_size, stat.st_mtime_ns):
        return (*_fresh(path, stat.st_size, stat.st_mtime_ns), True)
    if state.mode is ReadMode.LINES and stat.st_size > state.offset:
        return (*_follow(state, stat.st_size, stat.st_mtime_ns), False)
    return None, replace(state, size=stat.st_size, mtime_ns=stat.st_mtime_ns), False


def is_empty(plan: Plan, manifest: Manifest) -> bool:
    """True when ``plan`` reads and drops nothing and lists the same files as ``manifest``."""
    return (
        not plan.reads
        and not plan.replaced
        and plan.after.metrics == manifest.metrics
        and plan.after.skipped == manifest.skipped
        and plan.after.waiting == manifest.waiting
        and {s.path for s in plan.after.files} == {s.path for s in manifest.files}
    )


class StateFiles:
    """``manifest.json`` and ``plan.json`` of a state folder, read and written atomically."""

    def __init__(self, root: Path) -> None:
        self.manifest_path = root / "manifest.json"
        self.plan_path = root / "plan.json"

    def _load(self, path: Path) -> dict[str, Any] | None:
        if not path.exists():
            return None
        try:
            value = json.loads(path.read_text(encoding="utf-8"))
            if not isinstance(value, dict):
                msg = "not a JSON object"
                raise TypeError(msg)
            return value
        except (OSError, UnicodeDecodeError, ValueError, TypeError) as exc:
            msg = (
                f"{path}: corrupt watcher state ({exc}); move the state folder away to start "
                "over (the logs are read again)"
            )
            raise InputError(msg) from exc

    def manifest(self) -> Manifest:
        """The last committed manifest (empty before the first pass)."""
        value = self._load(self.manifest_path)
        if value is None:
            return Manifest()
        try:
            return Manifest.from_json(value)
        except (KeyError, TypeError, ValueError) as exc:
            msg = f"{self.manifest_path}: corrupt watcher state ({reason(exc)}); move the state folder away to start over"
            raise InputError(msg) from exc

    def pending_plan(self, manifest: Manifest) -> Plan | None:
        """A plan written but not committed (the pass after ``manifest``), if any."""
        value = self._load(self.plan_path)
        if value is None:
            return None
        try:
            plan = Plan.from_json(value)
        except (KeyError, TypeError, ValueError) as exc:
            msg = f"{self.plan_path}: corrupt watcher state ({reason(exc)}); move the state folder away to start over"
            raise InputError(msg) from exc
        return plan if plan.number == manifest.passes + 1 else None

    def save_plan(self, plan: Plan) -> None:
        """Record ``plan`` before its pass starts."""
        write_json_atomic(self.plan_path, plan.to_json())

    def commit(self, plan: Plan) -> None:
        """Record that ``plan``'s pass is complete: its manifest replaces the old one."""
        write_json_atomic(self.manifest_path, plan.after.to_json())
        self.plan_path.unlink(missing_ok=True)
