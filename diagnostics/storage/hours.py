"""Time ranges over ASA's log layout: ``.../y=YYYY/m=MM/d=DD/h=HH/m=00/PT1H.json``.

ASA (and Azure Monitor's export to a storage account) writes one blob per job and hour under
``y=/m=/d=/h=`` folders. With ``--since``/``--until`` only the hours that overlap the range
are listed (:func:`hour_prefixes`) and read (:func:`in_range`, which also selects local
files by the same rule); a file outside that layout cannot be placed in time and is kept.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from diagnostics.errors import UsageError

HOUR = timedelta(hours=1)
#: The hour folders of a log blob's name (or a local path), anywhere in it.
_HOUR_PATH = re.compile(r"(?:^|/)y=(\d{4})/m=(\d{1,2})/d=(\d{1,2})/h=(\d{1,2})(?:/|$)")
#: A folder level that starts the hour layout.
YEAR_FOLDER = re.compile(r"(?:^|/)y=\d{4}/$")
#: The most hours one listing spells out; a longer range lists the folders (one per day).
MOST_HOURS = 24 * 62


def parse_time(text: str, flag: str) -> datetime:
    """A ``--since``/``--until`` value: ISO 8601 (a date, or a date and time; UTC unless it
    names an offset)."""
    given = text.strip()
    try:
        value = datetime.fromisoformat(given.replace("Z", "+00:00"))
    except ValueError as exc:
        msg = f"{flag} {given!r}: not a time (e.g. 2024-05-01 or 2024-05-01T13:00Z)"
        raise UsageError(msg) from exc
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def check_range(since: datetime | None, until: datetime | None) -> None:
    """``--since`` must come before ``--until``."""
    if since is not None and until is not None and since >= until:
        msg = f"--since {since:%Y-%m-%dT%H:%MZ} is not before --until {until:%Y-%m-%dT%H:%MZ}"
        raise UsageError(msg)


def hour_of(name: str) -> datetime | None:
    """The hour a log blob or file holds, from its ``y=/m=/d=/h=`` folders (``None``: none)."""
    found = _HOUR_PATH.search(name.replace("\\", "/"))
    if found is None:
        return None
    try:
        year, month, day, hour = (int(g) for g in found.groups())
        return datetime(year, month, day, hour, tzinfo=UTC)
    except ValueError:
        return None


def in_range(name: str, since: datetime | None, until: datetime | None) -> bool:
    """Whether the file ``name`` may hold records from ``since`` (inclusive) to ``until``
    (exclusive): its hour overlaps the range, or it has no hour folders."""
    hour = hour_of(name)
    if hour is None:
        return True
    if since is not None and hour + HOUR <= since:
        return False
    return not (until is not None and hour >= until)


def hour_prefixes(since: datetime, until: datetime) -> list[str]:
    """``y=YYYY/m=MM/d=DD/h=HH/`` of every hour overlapping ``[since, until)``."""
    hour = since.astimezone(UTC).replace(minute=0, second=0, microsecond=0)
    found = []
    while hour < until:
        found.append(f"y={hour:%Y}/m={hour:%m}/d={hour:%d}/h={hour:%H}/")
        hour += HOUR
    return found


def day_prefixes(since: datetime, until: datetime) -> list[str]:
    """``y=YYYY/m=MM/d=DD/`` of every day overlapping ``[since, until)``."""
    day = since.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    found = []
    while day < until:
        found.append(f"y={day:%Y}/m={day:%m}/d={day:%d}/")
        day += timedelta(days=1)
    return found


__all__ = [
    "check_range",
    "day_prefixes",
    "hour_of",
    "hour_prefixes",
    "in_range",
    "parse_time",
]
