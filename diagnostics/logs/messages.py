"""Facts parsed from the text of ASA diagnostic messages (docs/semantics.md, "Diagnostics ASA writes").

ASA puts some facts only in prose: the aggregate's count, processing-time range and source
(activity logs), the example event's application and arrival times (``BriefMessage``), and an
idle partition's number and minutes. Each parser returns ``None`` when its pattern is absent;
none of them raises.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import re
from dataclasses import dataclass

from diagnostics.logs.times import parse_log_time

#: Both real wordings: "had 24 data errors of kind" (the documentation) and "had 58
#: occurrences of kind" (captured job messages and portal notifications); the time range is
#: "between processing times" or "between times"; a text without a count is accepted too.
_AGGREGATE = re.compile(
    r"Source '(?P<source>[^']*)' had (?:(?P<count>[0-9]{1,30}) )?"
    r"(?:data errors?|occurrences?|errors?) of kind '(?P<kind>[^']+)'"
    r"(?: between (?:processing )?times '(?P<from>[^']+)' and '(?P<to>[^']+)')?",
    re.IGNORECASE,
)
_CLOCK = re.compile(r"\s*\[[0-9]{1,2}:[0-9]{2}(?::[0-9]{2})?(?:\s*[AP]M)?\]", re.IGNORECASE)
_LATE_EXAMPLE = re.compile(
    r"application timestamp '(?P<app>[^']+)' and arrival time '(?P<arr>[^']+)'"
)
_EARLY_EXAMPLE = re.compile(
    r"arrival time '(?P<arr>[^']+)' is earlier than input event application timestamp "
    r"'(?P<app>[^']+)'"
)
_IDLE = re.compile(
    r"Input Partition \[(?P<partition>\d+)\] does not have additional data for more than "
    r"\[(?P<minutes>\d+)\] minute"
)
#: A column named in quotes or brackets: ``the column 'DeviceName'``, ``column [Temp]``.
#: Or after a colon, unquoted, as the data-errors page writes it: ``Unable to convert column:
#: dateColumn to expected type``.
_COLUMN = re.compile(
    r"\bcolumn\s*(?:name\s*)?(?::?\s*['\"\[](?P<column>[^'\"\]]{1,128})['\"\]]"
    r"|:\s*(?P<bare>[A-Za-z_][\w.-]{0,127}))",
    re.IGNORECASE,
)
#: A JSON string pasted on its own line, or a member of an object (``"Message": "..."``),
#: with or without its trailing comma: what users copy from the portal's JSON views.
_PASTED_STRING = re.compile(
    r'\s*(?P<key>"(?:[^"\\]|\\.)*"\s*:\s*)?(?P<value>"(?:[^"\\]|\\.)*")\s*,?\s*', re.DOTALL
)
_RESOURCE_NAME = re.compile(r"Resource Name: (?P<job>[^|]*?)\s*\|")
_FIRST_OCCURRED = re.compile(r"First Occurred: (?P<first>[^|]*?)\s*\|")


@dataclass(frozen=True, slots=True)
class AggregateText:
    """``Source 'S' had N data errors of kind 'K' between processing times 'A' and 'B'``
    (or ``N occurrences of kind 'K' between times``); ``count`` is ``None`` when not given."""

    source: str
    count: int | None
    kind: str
    from_time: dt.datetime | None
    to_time: dt.datetime | None


@dataclass(frozen=True, slots=True)
class ExampleTimes:
    """The example event's application and arrival times; lateness = arrival − application."""

    application_time: dt.datetime
    arrival_time: dt.datetime

    @property
    def lateness_seconds(self) -> float:
        """Arrival minus application time in seconds (negative for an early event)."""
        return (self.arrival_time - self.application_time).total_seconds()


@dataclass(frozen=True, slots=True)
class IdleText:
    """``Input Partition [P] does not have additional data for more than [M] minute(s)``."""

    partition_id: int
    minutes: int


def parse_aggregate(text: str) -> AggregateText | None:
    """The aggregate facts of a message (either wording), or ``None``."""
    match = _AGGREGATE.search(text)
    if match is None:
        return None
    return AggregateText(
        source=match["source"],
        count=int(match["count"]) if match["count"] else None,
        kind=match["kind"],
        from_time=parse_log_time(match["from"]),
        to_time=parse_log_time(match["to"]),
    )


def message_text(text: str) -> str | None:
    """The ASA message a text line carries, or ``None`` when it carries none.

    A line carries a message when it holds one of ASA's wordings orderdoc reads: ``Source 'S'
    had N occurrences of kind 'K'`` (or ``N data errors of kind``), or ``Input Partition [P]
    does not have additional data for more than [M] minute(s)``. The line may be a portal
    notification (``[17:22:00] Source ...``), plain text, or a JSON string pasted on its own
    (``"First Occurred: ... | Message: Source ..."``) or as a member of an object
    (``"Message": "...",``): the string's value is returned then, its escapes decoded. A
    line that opens a JSON object or array (``{``, or ``[`` that is not a notification's
    clock) is a JSON value, broken or not, never text: its message is read from its fields,
    or it is quarantined as broken JSON.
    """
    opening = text.lstrip()[:1]
    if opening == "{" or (opening == "[" and _CLOCK.match(text) is None):
        return None
    pasted = _PASTED_STRING.fullmatch(text)
    if pasted is not None:
        with contextlib.suppress(ValueError):  # else not a JSON string: the text as it stands
            text = json.loads(pasted["value"])
    if _AGGREGATE.search(text) is None and _IDLE.search(text) is None:
        return None
    return text.strip()


def is_pasted_member(text: str) -> bool:
    """True for a member of a JSON object pasted on its own line: ``"Type": "DataError",``."""
    pasted = _PASTED_STRING.fullmatch(text)
    return pasted is not None and pasted["key"] is not None


def has_notification_clock(text: str) -> bool:
    """True when a line starts like a portal notification: ``[17:22:00]`` or ``[5:23 PM]``."""
    return _CLOCK.match(text) is not None


def parse_example(text: str) -> ExampleTimes | None:
    """The example event's times from a late or early brief message, or ``None``."""
    match = _LATE_EXAMPLE.search(text) or _EARLY_EXAMPLE.search(text)
    if match is None:
        return None
    app = parse_log_time(match["app"])
    arr = parse_log_time(match["arr"])
    if app is None or arr is None:
        return None
    return ExampleTimes(application_time=app, arrival_time=arr)


def parse_idle(text: str) -> IdleText | None:
    """Partition number and whole minutes of an ``InputPartitionNotProgressing`` text."""
    match = _IDLE.search(text)
    if match is None:
        return None
    return IdleText(partition_id=int(match["partition"]), minutes=int(match["minutes"]))


def parse_column(text: str) -> str | None:
    """The column a data-error message names (``... the column 'DeviceName' ...``), or ``None``."""
    match = _COLUMN.search(text)
    if match is None:
        return None
    return match["column"] or match["bare"]


def parse_resource_name(text: str) -> str | None:
    """The job name of an activity-log message (``Resource Name: ASAjob |``), or ``None``."""
    match = _RESOURCE_NAME.search(text)
    return match["job"] if match and match["job"] else None


def parse_first_occurred(text: str) -> dt.datetime | None:
    """``First Occurred: 02/04/2019 17:11:48`` of an activity-log message, or ``None``."""
    match = _FIRST_OCCURRED.search(text)
    return parse_log_time(match["first"]) if match else None
