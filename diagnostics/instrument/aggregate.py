"""Aggregate per-event data-error flags into ASA's per-window data-error records.

One aggregate per (kind, partition, processing-time window). The processing time τ of an
event is its arrival (the replay runs in global arrival order), and its window is
``floor(τ / error_window)``. Invariants:

- for every kind, ``sum(event_count)`` equals the number of outcome rows flagged with it,
  whatever the window (an event flagged with two kinds counts once under each);
- ``from_ns``/``to_ns`` are the first and last τ of the aggregate's events, both inside its
  window; the example event is the first of them (by τ, then ``event_id``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import date, datetime, time, timedelta
from typing import Any

import numpy as np
import polars as pl

from diagnostics.engine.columns import OUTCOME_COLUMNS
from diagnostics.errors import InputError
from diagnostics.kinds import ErrorKind

#: The outcomes flag column behind each data-error kind, in the order records are written.
KIND_FLAGS: tuple[tuple[ErrorKind, str], ...] = (
    (ErrorKind.LATE, "late"),
    (ErrorKind.EARLY, "early"),
    (ErrorKind.OUT_OF_ORDER, "out_of_order"),
    (ErrorKind.INVALID_TIMESTAMP, "invalid_timestamp"),
    (ErrorKind.INVALID_KEY, "invalid_key"),
)

#: Columns the engine adds to the input's; everything else is payload (``ExampleEvents``).
ENGINE_COLUMNS: frozenset[str] = frozenset(OUTCOME_COLUMNS)

_REQUIRED = ("event_id", "partition", "arrival", "application_time")


def _check_columns(outcomes: pl.DataFrame, key_columns: Sequence[str]) -> None:
    needed = [*_REQUIRED, *(flag for _, flag in KIND_FLAGS), *key_columns]
    missing = [name for name in needed if name not in outcomes.columns]
    if missing:
        msg = f"outcomes frame lacks column(s) {', '.join(missing)} needed for diagnostics"
        raise InputError(msg)


def resolve_key_columns(outcomes: pl.DataFrame, key_columns: Sequence[str]) -> tuple[str, ...]:
    """The key columns counted per aggregate: the given ones, else ``device_id`` if present."""
    if key_columns:
        return tuple(key_columns)
    return ("device_id",) if "device_id" in outcomes.columns else ()


def _ns(name: str) -> pl.Expr:
    return pl.col(name).dt.cast_time_unit("ns").dt.epoch("ns")


def aggregate_errors(
    outcomes: pl.DataFrame, window_ns: int, key_columns: Sequence[str] = ()
) -> pl.DataFrame:
    """One row per (kind, partition, window), sorted by ``to_ns``, kind order, partition.

    Columns: ``kind`` (String), ``partition`` (Int64), ``window`` (Int64), ``event_count``,
    ``from_ns``, ``to_ns``, ``example_event_id``, ``example_application_ns``,
    ``example_arrival_ns`` (Int64, application null if invalid), ``lateness_min``,
    ``lateness_p50``, ``lateness_p95``, ``lateness_max`` (Float64 seconds, arrival minus
    application, null when no event has an application time), ``distinct_keys`` (Int64, null
    without key columns).
    """
    keys = resolve_key_columns(outcomes, key_columns)
    _check_columns(outcomes, keys)
    # Lazy: the per-event columns stream through the filters and the group-by.
    base = outcomes.lazy().select(
        pl.col("event_id").cast(pl.Int64),
        pl.col("partition").cast(pl.Int64),
        _ns("arrival").alias("tau"),
        _ns("application_time").alias("app"),
        *(pl.col(flag).fill_null(False) for _, flag in KIND_FLAGS),
        (pl.struct(list(keys)) if keys else pl.lit(None, pl.Int64)).alias("key"),
    )
    parts = [
        base.filter(pl.col(flag)).select(
            pl.lit(kind.value).alias("kind"),
            pl.lit(order, pl.Int64).alias("kind_order"),
            "event_id",
            "partition",
            "tau",
            "app",
            "key",
        )
        for order, (kind, flag) in enumerate(KIND_FLAGS)
    ]
    flagged = pl.concat(parts).with_columns(
        (pl.col("tau") // window_ns).alias("window"),
        (pl.col("tau") - pl.col("app")).alias("lateness"),
    )
    order = [pl.col("tau"), pl.col("event_id")]
    distinct = pl.col("key").n_unique().cast(pl.Int64) if keys else pl.lit(None, pl.Int64)
    grouped = flagged.group_by(["kind_order", "kind", "partition", "window"]).agg(
        pl.len().cast(pl.Int64).alias("event_count"),
        pl.col("tau").min().alias("from_ns"),
        pl.col("tau").max().alias("to_ns"),
        pl.col("event_id").sort_by(order).first().alias("example_event_id"),
        pl.col("app").sort_by(order).first().alias("example_application_ns"),
        pl.col("tau").sort_by(order).first().alias("example_arrival_ns"),
        pl.col("lateness").min().cast(pl.Float64).alias("lateness_min"),
        _linear_quantile("lateness", 0.5).alias("lateness_p50"),
        _linear_quantile("lateness", 0.95).alias("lateness_p95"),
        pl.col("lateness").max().cast(pl.Float64).alias("lateness_max"),
        distinct.alias("distinct_keys"),
    )
    frame = grouped.drop("kind_order").collect()
    return in_record_order(frame.with_columns(_seconds(frame[c]) for c in LATENESS_COLUMNS))


LATENESS_COLUMNS = ("lateness_min", "lateness_p50", "lateness_p95", "lateness_max")


def _seconds(nanoseconds: pl.Series) -> pl.Series:
    """Seconds from whole nanoseconds (a half rounded away from zero) by one true division:
    polars divides by a literal as a multiplication by its inverse (30e9 / 1e9 gave
    30.000000000000004) and its ``round(9)`` rounded a half nanosecond one way for a one-row
    frame (a Spark task's group) and the other way for a longer one."""
    values = nanoseconds.cast(pl.Float64).to_numpy()
    whole = np.sign(values) * np.floor(np.abs(values) + 0.5)
    return pl.Series(nanoseconds.name, np.divide(whole, 1e9), nan_to_null=True)


def _linear_quantile(column: str, q: float) -> pl.Expr:
    """The ``q`` quantile of a group's non-null values, interpolated linearly between the two
    nearest ranks (polars' ``"linear"``), written out as element-wise arithmetic on the two
    values so that the result cannot depend on how many groups a frame holds (a Spark task
    aggregates one group, the local replay all of them). Null for a group without values."""
    values = pl.col(column).drop_nulls().sort()
    position = (values.len() - 1).cast(pl.Float64) * q
    below = position.floor().cast(pl.Int64)
    low = values.get(below, null_on_oob=True)
    high = values.get(position.ceil().cast(pl.Int64), null_on_oob=True)
    return low + (high - low).cast(pl.Float64) * (position - below.cast(pl.Float64))


def in_record_order(aggregates: pl.DataFrame) -> pl.DataFrame:
    """Aggregates (rows of :func:`aggregate_errors`, from one call or many) sorted as records
    are written: by ``to_ns``, kind order (:data:`KIND_FLAGS`), partition."""
    kinds = [kind.value for kind, _ in KIND_FLAGS]
    order = pl.col("kind").replace_strict(kinds, list(range(len(kinds))), return_dtype=pl.Int64)
    return aggregates.sort([pl.col("to_ns"), order, pl.col("partition")], nulls_last=True)


def _jsonable(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat().replace("+00:00", "Z")
    if isinstance(value, date | time):
        return value.isoformat()
    if isinstance(value, timedelta):
        return value.total_seconds()
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return value


def example_payloads(outcomes: pl.DataFrame, event_ids: Sequence[int]) -> dict[int, str]:
    """``ExampleEvents`` strings (a JSON list with one event) for the given ``event_id`` s.

    The payload is the input's own columns (everything but :data:`ENGINE_COLUMNS`), values
    rendered as JSON (datetimes as ISO-8601 with ``Z``).
    """
    payload_columns = [name for name in outcomes.columns if name not in ENGINE_COLUMNS]
    # A gather per column: a frame-level filter would re-chunk every column first.
    at = outcomes.get_column("event_id").is_in(list(set(event_ids))).arg_true()
    rows = pl.DataFrame(
        [outcomes.get_column(name).gather(at) for name in ("event_id", *payload_columns)]
    )
    result: dict[int, str] = {}
    for row in rows.iter_rows(named=True):
        event = {name: _jsonable(row[name]) for name in payload_columns}
        result[int(row["event_id"])] = json.dumps([event], ensure_ascii=False, default=str)
    return result
