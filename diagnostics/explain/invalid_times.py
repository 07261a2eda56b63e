"""What a capture says about its events without a valid application time: which are bodies
the input could not read at all, and of the rest which hold a value ASA does not read as a
time (with examples) and which hold none, from which senders.

An Event Hubs Capture body that is not a JSON object (the reader keeps its text in column
``Body``) never reaches TIMESTAMP BY in ASA: the input's deserializer rejects it
(``InputDeserializerError.InvalidData``), so it is counted there and not as an invalid
timestamp, once, whether the evidence comes from the capture, the logs or both.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import polars as pl

from diagnostics.captures.avro import RAW_BODY
from diagnostics.kinds import INPUT_DATA_PREFIX

#: The kind ASA logs for a body its input cannot deserialize.
INVALID_DATA = f"{INPUT_DATA_PREFIX}.InvalidData"
#: Examples of a value that is not a time, and senders, named at most.
EXAMPLES = 3
SENDERS = 5


def unreadable_bodies(out: pl.DataFrame, column: str | None) -> pl.Series:
    """Events of an outcome frame whose body the input could not read: the capture holds
    the body's text in ``Body`` (Capture bodies that are not JSON objects) and no value in
    the TIMESTAMP BY ``column``; all false for other captures."""
    if column is None or RAW_BODY not in out.columns or out.schema[RAW_BODY] != pl.String:
        return pl.Series("unreadable", [False] * out.height, dtype=pl.Boolean)
    value = out[column].is_null() if column in out.columns else pl.repeat(True, out.height)
    return (out[RAW_BODY].is_not_null() & value & out["invalid_timestamp"]).alias("unreadable")


def _senders(events: pl.DataFrame, sender: str | None) -> dict[str, int]:
    """The senders of ``events`` with most events first (at most :data:`SENDERS`)."""
    if sender is None or sender not in events.columns or events.is_empty():
        return {}
    top = (
        events.filter(pl.col(sender).is_not_null())
        .group_by(sender)
        .len()
        .sort(["len", sender], descending=[True, False])
        .head(SENDERS)
    )
    return {str(k): int(n) for k, n in zip(top[sender], top["len"], strict=True)}


def invalid_breakdown(
    out: pl.DataFrame,
    mask: pl.Series,
    column: str | None,
    sender: str | None,
    held_null: Callable[[], pl.Series | None] | None = None,
) -> dict[str, Any]:
    """The events of ``mask`` (invalid timestamps, unreadable bodies left out) split by what
    their TIMESTAMP BY ``column`` holds: ``unparsable`` (a value, not a time ASA reads: its
    first distinct values as examples), and of those with no value ``field_missing`` (the
    event does not have the field) and ``null_or_empty`` (the field is null, or empty
    text), each with its events and senders (``sender_column``). ``held_null()`` tells,
    row for row with ``out`` (in input order), which events hold the field as null; when it
    is not given (or cannot tell, as for CSV and Parquet) the events with no value are
    ``missing_or_null``."""
    events = out.filter(mask)
    if column is None or column not in events.columns:
        return {}
    raw = events[column]
    text = raw.cast(pl.String) if raw.dtype != pl.String else raw
    has_value = text.is_not_null() & (text.str.strip_chars() != "")
    unparsable = events.filter(has_value)
    empty = events.filter(~has_value)
    examples = (
        text.filter(has_value).unique(maintain_order=True).head(EXAMPLES).to_list()
        if not unparsable.is_empty()
        else []
    )
    found: dict[str, Any] = {
        "unparsable": {
            "events": unparsable.height,
            "examples": [str(v)[:60] for v in examples],
            "senders": _senders(unparsable, sender),
        }
    }
    held = _held(out, mask, raw, held_null) if not empty.is_empty() else None
    if held is None:
        found["missing_or_null"] = {"events": empty.height, "senders": _senders(empty, sender)}
    else:
        absent = ~has_value & raw.is_null() & ~held
        for name, rows in (("field_missing", absent), ("null_or_empty", ~has_value & ~absent)):
            chosen = events.filter(rows)
            found[name] = {"events": chosen.height, "senders": _senders(chosen, sender)}
    return {**found, "sender_column": sender}


def _held(
    out: pl.DataFrame,
    mask: pl.Series,
    raw: pl.Series,
    held_null: Callable[[], pl.Series | None] | None,
) -> pl.Series | None:
    """Which of the events of ``mask`` hold the field as null (``None``: not known)."""
    if held_null is None:
        return None
    if not bool(raw.is_null().any()):
        return pl.Series([False] * raw.len(), dtype=pl.Boolean)
    every = held_null()
    if every is None or every.len() != out.height:
        return None
    rows = out["event_id"].filter(mask) if "event_id" in out.columns else mask.arg_true()
    return every.gather(rows).fill_null(False)
