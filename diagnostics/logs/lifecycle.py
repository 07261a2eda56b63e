"""Job lifecycle records: what a job's Authoring log and its activity log say was done to it.

Besides data errors, a job's logs hold records of what was done to the job itself: the
portal's "Start Job", a stop, a scale, an update of the query. They are neither data errors
nor broken records; orderdoc reads them as **job events** (the ``job_events`` table,
docs/schemas.md) and shows them on the timeline. Two shapes, as Azure writes them:

* **Authoring** resource logs (ASA docs, "Troubleshoot Azure Stream Analytics by using
  resource logs"): the common envelope (``time``, ``resourceId``, ``category: Authoring``,
  ``operationName``, ``status``, ``level``) with ``properties`` (an object or a JSON string)
  in the generic-event schema: ``Error``, ``Message``, ``Type``, ``Correlation ID``;
* **Administrative** activity-log records (Azure Monitor docs, "Azure Activity Log event
  schema") of an operation on the job, e.g. ``Microsoft.StreamAnalytics/streamingjobs/Start/
  action``: as a diagnostic setting streams them to storage or Event Hubs (``time``,
  ``resourceId``, ``operationName``, ``category`` the operation's type such as ``Action``,
  ``resultType``, ``correlationId``, ``level``, ``properties.eventCategory: Administrative``),
  or as the portal's JSON view and ``az monitor activity-log list`` give them (``category``
  and ``operationName`` objects with a ``value``, ``eventTimestamp``, ``status``).

A record of either shape that carries an ASA data error or idle notice in its message (ASA
also writes those to the activity log) is read as that data error, never as a job event.
Which shape a record has is decided by :func:`category_of`; its action in one word (a closed
vocabulary, :class:`JobAction`) by :func:`action_of`.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum

from diagnostics.logs.fields import Fields, key_of


class Category(StrEnum):
    """Where a job event was logged."""

    AUTHORING = "Authoring"
    ADMINISTRATIVE = "Administrative"


class JobAction(StrEnum):
    """What was done to the job, in one word (from the record's operation)."""

    START = "start"
    STOP = "stop"
    SCALE = "scale"
    UPDATE = "update"
    DELETE = "delete"
    OTHER = "other"


#: Words of an operation's name and the action they name, tried in this order.
_ACTION_WORDS: tuple[tuple[re.Pattern[str], JobAction], ...] = (
    (re.compile(r"\bstart", re.IGNORECASE), JobAction.START),
    (re.compile(r"\bstop", re.IGNORECASE), JobAction.STOP),
    (re.compile(r"\bscale", re.IGNORECASE), JobAction.SCALE),
    (re.compile(r"\b(delete|remove)", re.IGNORECASE), JobAction.DELETE),
    (re.compile(r"\b(write|update|create|put|publish)", re.IGNORECASE), JobAction.UPDATE),
)
_JOB_OPERATION = "microsoft.streamanalytics/streamingjobs"
_JOB_RESOURCE = re.compile(r"/providers/microsoft\.streamanalytics/streamingjobs/[^/]+", re.I)


@dataclass(frozen=True, slots=True)
class JobEvent:
    """One job lifecycle record (a row of ``job_events``). ``job``/``job_id`` as a data
    error's (:class:`diagnostics.logs.records.DataError`); ``operation`` as the record names
    it; ``status`` as it writes it (``Succeeded``, ``Started``, ``Failed``, ``Accept``...)."""

    job: str | None
    job_id: str | None
    record_time: dt.datetime
    category: str
    operation: str | None
    action: str
    status: str | None
    level: str | None
    message: str | None
    correlation_id: str | None
    source_file: str
    source_line: int


def text_value(value: object) -> str | None:
    """A field's text: a string, or the ``value`` (else ``localizedValue``) of the objects the
    activity log's JSON view writes (``{"value": "Administrative", ...}``)."""
    if isinstance(value, str):
        return value or None
    if isinstance(value, Mapping):
        for key in ("value", "localizedValue"):
            inner = value.get(key)
            if isinstance(inner, str) and inner:
                return inner
    return None


def operation_of(envelope: Fields) -> str | None:
    """The record's operation name (``operationName``, a string or an object)."""
    return text_value(envelope.raw("operationname"))


def category_of(envelope: Fields, props: Fields | None) -> Category | None:
    """The job-event shape of a record, or ``None`` when it is not a lifecycle record's:
    ``category`` Authoring or Administrative (a string or an object), an activity-log
    record streamed to storage (``properties.eventCategory: Administrative``), or an
    operation on a Stream Analytics job (``Microsoft.StreamAnalytics/streamingjobs/...``)."""
    category = key_of(text_value(envelope.raw("category")) or "")
    if category == "authoring":
        return Category.AUTHORING
    if category == "administrative":
        return Category.ADMINISTRATIVE
    event_category = text_value(props.raw("eventcategory")) if props is not None else None
    if key_of(event_category or "") == "administrative":
        return Category.ADMINISTRATIVE
    operation = (operation_of(envelope) or "").lower()
    if operation.startswith(_JOB_OPERATION):
        return Category.ADMINISTRATIVE
    return None


def is_job_resource(resource: str) -> bool:
    """True for the resource id of a Stream Analytics job (any casing)."""
    return _JOB_RESOURCE.search(resource) is not None


def action_of(operation: str | None, message: str | None = None) -> JobAction:
    """The action an operation names (``.../streamingjobs/Start/action`` and ``Start Job``
    are :attr:`JobAction.START`); its message when the name says none; else OTHER."""
    for text in (operation, message):
        for pattern, action in _ACTION_WORDS:
            if text and pattern.search(text.replace("/", " ")):
                return action
    return JobAction.OTHER
