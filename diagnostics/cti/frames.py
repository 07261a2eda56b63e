"""Between polars frames and the CTI engine: reading events and CTIs, writing outcomes.

Conventions follow the ASA replay (docs/schemas.md): input columns kept, ``event_id`` (Int64,
input position), times as ``Datetime("ns", "UTC")``. Rows whose start (or interval end) is
missing or unparsable are not fed to the engine; they are outcomes with
``invalid_timestamp`` true and status ``dropped``, so nothing is lost.

Processing order: by arrival time where an arrival column is given (ties: left input first,
then input order; an imported CTI before an event of the same arrival), else input order.
Two inputs or imported CTIs need arrival times to be interleaved.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import polars as pl

from diagnostics.cti.events import OUTPUT, CtiRecord, Event, EventOutcome, ImportedCti, Shape
from diagnostics.cti.policy import INFINITY
from diagnostics.errors import InputError, Setting
from diagnostics.timestamps import UTC_NS, from_ns, to_ns, to_utc

#: Names of the inputs in ``ctis.parquet`` and in messages, by stream index.
STREAM_NAMES = {0: "left", 1: "right", OUTPUT: "output"}

#: Outcome columns added to every input row, in this order (see docs/schemas.md).
CTI_OUTCOME_COLUMNS: tuple[str, ...] = (
    "event_id",
    "shape",
    "application_time",
    "application_end",
    "arrival",
    "invalid_timestamp",
    "latest_cti",
    "latest_cti_origin",
    "violation",
    "dropped",
    "status",
    "system_timestamp",
    "committing_cti",
    "committed_at_infinity",
    "cti_seq",
    "release_time",
    "output_rank",
)


_DROPPED = "dropped"
#: :class:`EventOutcome` fields as a frame (string enums become their values).
_RESULT_SCHEMA = {
    "stream": pl.Int64,
    "event_id": pl.Int64,
    "shape": pl.String,
    "start_ns": pl.Int64,
    "end_ns": pl.Int64,
    "arrival_ns": pl.Int64,
    "latest_cti_ns": pl.Int64,
    "latest_cti_origin": pl.String,
    "violation": pl.Boolean,
    "status": pl.String,
    "system_start_ns": pl.Int64,
    "committing_cti_ns": pl.Int64,
    "committing_seq": pl.Int64,
    "release_ns": pl.Int64,
    "output_rank": pl.Int64,
}


@dataclass(frozen=True, slots=True)
class CtiColumns:
    """Input column names: ``start`` (required), ``end`` (intervals and end edges), ``edge``
    (values ``start``/``end``: edge events), ``arrival`` (processing time, optional)."""

    start: str
    end: str | None = None
    edge: str | None = None
    arrival: str | None = None


@dataclass(frozen=True, slots=True)
class Prepared:
    """One input read for the engine: its frame, the events to feed and the invalid rows."""

    frame: pl.DataFrame
    events: tuple[Event, ...]
    invalid: frozenset[int]
    has_arrival: bool
    last_arrival_ns: int | None


def _need(frame: pl.DataFrame, name: str, what: str, label: str) -> None:
    if name not in frame.columns:
        msg = f"{label}: {what} column '{name}' is missing (columns: {', '.join(frame.columns)})"
        raise InputError(msg)


def prepare(frame: pl.DataFrame, columns: CtiColumns, stream: int, label: str) -> Prepared:
    """Parse ``frame``'s times and shapes into engine events (input order)."""
    _need(frame, columns.start, "start", label)
    start = to_ns(to_utc(frame[columns.start])).to_list()
    end: list[int | None] = [None] * frame.height
    if columns.end is not None:
        _need(frame, columns.end, "end", label)
        end = to_ns(to_utc(frame[columns.end])).to_list()
    arrival: list[int | None] = [None] * frame.height
    if columns.arrival is not None and columns.arrival in frame.columns:
        parsed = to_utc(frame[columns.arrival])
        bad = parsed.is_null()
        if bad.any():
            i = int(bad.arg_true()[0])
            value = frame[columns.arrival][i]
            msg = f"{label}: arrival column '{columns.arrival}', row {i + 1}: '{value}' is not a timestamp"
            raise InputError(msg)
        arrival = to_ns(parsed).to_list()
    edges: list[str | None] = [None] * frame.height
    if columns.edge is not None:
        _need(frame, columns.edge, "edge", label)
        edges = frame[columns.edge].cast(pl.String).str.strip_chars().str.to_lowercase().to_list()
    events: list[Event] = []
    invalid: set[int] = set()
    fixed = None if columns.edge is not None else _shape(columns, None, 0, label)
    interval, end_edge = Shape.INTERVAL, Shape.EDGE_END
    for i in range(frame.height):
        shape = fixed or _shape(columns, edges[i], i, label)
        s, e = start[i], end[i]
        if s is None:
            invalid.add(i)
            continue
        if shape is interval or shape is end_edge:
            if e is None or e < s or (e == s and shape is interval):
                invalid.add(i)
                continue
            events.append(Event(i, s, e, shape, arrival[i], stream))
        else:
            events.append(Event(i, s, None, shape, arrival[i], stream))
    has_arrival = columns.arrival is not None and columns.arrival in frame.columns
    known = [a for a in arrival if a is not None]
    last = max(known) if known else None
    return Prepared(frame, tuple(events), frozenset(invalid), has_arrival, last)


