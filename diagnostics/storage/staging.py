"""A storage URL as a local path the readers take: :func:`resolve_input`.

The blobs a URL names are downloaded into the staging folder under the capture cache
(``$ORDERDOC_CACHE/storage/ACCOUNT/CONTAINER/BLOB-NAME``, the blob names kept, so Capture's
``{PartitionId}/.../{Second}.avro`` and ASA's ``y=/m=/d=/h=`` folders read as they do on
disk). Each staged file has a hidden sidecar (``.NAME.etag``) holding the blob's account,
container, name and ETag: a blob whose ETag has not changed is not downloaded again, and the
capture cache keys a staged Capture file by its blob and ETag (:func:`staged_identity`), so a
second command over the same container decodes nothing.

A command reads a *view* of exactly the blobs listed this time (hard links to the staged
files, in ``storage/views/KEY/``, one per URL and time range, rebuilt by every command that
reads it and left in place so that the files a table's ``source_file`` names are there
afterwards), never blobs staged earlier that are gone from the container or outside
``--since``/``--until``. Messages name the URL: :func:`shown` turns a view's local paths
back into it.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import os
import shutil
import tempfile
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path, PurePosixPath

from diagnostics.storage.client import Blob, Container, StorageError
from diagnostics.storage.listing import select_blobs
from diagnostics.storage.urls import StorageUrl, parse_url

SIDECAR = ".{name}.etag"
#: Seconds between two progress lines of a download.
PROGRESS_SECONDS = 5.0
#: The local roots of this process's views and the URL each stands for (for messages).
_VIEWS: dict[str, str] = {}


@dataclass(frozen=True, slots=True)
class Staged:
    """A URL read to a local path: the blobs listed, the ones downloaded and their bytes."""

    url: StorageUrl
    path: Path
    blobs: int
    downloaded: int
    downloaded_bytes: int

    def describe(self) -> str:
        """The line a command prints about it."""
        kept = self.blobs - self.downloaded
        return (
            f"{self.url}: {self.blobs} blob{'s' if self.blobs != 1 else ''}, "
            f"{self.downloaded} downloaded ({self.downloaded_bytes / 1e6:,.1f} MB)"
            + (f", {kept} unchanged (same ETag) read from the staging folder" if kept else "")
        )


def staging_root(cache_root: Path | None = None) -> Path:
    """Where blobs are staged: ``storage/`` under the capture cache's root (a temporary
    folder, removed at exit, when that cannot be written)."""
    from diagnostics.captures.capture_cache import default_root

    root = (cache_root or default_root()) / "storage"
    try:
        root.mkdir(parents=True, exist_ok=True)
        probe = root / f".probe-{uuid.uuid4().hex}"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError:
        root = Path(tempfile.mkdtemp(prefix="orderdoc-storage-"))
        atexit.register(shutil.rmtree, root, True)
    return root


def local_name(blob: str) -> PurePosixPath:
    """A blob name as a relative local path (no ``..``, no empty or absolute parts)."""
    parts = [p for p in blob.split("/") if p not in ("", ".")]
    if not parts or ".." in parts:
        msg = f"blob {blob!r}: its name cannot be a local path"
        raise StorageError(msg)
    return PurePosixPath(*parts)


def sidecar(path: Path) -> Path:
    """The hidden file beside a staged file that holds its blob's identity."""
    return path.with_name(SIDECAR.format(name=path.name))


def identity(container: Container, blob: Blob) -> str:
    """``ACCOUNT/CONTAINER/NAME|ETAG``: what a staged file is a copy of."""
    return f"{container.credentials.account}/{container.url.container}/{blob.name}|{blob.etag}"


def staged_identity(path: Path) -> str | None:
    """The blob and ETag the local ``path`` is a copy of (``None``: not a staged file)."""
    try:
        return sidecar(path).read_text(encoding="utf-8").strip() or None
    except OSError:
        return None


def _fresh(path: Path, container: Container, blob: Blob) -> bool:
    try:
        return path.stat().st_size == blob.size and staged_identity(path) == identity(
            container, blob
        )
    except OSError:
        return False


def _link(source: Path, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)


