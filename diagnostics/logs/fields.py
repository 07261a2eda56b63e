"""A decoded log record's keys, matched as Azure's exports spell them differently, and the
exception that quarantines a record (used by :mod:`diagnostics.logs.normalise` and
:mod:`diagnostics.logs.lifecycle`).

Keys are matched ignoring case, spaces, underscores and punctuation: ``Correlation ID``,
``correlationId`` and ``correlation_id`` are one key.
"""

from __future__ import annotations

import datetime as dt
import functools
import re
from collections.abc import Mapping

from diagnostics.logs.times import parse_log_time

_NOT_KEY = re.compile(r"[^0-9a-z]")


class Reject(Exception):
    """The record is quarantined for ``reason`` (a field, its value and why)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@functools.lru_cache(maxsize=1024)
def key_of(name: str) -> str:
    """The matching form of a key: lower case, without spaces, underscores or punctuation."""
    return _NOT_KEY.sub("", name.lower())


def type_name(value: object) -> str:
    """A JSON value's type as a reason names it (``null`` for ``None``)."""
    return "null" if value is None else type(value).__name__


class Fields:
    """A record's keys matched case- and spacing-insensitively; ``where`` prefixes reasons."""

    __slots__ = ("names", "values", "where")

    def __init__(self, obj: Mapping[object, object], where: str = "") -> None:
        self.values: dict[str, object] = {}
        self.names: dict[str, str] = {}
        self.where = where
        for name, value in obj.items():
            key = key_of(str(name))
            if key not in self.values or self.values[key] in (None, ""):
                self.values[key] = value
                self.names[key] = str(name)

    def __contains__(self, key: str) -> bool:
        return key in self.values

    def label(self, key: str) -> str:
        """The key as the record spells it, with the prefix, for reasons."""
        return f"{self.where}{self.names.get(key, key)}"

    def raw(self, *keys: str) -> object:
        """The first present, non-empty value among ``keys``."""
        for key in keys:
            value = self.values.get(key)
            if value is not None and value != "":
                return value
        return None

    def text(self, *keys: str) -> str | None:
        """The first present, non-empty value among ``keys``, which must be a string."""
        for key in keys:
            value = self.values.get(key)
            if value is None or value == "":
                continue
            if isinstance(value, str):
                return value
            msg = f"{self.label(key)}: expected a string, got {type_name(value)} {str(value)[:40]}"
            raise Reject(msg)
        return None

    def time(self, *keys: str) -> dt.datetime | None:
        """The first present time among ``keys``; a value that is not a time is rejected."""
        for key in keys:
            value = self.values.get(key)
            if value is None or value == "":
                continue
            parsed = parse_log_time(value)
            if parsed is None:
                msg = f"{self.label(key)}: {str(value)[:40]!r} is not a time stamp"
                raise Reject(msg)
            return parsed
        return None
