"""Storage accounts (Azure Blob Storage, ADLS Gen2) as inputs: URLs, credentials, listing by
prefix and hour, downloads into a staging folder, following append blobs (docs/storage.md).

:func:`resolve_input` is the one step between a command's input and its readers: a storage
URL becomes a local path (its blobs staged), anything else is returned as it is.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from diagnostics.storage.urls import StorageUrl, UrlError, is_url, parse_url


def resolve_input(
    value: str,
    *,
    since: datetime | None = None,
    until: datetime | None = None,
    say: Callable[[str], None] | None = None,
) -> str:
    """``value`` as a local path: a storage URL's blobs (those of ``[since, until)`` under a
    folder of ASA's hourly layout) staged and the local file or folder returned; anything
    else returned as given. ``say`` gets one line about what was downloaded."""
    if not is_url(value):
        return value
    from diagnostics.storage.staging import stage

    staged = stage(value, since=since, until=until, say=say)
    if say is not None:
        say(staged.describe())
    return str(staged.path)


__all__ = ["StorageUrl", "UrlError", "is_url", "parse_url", "resolve_input"]
