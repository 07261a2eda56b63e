"""``orderdoc watch az://...``: a local mirror of a container's log blobs, brought up to date
before each of the watcher's ticks, so the watcher follows it as it follows a local folder
(its offset manifest, alert state and kill -9 safety unchanged: docs/watch.md).

ASA's log blobs are append blobs that grow through the hour. :meth:`Mirror.sync` lists the
URL's folder (by prefix; with ``since``, only the hour folders from then on), and for each blob

- **new**: reads it whole (written to a hidden temporary name, then renamed);
- **grown**: reads only the appended bytes, by range from the mirror's size (the last
  offset), after checking by a range read of its first bytes that it is the same blob
  (a blob rewritten with other content is read whole again);
- **shrunk**: reads it whole again (the watcher then reads it again from the start).

The mirror's size is the offset: nothing else is stored. A process killed mid-append leaves a
prefix of the blob's bytes, and the next sync reads on from there. A blob that cannot be read
(throttled, a failed read) is a warning and is read on the next tick; the other blobs go on.
"""

from __future__ import annotations

import os
import uuid
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from diagnostics.storage.client import Blob, Container, StorageError
from diagnostics.storage.listing import select_blobs
from diagnostics.storage.staging import local_name, register_view
from diagnostics.storage.urls import StorageUrl, parse_url

#: Bytes compared to tell an appended blob from a rewritten one.
HEAD_BYTES = 4096


@dataclass(frozen=True)
class SyncReport:
    """What one sync did: blobs read whole, blobs read by range (and their bytes), warnings."""

    whole: int = 0
    appended: int = 0
    bytes_read: int = 0
    warnings: tuple[str, ...] = ()

    def describe(self, url: StorageUrl) -> str | None:
        """One line (``None``: nothing new)."""
        if not (self.whole or self.appended):
            return None
        return (
            f"{url}: {self.whole} new or rewritten blob(s), {self.appended} appended to, "
            f"{self.bytes_read / 1e6:,.2f} MB read"
        )


@dataclass
class Mirror:
    """The mirror of the blobs under ``url`` in ``root`` (``STATE/storage``)."""

    url: StorageUrl
    container: Container
    root: Path
    since: datetime | None = None
    until: datetime | None = None
    #: the files of each blob read so far (names), to tell new blobs from known ones
    known: set[str] = field(default_factory=set)

    @classmethod
    def open(cls, text: str, root: Path, since: datetime | None = None) -> Mirror:
        """The mirror of URL ``text`` under ``root`` (the account's credentials checked by
        the first :meth:`sync`)."""
        url = parse_url(text)
        return cls(url, Container.open(url), root, since)

    @property
    def base(self) -> Path:
        """The local folder of the container."""
        return self.root / self.container.credentials.account / self.url.container

    @property
    def folder(self) -> Path:
        """The local folder the watcher follows (the URL's folder in the mirror)."""
        return self.base / self.url.path if self.url.path else self.base

    def sync(self, until: datetime | None = None, *, first: bool = False) -> SyncReport:
        """Bring the mirror up to date. ``first``: a listing that fails (bad credentials, no
        such container) raises :class:`StorageError`; later it is a warning."""
        register_view(self.base, self.url)
        self.folder.mkdir(parents=True, exist_ok=True)
        try:
            if self.container.head(self.url.path) is not None:
                msg = f"{self.url}: is a blob; watch a folder (its container or a prefix)"
                raise StorageError(msg)
            blobs = select_blobs(self.container, self.url.path, self.since, until or self.until)
        except StorageError as exc:
            if first:
                raise
            return SyncReport(warnings=(f"{exc}; listed again at the next tick",))
        whole = appended = read = 0
        warnings: list[str] = []
        for blob in blobs:
            try:
                how, size = self._one(blob)
            except StorageError as exc:
                warnings.append(f"{exc}; read again at the next tick")
                continue
            except OSError as exc:
                warnings.append(f"{self.url.child(blob.name)}: cannot write the mirror ({exc})")
                continue
            whole += how == "whole"
            appended += how == "appended"
            read += size
        return SyncReport(whole, appended, read, tuple(warnings))

    def _one(self, blob: Blob) -> tuple[str, int]:
        path = self.base / local_name(blob.name)
        have = path.stat().st_size if path.exists() else 0
        if have == blob.size:
            return "same", 0
        if 0 < have < blob.size and self._same_start(blob, path, have):
            data = self.container.read_range(blob.name, have, blob.size)
            with path.open("ab") as out:
                out.write(data)
                out.flush()
                os.fsync(out.fileno())
            return "appended", len(data)
        data = self.container.read_range(blob.name, 0, blob.size) if blob.size else b""
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}.part")
        with tmp.open("wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        tmp.replace(path)
        return "whole", len(data)

    def _same_start(self, blob: Blob, path: Path, have: int) -> bool:
        size = min(HEAD_BYTES, have)
        with path.open("rb") as local:
            mine = local.read(size)
        return self.container.read_range(blob.name, 0, size) == mine


__all__ = ["Mirror", "SyncReport"]
