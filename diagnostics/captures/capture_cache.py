"""The capture cache: each Event Hubs Capture file, once decoded, kept as a Parquet file, so
that the next command reading it (replay, explain, whatif, impact, translate, cti, the app)
reads columns instead of decoding Avro again.

An entry is keyed by the file's absolute path, size and modification time (an upload: by its
content; a blob staged from a storage account: by its blob name and ETag,
:mod:`diagnostics.storage.staging`), so a file changed, added or removed costs only its own decoding. Entries are written
to a temporary name and renamed (two commands writing the same entry, or a command killed
half-way, never leave a partial entry); an entry that cannot be read is decoded again. The
cache keeps at most :data:`MAX_BYTES` (``ORDERDOC_CACHE_MAX_GB``), dropping the entries
used longest ago; deleting its folder clears it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from diagnostics.captures.bodies import FIELD, NULLS, VALUES
from diagnostics.captures.capture_file import HEAD, FileTable
from diagnostics.captures.paths import CaptureFile
from diagnostics.errors import InputError
from diagnostics.storage.staging import staged_identity

#: Changes whenever what an entry holds changes: older entries are then not read.
VERSION = "3"
FOLDER = f"captures-v{VERSION}"
#: The most the cache keeps, in bytes (``ORDERDOC_CACHE_MAX_GB`` overrides it).
MAX_BYTES = 10 * 10**9
_META = "orderdoc"
_STALE_SECONDS = 3600.0


def default_root() -> Path:
    """``$ORDERDOC_CACHE``, else ``$XDG_CACHE_HOME/orderdoc``, else ``~/.cache/orderdoc``."""
    given = os.environ.get("ORDERDOC_CACHE", "").strip()
    if given:
        return Path(given)
    base = os.environ.get("XDG_CACHE_HOME", "").strip()
    return (Path(base) if base else Path.home() / ".cache") / "orderdoc"


def max_bytes() -> int:
    """:data:`MAX_BYTES`, or ``ORDERDOC_CACHE_MAX_GB`` gigabytes."""
    given = os.environ.get("ORDERDOC_CACHE_MAX_GB", "").strip()
    try:
        return int(float(given) * 10**9) if given else MAX_BYTES
    except ValueError:
        return MAX_BYTES


@dataclass(frozen=True, slots=True)
class CachedFile:
    """A cache entry: its Parquet file and what it says about the Capture file."""

    path: Path
    records: int
    kinds: dict[str, tuple[str, ...]]
    without_json: int
    repeated: int
    from_text: int
    raw: int
    #: the body fields some body holds as null (the entry has their ``n:<key>`` column)
    nulls: tuple[str, ...] = ()

    def read(self, columns: list[str]) -> pl.DataFrame:
        """The entry's ``columns`` (:data:`HEAD`, ``b:<key>``, ``j:<key>``, ``n:<key>``)."""
        return pl.read_parquet(self.path, columns=columns)