def _view_of(root: Path, url: StorageUrl, since: datetime | None, until: datetime | None) -> Path:
    """The view's folder: one per URL and time range, rebuilt by each command (so the
    files a table's ``source_file`` names stay there after the command)."""
    key = hashlib.sha256(f"{url}|{url.account}|{since}|{until}".encode()).hexdigest()[:16]
    return root / "views" / key


def _publish(building: Path, view: Path) -> None:
    """Put the folder ``building`` in the place of ``view`` (the old one removed)."""
    trash = None
    if view.exists():
        trash = view.with_name(f".{view.name}.old-{uuid.uuid4().hex[:8]}")
        with contextlib.suppress(OSError):
            view.rename(trash)
    try:
        building.rename(view)
    except OSError:  # another command published the same view meanwhile: use ours as it is
        shutil.rmtree(view, ignore_errors=True)
        building.rename(view)
    if trash is not None:
        shutil.rmtree(trash, ignore_errors=True)


def register_view(local: Path, url: StorageUrl) -> None:
    """Messages name ``local`` (a folder standing for ``url``'s container) by the URL."""
    base = str(StorageUrl(url.scheme, url.container, "", url.account, url.suffix))
    _VIEWS[str(local)] = base.rstrip("/")
    with contextlib.suppress(OSError):  # a command may print the path resolved
        _VIEWS[str(local.resolve())] = base.rstrip("/")


def stage(
    text: str,
    *,
    since: datetime | None = None,
    until: datetime | None = None,
    cache_root: Path | None = None,
    say: Callable[[str], None] | None = None,
) -> Staged:
    """Download what the URL ``text`` names (the blobs of ``[since, until)`` for a folder)
    and return the local path that stands for it (a file for a blob, else a folder)."""
    url = parse_url(text)
    container = Container.open(url)
    single = container.head(url.path)
    blobs = [single] if single is not None else select_blobs(container, url.path, since, until)
    if not blobs:
        within = " in the --since/--until range" if since or until else ""
        msg = f"{url}: no blobs there{within} (a container or folder with nothing in it)"
        raise StorageError(msg)
    root = staging_root(cache_root)
    mirror = root / container.credentials.account / url.container
    stale = [b for b in blobs if not _fresh(mirror / local_name(b.name), container, b)]
    if say is not None and stale:
        size = sum(b.size for b in stale) / 1e6
        say(f"downloading {len(stale)} of {len(blobs)} blobs ({size:,.1f} MB) from {url}")

    def target(blob: Blob) -> Path:
        path = mirror / local_name(blob.name)
        sidecar(path).unlink(missing_ok=True)  # the file changes: its identity first
        return path

    progress = {"blobs": 0, "bytes": 0, "said": time.monotonic()}

    def done(blob: Blob) -> None:
        path = mirror / local_name(blob.name)
        sidecar(path).write_text(identity(container, blob) + "\n", encoding="utf-8")
        progress["blobs"] += 1
        progress["bytes"] += blob.size
        if say is not None and time.monotonic() - progress["said"] >= PROGRESS_SECONDS:
            progress["said"] = time.monotonic()
            say(
                f"  {progress['blobs']:,} of {len(stale):,} blobs, "
                f"{progress['bytes'] / 1e6:,.1f} MB downloaded"
            )

    container.download(stale, target, done)
    view = _view_of(root, url, since, until)
    view.parent.mkdir(parents=True, exist_ok=True)
    building = Path(tempfile.mkdtemp(prefix=f".{view.name}.new-", dir=view.parent))
    for blob in blobs:
        name = local_name(blob.name)
        _link(mirror / name, building / name)
        with contextlib.suppress(OSError):
            _link(sidecar(mirror / name), sidecar(building / name))
    _publish(building, view)
    register_view(view, url)
    local = view / local_name(single.name) if single is not None else view / url.path
    return Staged(url, local, len(blobs), len(stale), sum(b.size for b in stale))


def shown(text: str) -> str:
    """``text`` with the local paths of this process's views turned back into their URLs."""
    for local, url in _VIEWS.items():
        text = text.replace(local, url)
    return text


__all__ = [
    "Staged",
    "local_name",
    "register_view",
    "shown",
    "stage",
    "staged_identity",
    "staging_root",
]
