"""Which columns of a capture identify its senders (the candidate ``TIMESTAMP BY ... OVER``
keys): the recommender tries them, the app's OVER toggle offers the first one.

A sender column is a text or integer column with 2 .. n/2 distinct values whose name says it
names a sender (``deviceId``, ``DeviceName``, ``device_id``, ``hostname``, ``sensor``,
``IoTHub.ConnectionDeviceId``, ...): one of its words (split at ``_``, ``-``, ``.``, spaces
and case changes, compared without case) is a sender word, alone or followed by ``id``,
``name`` or ``key``. A word only containing one is not (``parameter``, ``resourceId``).
Columns the job reads as times, the arrival and partition columns are never keys.
"""

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
_SQUASH = re.compile(r"[\s_.\-]+")
#: The words of a column name: runs of letters in one case (``Device``, ``ID``, ``device``)
#: or of digits.
_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
_SENDER_TOKENS = frozenset(
    f"{word}{tail}" for word in SENDER_WORDS for tail in ("", "s", "id", "name", "key")
)


def _squashed(name: str) -> str:
    return _SQUASH.sub("", name).lower()


def _names_a_sender(name: str) -> bool:
    return any(word.lower() in _SENDER_TOKENS for word in _WORDS.findall(name))


def sender_names(names: Iterable[str], exclude: Iterable[str] = ()) -> list[str]:
    """The names among ``names`` that say they name senders, best first (exactly
    ``<word>id``, ``<word>name`` or ``<word>`` first), whatever their values."""
    skip = {_squashed(c) for c in exclude if c}
    found = []
    for name in names:
        squashed = _squashed(name)
        if name.startswith("__") or squashed in skip or not _names_a_sender(name):
            continue
        exact = any(squashed in (f"{w}id", f"{w}name", w) for w in SENDER_WORDS)
        found.append((0 if exact else 1, name))
    return [name for _, name in sorted(found)]


def sender_columns(frame: pl.DataFrame, exclude: Iterable[str] = ()) -> list[str]:
    """The columns of ``frame`` that identify senders, best first (a name that is exactly
    ``<word>id`` or ``<word>name`` first, then by fewer distinct values); ``exclude``: the
    time, arrival and partition columns."""
    skip = {_squashed(c) for c in exclude if c}
    n = frame.height
    found: list[tuple[int, int, str]] = []
    for name, dtype in frame.schema.items():
        if name.startswith("__") or _squashed(name) in skip or not _names_a_sender(name):
            continue
        if not (dtype == pl.String or dtype == pl.Categorical or dtype.is_integer()):
            continue
        distinct = frame[name].n_unique()
        if 2 <= distinct <= max(2, n // 2):
            squashed = _squashed(name)
            exact = any(squashed in (f"{w}id", f"{w}name", w) for w in SENDER_WORDS)
            found.append((0 if exact else 1, distinct, name))
    return [name for _, _, name in sorted(found)]