def _shape(columns: CtiColumns, edge: str | None, row: int, label: str) -> Shape:
    if columns.edge is not None:
        if edge == "start":
            return Shape.EDGE_START
        if edge == "end":
            if columns.end is None:
                msg = f"{label}: row {row + 1} is an end edge but no interval end column was given"
                raise InputError(msg, Setting.END_COLUMN)
            return Shape.EDGE_END
        msg = f"{label}: edge column '{columns.edge}', row {row + 1}: '{edge}' is not start or end"
        raise InputError(msg)
    return Shape.INTERVAL if columns.end is not None else Shape.POINT


def read_imported(frame: pl.DataFrame, stream: int, label: str) -> tuple[ImportedCti, ...]:
    """Imported CTIs from a table with ``cti`` and ``processing_time`` (or ``arrival_time``).

    A ``ctis.parquet`` written by a CTI replay is accepted as is: its ``output`` rows are the
    CTIs that replay's query issued; a null ``cti`` with ``infinite`` true is the +∞ flush.
    """
    if "stream" in frame.columns:
        frame = frame.filter(pl.col("stream") == STREAM_NAMES[OUTPUT])
    _need(frame, "cti", "CTI", label)
    when = next((c for c in ("processing_time", "arrival_time") if c in frame.columns), None)
    if when is None:
        msg = (
            f"{label}: imported CTIs need a processing_time (or arrival_time) column to interleave"
        )
        raise InputError(msg)
    cti = to_ns(to_utc(frame["cti"])).to_list()
    infinite = frame["infinite"].to_list() if "infinite" in frame.columns else [False] * len(cti)
    processing = to_ns(to_utc(frame[when])).to_list()
    items: list[ImportedCti] = []
    for i, (c, inf, p) in enumerate(zip(cti, infinite, processing, strict=True)):
        if p is None or (c is None and not inf):
            msg = f"{label}: row {i + 1}: the CTI or its {when} is missing or not a timestamp"
            raise InputError(msg)
        items.append(ImportedCti(INFINITY if inf else c, p, stream))
    return tuple(sorted(items, key=lambda item: item.arrival_ns or 0))


def processing_order(
    inputs: Sequence[Prepared], imported: Sequence[ImportedCti] = ()
) -> list[Event | ImportedCti]:
    """All items in processing order (see the module docstring)."""
    if len(inputs) == 1 and not imported:
        only = inputs[0]
        if not only.has_arrival:
            return list(only.events)
        ordered: list[Event] = sorted(only.events, key=lambda ev: (ev.arrival_ns, ev.event_id))
        return [*ordered]
    for index, prepared in enumerate(inputs):
        if not prepared.has_arrival:
            what = "imported CTIs need" if imported else "a two-input replay needs"
            msg = f"{STREAM_NAMES[index]} input: {what} an arrival column to interleave"
            raise InputError(msg, Setting.ARRIVAL)
    keyed: list[tuple[int, int, int, int, Event | ImportedCti]] = []
    for n, item in enumerate(imported):
        keyed.append((item.arrival_ns or 0, 0, item.stream, n, item))
    for prepared in inputs:
        for ev in prepared.events:
            keyed.append((ev.arrival_ns or 0, 1, ev.stream, ev.event_id, ev))
    keyed.sort(key=lambda k: k[:4])
    return [k[4] for k in keyed]


