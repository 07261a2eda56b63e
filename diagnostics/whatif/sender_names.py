"""Rule 1 and rule 5 of the sender rule (:mod:`diagnostics.whatif.senders`): which columns
are never senders (the system columns Capture, IoT Hub, blob inputs and ASA add), which are
eligible (text or whole numbers), and which names say a column names senders (``deviceId``,
``DeviceName``, ``device_id``, ``hostname``, ``IoTHub.ConnectionDeviceId``, ...: one of its
words, split at ``_``, ``-``, ``.``, spaces and case changes, is a sender word, alone or
followed by ``id``, ``name`` or ``key``; a word only containing one is not: ``parameter``,
``resourceId``)."""

from __future__ import annotations

import re
from collections.abc import Iterable

import polars as pl

#: Name parts that say a column names a sender.
SENDER_WORDS = (
    "device",
    "sender",
    "sensor",
    "source",
    "client",
    "machine",
    "meter",
    "asset",
    "gateway",
    "station",
    "vehicle",
    "host",
    "node",
    "producer",
    "publisher",
)
#: Columns Event Hubs Capture, IoT Hub, blob inputs and ASA add to every event: never senders.
SYSTEM_COLUMNS = (
    "SequenceNumber",
    "Offset",
    "EnqueuedTimeUtc",
    "EventEnqueuedUtcTime",
    "EventProcessedUtcTime",
    "PartitionId",
    "PartitionKey",
    "SystemProperties",
    "Properties",
    "Body",
    "BlobName",
    "BlobLastModifiedUtcTime",
    "IoTHub",
    "IoTHub.EnqueuedTime",
    "IoTHub.MessageId",
    "IoTHub.CorrelationId",
    "IoTHub.StreamId",
)
_SQUASH = re.compile(r"[\s_.\-]+")
#: The words of a column name: runs of letters in one case (``Device``, ``ID``, ``device``)
#: or of digits.
_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
_SENDER_TOKENS = frozenset(
    f"{word}{tail}" for word in SENDER_WORDS for tail in ("", "s", "id", "name", "key")
)
_SYSTEM = frozenset(_SQUASH.sub("", c).lower() for c in SYSTEM_COLUMNS)


def squashed(name: str) -> str:
    """``name`` without separators, in lower case (``Device_ID`` -> ``deviceid``)."""
    return _SQUASH.sub("", name).lower()


def names_a_sender(name: str) -> bool:
    """Whether ``name`` says its column names senders (a sender word, not letters in one)."""
    return any(word.lower() in _SENDER_TOKENS for word in _WORDS.findall(name))


def exact(name: str) -> bool:
    """Whether ``name`` is exactly a sender word, or one followed by ``id`` or ``name``."""
    flat = squashed(name)
    return any(flat in (f"{w}id", f"{w}name", w) for w in SENDER_WORDS)


def is_system(name: str) -> bool:
    """A column Capture, IoT Hub, a blob input or ASA adds (never a sender)."""
    return squashed(name) in _SYSTEM or name.startswith("__")


def sender_names(names: Iterable[str], exclude: Iterable[str] = ()) -> list[str]:
    """The names among ``names`` that say they name senders, best first (exactly
    ``<word>id``, ``<word>name`` or ``<word>`` first), whatever their values."""
    skip = {squashed(c) for c in exclude if c}
    found = [
        (0 if exact(name) else 1, name)
        for name in names
        if not is_system(name) and squashed(name) not in skip and names_a_sender(name)
    ]
    return [name for _, name in sorted(found)]


def kind_ok(dtype: pl.DataType) -> bool:
    """Text or whole numbers: what can name senders."""
    return dtype == pl.String or dtype == pl.Categorical or dtype.is_integer()


def eligible_columns(frame: pl.DataFrame, exclude: Iterable[str] = ()) -> list[str]:
    """The columns that could name senders or groups of them (rule 1): text or whole
    numbers, not a system column, not in ``exclude``."""
    skip = {squashed(c) for c in exclude if c}
    return [
        name
        for name, dtype in frame.schema.items()
        if kind_ok(dtype) and not is_system(name) and squashed(name) not in skip
    ]