@dataclass
class CaptureCache:
    """The cache folder (``<root>/captures-v<VERSION>``) and what one read found in it."""

    root: Path
    hits: int = 0
    stored: int = 0
    keep: Any = field(default=None, repr=False)  # a temporary folder kept alive
    #: the entries this process read or wrote (never dropped by :meth:`trim`)
    used: set[Path] = field(default_factory=set, repr=False)

    @property
    def folder(self) -> Path:
        """Where the entries are."""
        return self.root / FOLDER

    @classmethod
    def open(cls, root: Path, *, flag: str | None = None) -> CaptureCache:
        """The cache under ``root``, its folder created; an :class:`InputError` (naming
        ``flag`` when given) when it cannot be used."""
        cache = cls(root)
        try:
            cache.folder.mkdir(parents=True, exist_ok=True)
            probe = cache.folder / f".probe-{uuid.uuid4().hex}"
            probe.write_bytes(b"")
            probe.unlink()
        except OSError as exc:
            where = f"{flag} {root}" if flag else str(root)
            msg = (
                f"{where}: cannot be used as the capture cache ({exc.strerror or exc}); give "
                "a writable folder with --cache DIR, or --no-cache"
            )
            raise InputError(msg) from exc
        return cache

    @classmethod
    def temporary(cls) -> CaptureCache:
        """A cache in a temporary folder, removed when the read's capture is dropped
        (``--no-cache``: the columns stay out of memory all the same)."""
        keep = tempfile.TemporaryDirectory(prefix="orderdoc-capture-")
        cache = cls(Path(keep.name), keep=keep)
        cache.folder.mkdir(parents=True, exist_ok=True)
        return cache

    @property
    def persistent(self) -> bool:
        """Whether entries outlive this process."""
        return self.keep is None

    def _entry(self, file: CaptureFile) -> Path:
        if file.data is not None:
            what = f"upload|{hashlib.sha256(file.data).hexdigest()}"
        elif (blob := staged_identity(file.path)) is not None:
            what = f"blob|{blob}"  # a staged blob: its account, container, name and ETag
        else:
            stat = file.path.stat()
            what = f"{file.path.resolve()}|{stat.st_size}|{stat.st_mtime_ns}"
        key = hashlib.sha256(f"{VERSION}|{what}".encode()).hexdigest()
        return self.folder / key[:2] / f"{key}.parquet"

    def load(self, file: CaptureFile) -> CachedFile | None:
        """The entry of ``file``, or ``None`` (none, or one that cannot be read: removed)."""
        try:
            path = self._entry(file)
        except OSError:
            return None
        if not path.is_file():
            return None
        try:
            meta = json.loads(pl.read_parquet_metadata(path)[_META])
            entry = CachedFile(
                path,
                int(meta["records"]),
                {k: tuple(v) for k, v in meta["kinds"]},
                int(meta["without_json"]),
                int(meta["repeated"]),
                int(meta["from_text"]),
                int(meta["raw"]),
                tuple(meta["nulls"]),
            )
            if meta.get("version") != VERSION:
                raise ValueError(meta.get("version"))
        except (OSError, ValueError, KeyError, TypeError, pl.exceptions.PolarsError):
            with contextlib.suppress(OSError):
                path.unlink()
            return None
        with contextlib.suppress(OSError):
            os.utime(path)  # used now: the last to be dropped
        self.hits += 1
        self.used.add(path)
        return entry

    def store(self, file: CaptureFile, table: FileTable) -> CachedFile | None:
        """Keep ``table`` as the entry of ``file`` (``None``: it could not be written)."""
        try:
            path = self._entry(file)
        except OSError:
            return None
        frame = table.frame()
        meta = {
            "version": VERSION,
            "records": table.records,
            "kinds": [[k, list(v)] for k, v in table.kinds.items()],
            "without_json": table.without_json,
            "repeated": table.repeated,
            "from_text": table.from_text,
            "raw": table.raw,
            "nulls": null_keys(table.nulls.columns),
        }
        tmp = self.folder / f".tmp-{uuid.uuid4().hex}.parquet"
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            frame.write_parquet(  # lz4: read back faster than zstd (twice the bytes)
                tmp,
                compression="lz4",
                statistics=False,
                metadata={_META: json.dumps(meta)},
            )
            os.replace(tmp, path)
        except Exception:  # a full disk, a folder gone: the read goes on without the entry
            with contextlib.suppress(OSError):
                tmp.unlink()
            return None
        self.stored += 1
        self.used.add(path)
        return CachedFile(
            path,
            table.records,
            dict(table.kinds),
            table.without_json,
            table.repeated,
            table.from_text,
            table.raw,
            tuple(null_keys(table.nulls.columns)),
        )

    def trim(self, limit: int | None = None, now: float | None = None) -> int:
        """Drop the entries used longest ago until the cache holds at most ``limit``
        bytes (but those this process uses), temporary files left by a command that was
        stopped, and the entries of older versions; the bytes freed."""
        limit = max_bytes() if limit is None else limit
        now = time.time() if now is None else now
        entries: list[tuple[float, int, Path]] = []
        freed = self._drop_old_versions()
        held = 0
        for sub in self.folder.iterdir() if self.folder.is_dir() else []:
            if sub.name.startswith(".tmp-"):
                with contextlib.suppress(OSError):
                    if now - sub.stat().st_mtime > _STALE_SECONDS:
                        freed += sub.stat().st_size
                        sub.unlink()
                continue
            if not sub.is_dir():
                continue
            for entry in sub.iterdir():
                with contextlib.suppress(OSError):
                    stat = entry.stat()
                    if entry in self.used:  # the read under way needs it
                        held += stat.st_size
                    else:
                        entries.append((stat.st_mtime, stat.st_size, entry))
        total = held + sum(size for _, size, _ in entries)
        for _, size, entry in sorted(entries):
            if total <= limit:
                break
            with contextlib.suppress(OSError):
                entry.unlink()
                total -= size
                freed += size
        return freed

    def _drop_old_versions(self) -> int:
        """Remove the folders of the cache's older versions (never read again)."""
        freed = 0
        for old in self.root.glob("captures-v*"):
            if old.name == FOLDER or not old.is_dir():
                continue
            for file in old.rglob("*"):
                with contextlib.suppress(OSError):
                    if file.is_file():
                        freed += file.stat().st_size
            shutil.rmtree(old, ignore_errors=True)
        return freed

    def describe(self, files: int) -> str:
        """The one line a command prints about the cache."""
        if not self.persistent:
            return f"capture cache: not used (--no-cache); {files} Capture files decoded"
        decoded = files - self.hits
        return f"capture cache: {self.hits} of {files} Capture files read from {self.folder}" + (
            f", {decoded} decoded and stored" if decoded else ""
        )


def head_columns() -> list[str]:
    """The columns of an entry besides the body fields."""
    return list(HEAD)


def field_column(key: str) -> str:
    """The entry's column of body field ``key``."""
    return FIELD + key


def values_column(key: str) -> str:
    """The entry's column of body field ``key``'s Python values (JSON text), there when
    the field has no one scalar kind in the file."""
    return VALUES + key


def null_column(key: str) -> str:
    """The entry's column marking the bodies that hold field ``key`` as null, there when
    some body of the file does."""
    return NULLS + key


def null_keys(columns: list[str]) -> list[str]:
    """The fields of an entry's :func:`null_column` columns."""
    return [c.removeprefix(NULLS) for c in columns]


__all__ = [
    "CachedFile",
    "CaptureCache",
    "default_root",
    "field_column",
    "head_columns",
    "null_column",
    "values_column",
]
