"""Where the app writes the aggregate folders it builds from uploads and samples.

The base is ``ORDERDOC_APP_WORKDIR`` or ``<temp>/orderdoc-app``; a folder is named by a digest
of its inputs, so the same upload (with the same settings) is analysed once and reused. A
folder counts as complete only after :func:`mark_complete`; an interrupted one is rebuilt.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path

import polars as pl

COMPLETE = ".complete"
#: Bump when the folder layout written by :mod:`diagnostics.appdata.build` changes.
LAYOUT_VERSION = b"1"


def _root() -> Path:
    return Path(
        os.environ.get("ORDERDOC_APP_WORKDIR") or Path(tempfile.gettempdir()) / "orderdoc-app"
    )


def base() -> Path:
    """The folder holding every working folder (created when missing)."""
    root = _root()
    root.mkdir(parents=True, exist_ok=True)
    return root


def folder_for(*parts: bytes) -> Path:
    """The working folder for inputs ``parts`` (not created)."""
    digest = hashlib.sha256(LAYOUT_VERSION)
    for part in parts:
        digest.update(len(part).to_bytes(8, "little"))
        digest.update(part)
    return base() / digest.hexdigest()[:20]


def is_complete(folder: Path) -> bool:
    """True when ``folder`` was fully written."""
    return (folder / COMPLETE).is_file()


def mark_complete(folder: Path) -> None:
    """Record that ``folder`` was fully written."""
    (folder / COMPLETE).write_text("ok\n", encoding="utf-8")


def discard(folder: Path) -> None:
    """Remove an incomplete working folder (a complete one is kept)."""
    if folder.is_dir() and not is_complete(folder):
        shutil.rmtree(folder, ignore_errors=True)


_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def safe_name(name: str) -> str:
    """The file name of an upload without folders or odd characters."""
    return _UNSAFE.sub("_", Path(name.replace("\\", "/")).name).lstrip(".") or "upload"


def save_uploads(folder: Path, files: Sequence[tuple[str, bytes]]) -> list[Path]:
    """Write uploaded ``(name, bytes)`` into ``folder/NNN/name`` (so that messages name the file
    as uploaded, and equal names do not collide); returns the paths in upload order."""
    paths = []
    for i, (name, data) in enumerate(files):
        path = folder / f"{i:03d}" / safe_name(name)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        paths.append(path)
    return paths


def _patterns() -> tuple[str, str]:
    """The regular expressions of an upload's folder and of a working folder (either path
    separator, for Windows' too)."""
    sep = r"[\\/]"
    root = sep.join(re.escape(part) for part in re.split(r"[\\/]", str(_root())))
    return rf"{root}{sep}[0-9a-f]+{sep}uploads{sep}[0-9]+{sep}", rf"{root}{sep}[0-9a-f]+"


def shown(text: str) -> str:
    """``text`` as a person reads it: a path inside a working folder becomes the uploaded
    file's name (``<base>/<folder>/uploads/NNN/name`` → ``name``) and the working folder itself
    "the loaded files", so that no page shows the app's own folders."""
    upload, folder = _patterns()
    return re.sub(folder, "the loaded files", re.sub(upload, "", text))


def shown_column(name: str) -> pl.Expr:
    """:func:`shown` on a string column, vectorised."""
    upload, folder = _patterns()
    return pl.col(name).str.replace_all(upload, "").str.replace_all(folder, "the loaded files")
