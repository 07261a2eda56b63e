"""What a storage URL names: one blob, or the blobs under a folder, listed by prefix.

Without a time range a folder is listed once, recursively (by prefix, in pages). With
``since`` (and ``until``, the caller's clock when not given) the folders are walked one level
at a time down to the ``y=YYYY/`` level of ASA's layout (``resourceId=/SUBSCRIPTIONS/.../
STREAMINGJOBS/NAME/y=...``), and there only the hour folders ``y=/m=/d=/h=/`` of the range are
listed: an hour of a year of logs costs one listing, not a year's. A blob outside that layout
is kept (it cannot be placed in time); every name is checked by :func:`in_range` as well.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from diagnostics.storage.client import Blob, Container
from diagnostics.storage.hours import (
    MOST_HOURS,
    YEAR_FOLDER,
    day_prefixes,
    hour_prefixes,
    in_range,
)

#: Folder levels walked above the ``y=`` level before listing the rest recursively.
MOST_LEVELS = 16


def _folder(path: str) -> str:
    return f"{path.strip('/')}/" if path.strip("/") else ""


def _dated(container: Container, root: str, since: datetime, until: datetime) -> list[Blob]:
    """The blobs of the hours of ``[since, until)`` under the date root ``root``."""
    hours = hour_prefixes(since, until)
    prefixes = hours if len(hours) <= MOST_HOURS else day_prefixes(since, until)
    found: list[Blob] = []
    for prefix in prefixes:
        found.extend(container.list_all(root + prefix))
    return found


def select_blobs(
    container: Container,
    path: str,
    since: datetime | None = None,
    until: datetime | None = None,
    *,
    listed: Callable[[str], None] | None = None,
) -> list[Blob]:
    """The blobs under the folder ``path`` whose hours overlap ``[since, until)`` (every
    blob when neither is given), sorted by name. ``listed`` is told each prefix listed."""
    said = listed or (lambda _p: None)
    if since is None or until is None:
        said(_folder(path))
        found = container.list_all(_folder(path))
    else:
        found = _walk(container, _folder(path), since, until, said, 0)
    return sorted((b for b in found if in_range(b.name, since, until)), key=lambda blob: blob.name)


def _walk(
    container: Container,
    prefix: str,
    since: datetime,
    until: datetime,
    said: Callable[[str], None],
    depth: int,
) -> list[Blob]:
    if depth >= MOST_LEVELS:
        said(prefix)
        return container.list_all(prefix)
    said(prefix)
    folders, blobs = container.list_level(prefix)
    found = list(blobs)
    if any(YEAR_FOLDER.search(f) for f in folders):
        found.extend(_dated(container, prefix, since, until))
        folders = [f for f in folders if not YEAR_FOLDER.search(f)]
    for folder in folders:
        found.extend(_walk(container, folder, since, until, said, depth + 1))
    return found


__all__ = ["select_blobs"]
