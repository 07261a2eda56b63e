"""An Avro object container file's frame, walked without decoding a record: its header
(schema, codec, sync marker) and each block's record count, every sync marker checked.

The columnar reader (:mod:`diagnostics.captures.capture_file`) decodes a file's records with
a vectorised decoder; this walk tells how many records the file holds and whether it ends
where its last block does. A file that does not walk cleanly (truncated, not Avro, a marker
that does not match) is read record by record instead, which names what is wrong with it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

MAGIC = b"Obj\x01"
_SYNC = 16


class _Short(Exception):
    """The bytes end inside a value."""


def _long(data: memoryview, at: int) -> tuple[int, int]:
    """The zig-zag varint at ``at`` and the position after it."""
    shift = result = 0
    while True:
        if at >= len(data):
            raise _Short
        byte = data[at]
        at += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return (result >> 1) ^ -(result & 1), at
        shift += 7
        if shift > 63:
            raise _Short


def _bytes(data: memoryview, at: int) -> tuple[bytes, int]:
    size, at = _long(data, at)
    if size < 0 or at + size > len(data):
        raise _Short
    return bytes(data[at : at + size]), at + size


@dataclass(frozen=True, slots=True)
class Frame:
    """What the walk found: the writer's schema (parsed JSON), the codec and the records."""

    schema: Any
    codec: str
    records: int


def walk(data: bytes) -> Frame | None:
    """The file's :class:`Frame`, or ``None`` when it is not a whole Avro container file
    (the record-by-record reader then says why)."""
    view = memoryview(data)
    if view[:4] != MAGIC:
        return None
    try:
        at = 4
        meta: dict[str, bytes] = {}
        while True:
            count, at = _long(view, at)
            if count == 0:
                break
            if count < 0:  # a block of map entries with its size in bytes
                count = -count
                _, at = _long(view, at)
            for _ in range(count):
                key, at = _bytes(view, at)
                value, at = _bytes(view, at)
                meta[key.decode("utf-8", "replace")] = value
        sync = bytes(view[at : at + _SYNC])
        at += _SYNC
        if len(sync) != _SYNC:
            return None
        records = 0
        while at < len(view):
            count, at = _long(view, at)
            size, at = _long(view, at)
            if count < 0 or size < 0 or at + size + _SYNC > len(view):
                return None
            at += size
            if view[at : at + _SYNC] != sync:
                return None
            at += _SYNC
            records += count
        schema = json.loads(meta.get("avro.schema", b"null"))
    except (_Short, ValueError):
        return None
    codec = meta.get("avro.codec", b"null").decode("utf-8", "replace") or "null"
    return Frame(schema, codec, records)


def field_names(schema: Any) -> set[Any]:
    """The top-level field names of a record schema (none for any other schema)."""
    if not isinstance(schema, dict):
        return set()
    return {f.get("name") for f in schema.get("fields", []) if isinstance(f, dict)}
