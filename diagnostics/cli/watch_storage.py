"""``orderdoc watch`` over storage URLs (docs/storage.md, "Watching a container"): each
``LOG_DIR`` given as a URL is followed through a local mirror under ``STATE/storage``
(:class:`diagnostics.storage.follow.Mirror`), brought up to date before every tick. The
first sync's failure (bad credentials, no such container) is one line and exit 2; a later
failed or throttled read is a warning, and the blob is read on the next tick."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from diagnostics.storage.follow import Mirror


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``--since``: the hour folders a watched URL's listing starts from."""
    parser.add_argument(
        "--since",
        metavar="TIME",
        help="with a storage URL: list and read only the hourly y=/m=/d=/h= folders from this "
        "time on (ISO 8601, UTC unless it names an offset; default: every blob)",
    )


def follow_urls(
    folders: list[str], state: Path, since: str | None = None
) -> tuple[list[Mirror], list[Path]]:
    """The mirrors of the URLs among ``folders`` (listing the hours from ``since`` on), and
    the local folders the watcher follows (each URL's mirror folder in its place)."""
    from diagnostics.storage import is_url
    from diagnostics.storage.hours import parse_time

    start = parse_time(since, "--since") if since else None
    mirrors: list[Mirror] = []
    local: list[Path] = []
    for folder in folders:
        if is_url(folder):
            mirror = Mirror.open(folder, state / "storage", start)
            mirror.folder.mkdir(parents=True, exist_ok=True)  # filled by the first sync
            mirrors.append(mirror)
            local.append(mirror.folder)
        else:
            local.append(Path(folder))
    return mirrors, local


def sync_all(
    mirrors: list[Mirror],
    say: Callable[[str], None],
    *,
    first: bool = False,
    now: Callable[[], datetime] = lambda: datetime.now(UTC),
) -> None:
    """Bring every mirror up to date, saying what was read and each warning."""
    for mirror in mirrors:
        report = mirror.sync(now() if mirror.since else None, first=first)
        line = report.describe(mirror.url)
        if line:
            say(line)
        for warning in report.warnings:
            say(f"warning: {warning}")


def syncing(
    sleep: Callable[[float], None],
    mirrors: list[Mirror],
    say: Callable[[str], None],
    stopped: Callable[[], bool],
) -> Callable[[float], None]:
    """``sleep``, then (unless a stop was asked for) the mirrors brought up to date: the
    watcher's next tick reads what was appended."""

    def sleep_then_sync(seconds: float) -> None:
        sleep(seconds)
        if mirrors and not stopped():
            sync_all(mirrors, say)

    return sleep_then_sync


def with_urls(say: Callable[[str], None]) -> Callable[[str], None]:
    """``say`` naming the mirrors' files by their URLs."""
    from diagnostics.storage.staging import shown

    return lambda line: say(shown(line))