def _times(values: Sequence[int | None], name: str) -> pl.Series:
    plain = [None if v is None or v == INFINITY else v for v in values]
    return from_ns(pl.Series(name, plain, dtype=pl.Int64))


def outcome_frame(
    prepared: Prepared, outcomes: Sequence[EventOutcome], columns: CtiColumns
) -> pl.DataFrame:
    """Input rows in input order with :data:`CTI_OUTCOME_COLUMNS` appended."""
    frame = prepared.frame
    n = frame.height
    start = to_utc(frame[columns.start])
    end = (
        to_utc(frame[columns.end])
        if columns.end is not None
        else pl.Series([None] * n, dtype=UTC_NS)
    )
    arrival = (
        to_utc(frame[columns.arrival])
        if prepared.has_arrival and columns.arrival is not None
        else pl.Series([None] * n, dtype=UTC_NS)
    )
    results = pl.DataFrame(list(outcomes), schema=_RESULT_SCHEMA, orient="row")
    rows = (
        pl.DataFrame({"event_id": pl.Series(range(n), dtype=pl.Int64)})
        .join(results, on="event_id", how="left")
        .sort("event_id")
    )
    known = pl.col("status").is_not_null()
    infinite = pl.col("committing_cti_ns") == INFINITY

    def time(name: str) -> pl.Expr:
        finite = pl.when(pl.col(name) == INFINITY).then(None).otherwise(pl.col(name))
        return finite.cast(pl.Datetime("ns")).dt.replace_time_zone("UTC")

    added = rows.select(
        "event_id",
        "shape",
        start.alias("application_time"),
        end.alias("application_end"),
        arrival.alias("arrival"),
        (~known).alias("invalid_timestamp"),
        time("latest_cti_ns").alias("latest_cti"),
        "latest_cti_origin",
        pl.col("violation").fill_null(False),
        (pl.col("status").fill_null(_DROPPED) == _DROPPED).alias("dropped"),
        pl.col("status").fill_null(_DROPPED),
        time("system_start_ns").alias("system_timestamp"),
        time("committing_cti_ns").alias("committing_cti"),
        (known & infinite.fill_null(False)).alias("committed_at_infinity"),
        pl.col("committing_seq").alias("cti_seq"),
        time("release_ns").alias("release_time"),
        "output_rank",
    )
    clashes = [c for c in CTI_OUTCOME_COLUMNS if c in frame.columns]
    if clashes:  # replay_cti renames them first (input_<name>); never drop an input column
        msg = f"input columns named like CTI outcome columns: {', '.join(clashes)}"
        raise ValueError(msg)
    return pl.concat([frame, added], how="horizontal")


def cti_frame(records: Sequence[CtiRecord]) -> pl.DataFrame:
    """Every CTI issued: ``seq``, ``stream`` (left/right/output), ``cti`` (null for +∞),
    ``infinite``, ``origin``, ``processing_time``, ``after_event_id``, ``after_stream``."""
    return pl.DataFrame(
        [
            pl.Series("seq", [r.seq for r in records], dtype=pl.Int64),
            pl.Series("stream", [STREAM_NAMES[r.stream] for r in records], dtype=pl.String),
            _times([r.cti_ns for r in records], "cti"),
            pl.Series("infinite", [r.cti_ns == INFINITY for r in records], dtype=pl.Boolean),
            pl.Series("origin", [r.origin.value for r in records], dtype=pl.String),
            _times([r.processing_ns for r in records], "processing_time"),
            pl.Series("after_event_id", [r.after_event_id for r in records], dtype=pl.Int64),
            pl.Series(
                "after_stream",
                [
                    STREAM_NAMES[r.after_stream] if r.after_stream is not None else None
                    for r in records
                ],
                dtype=pl.String,
            ),
        ]
    )
