"""What the Spark replay's tasks run (docs/spark-replay.md, stages S1, S3 and S7): plain
functions from Arrow batches to Arrow batches, no pyspark, testable on their own.

The semantics are the engine's: S1 reads a slice of the capture with the local reader's
functions; S3 feeds one partition's events, sorted by arrival then input order, to the
engine (:class:`~diagnostics.engine.engine.OrderingEngine`) batch by batch; S7 puts each
slice's outcome columns next to its input columns and writes one part file. Every time
travels between stages as int64 nanoseconds (Spark's timestamps are microseconds).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow as pa

from diagnostics.engine.columns import OUTCOME_COLUMNS, EventColumns
from diagnostics.engine.engine import OrderingEngine
from diagnostics.engine.policy import OrderingPolicy
from diagnostics.engine.release import NEG
from diagnostics.engine.replay import arrival_times
from diagnostics.engine.summary import count_columns
from diagnostics.errors import InputError
from diagnostics.spark.replay_flags import pack, unpack
from diagnostics.spark.replay_splits import ReplayPlan, read_slice
from diagnostics.timestamps import UTC_NS, to_utc

#: S1's narrow columns (``bad_partition``: the raw value where it is not a partition number;
#: ``error``: an arrival error, its message).
NARROW = pa.schema(
    [
        ("eid", pa.int64()),
        ("split", pa.int64()),
        ("part", pa.int64()),
        ("arr", pa.int64()),
        ("app", pa.int64()),
        ("bad_partition", pa.string()),
        ("error", pa.string()),
        ("app_given", pa.bool_()),
    ]
)
_TIMES = ("application_time", "arrival", "system_timestamp", "watermark", "release_time")
#: S3's rows: an event's outcome columns, its flags and status packed in ``flags``
#: (:mod:`diagnostics.spark.replay_flags`); ``m_after``: its timeline's M after it, set only
#: where the event raised M (a change point).
REPLAYED = pa.schema(
    [
        ("part", pa.int64()),
        ("eid", pa.int64()),
        ("split", pa.int64()),
        ("timeline", pa.int64()),
        *((name, pa.int64()) for name in _TIMES),
        ("flags", pa.int64()),
        ("m_after", pa.int64()),
    ]
)
#: In S7's input, a row of S6's ranks (eid, split, output_rank) rather than an event's.
RANK_ROW = "__rank_row"
#: S7's rows: one per slice written, its counts (``diagnostics.engine.summary``).
COUNT_NAMES = (
    "events",
    "accepted",
    "reordered_within_tolerance",
    "adjusted",
    "adjusted_late",
    "adjusted_out_of_order",
    "dropped",
    "dropped_early",
    "dropped_late",
    "dropped_out_of_order",
    "dropped_invalid_timestamp",
    "dropped_invalid_key",
    "released",
    "never_released",
)
WRITTEN = pa.schema([("split", pa.int64()), *((n, pa.int64()) for n in COUNT_NAMES)])


_DDL = {"int64": "long", "int8": "byte", "bool": "boolean", "string": "string"}


def batch_frames(batches: Iterator[pa.RecordBatch]) -> Iterator[pl.DataFrame]:
    """A task's Arrow batches as polars frames, empty ones left out."""
    for batch in batches:
        frame = pl.from_arrow(batch)
        assert isinstance(frame, pl.DataFrame)
        if not frame.is_empty():
            yield frame


def key_runs(frames: Iterator[pl.DataFrame], key: str) -> Iterator[tuple[int, pl.DataFrame]]:
    """(value, rows) pieces of batches sorted by ``key`` first."""
    for frame in frames:
        values = frame[key].to_numpy()
        cuts = np.flatnonzero(values[1:] != values[:-1]) + 1
        for start, stop in zip(np.r_[0, cuts], np.r_[cuts, len(values)], strict=True):
            yield int(values[start]), frame.slice(int(start), int(stop - start))


def ddl(schema: pa.Schema) -> str:
    """An Arrow schema of the task functions as Spark's DDL text."""
    return ", ".join(f"{field.name} {_DDL[str(field.type)]}" for field in schema)


def narrow_batches(plan: ReplayPlan, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """S1: for each split id in ``batches`` (column ``id``), its events' narrow columns."""
    for batch in batches:
        for split in batch.column("id").to_pylist():
            yield _narrow(plan, int(split))


def _narrow(plan: ReplayPlan, split: int) -> pa.RecordBatch:
    events, policy, columns = read_slice(plan, split)
    first = plan.slices[split].offset
    n = events.height
    eid = pl.int_range(first, first + n, dtype=pl.Int64, eager=True)
    if n == 0:
        return pa.RecordBatch.from_pylist([], schema=NARROW)
    try:
        arrival = arrival_times(events, columns, first_row=first)
    except InputError as exc:
        return pa.RecordBatch.from_pylist([{"eid": first, "error": str(exc)}], schema=NARROW)
    name = columns.partition
    if name is None or name not in events.columns:
        part = pl.repeat(0, n, dtype=pl.Int64, eager=True)
        bad = pl.repeat(None, n, dtype=pl.String, eager=True)
    else:
        part = events[name].cast(pl.Int64, strict=False)
        bad = events[name].cast(pl.String).set(part.is_not_null(), None)
    if policy.timestamp_by is None:
        app = pl.repeat(None, n, dtype=pl.Int64, eager=True)
        given = pl.repeat(False, n, dtype=pl.Boolean, eager=True)
    else:
        app = to_utc(events[policy.timestamp_by]).dt.epoch("ns")
        given = events[policy.timestamp_by].is_not_null()
    frame = pl.DataFrame(
        {
            "eid": eid,
            "split": pl.repeat(split, n, dtype=pl.Int64, eager=True),
            "part": part,
            "arr": arrival.dt.epoch("ns"),
            "app": app,
            "bad_partition": bad,
            "error": pl.repeat(None, n, dtype=pl.String, eager=True),
            "app_given": given,
        }
    )
    return pa.RecordBatch.from_arrays([frame[c].to_arrow() for c in NARROW.names], schema=NARROW)


_ENGINE_COLUMNS = EventColumns(
    arrival="arrival", partition="partition", row="__row", parsed_arrival="__arrival"
)


#: With TIMESTAMP BY ... OVER, the one key column of a substream's engine: a constant for
#: a substream's events, null for the events whose key is missing (stage S2 numbered them).
_KEY = "__key"


def _engine_policy(plan: ReplayPlan) -> OrderingPolicy:
    """The policy the engine of one run executes: application time in column ``app``; with
    OVER, one key column (the run is one substream, or the events without a key)."""
    ts = "app" if plan.policy.timestamp_by is not None else None
    over = (_KEY,) if plan.policy.over else ()
    return dataclasses.replace(plan.policy, timestamp_by=ts, over=over)


def owns_releases(plan: ReplayPlan) -> bool:
    """Whether each timeline releases its events itself (PARTITION BY, OVER or one
    partition), so S3's tasks give every event its release time; else the merged
    watermark's releases come later (S4, S5)."""
    return bool(plan.policy.partition_by or plan.policy.over or len(plan.partitions) == 1)


class _PartitionRun:
    """One timeline's events fed to one engine, as they come (sorted by arrival, eid): a
    partition's, or with OVER a substream's (``sub``: its id from S2, -1 for the events of
    the partition whose key is missing).

    When the timeline releases its own events (:func:`owns_releases`), an event's outcome
    row leaves the task once its release time is known (or it is dropped, or at the end:
    never released): the rows held are the engine's own pending events, bounded by the
    tolerances. Otherwise rows leave at once, without release times (the engine's own
    releases are not the merged watermark's and are dropped)."""

    def __init__(self, plan: ReplayPlan, part: int, sub: int) -> None:
        self.part = part
        self.sub = sub
        self.over = bool(plan.policy.over)
        self.own = owns_releases(plan)
        self.timeline = sub if self.over else plan.partitions.index(part)
        self.engine = OrderingEngine(_engine_policy(plan), (part,), _ENGINE_COLUMNS)
        self.m = NEG  # the timeline's M: the largest System.Timestamp accepted so far
        self.waiting: pl.DataFrame | None = None  # outcome rows whose release is not known

    def feed(self, rows: pl.DataFrame) -> list[pa.RecordBatch]:
        batch = pl.DataFrame(
            {
                "__row": rows["eid"],
                "__arrival": rows["arr"].cast(pl.Datetime("ns")).dt.replace_time_zone("UTC"),
                "arrival": rows["arr"],
                "partition": rows["part"],
                "app": rows["app"].cast(pl.Datetime("ns")).dt.replace_time_zone("UTC"),
            }
        )
        if self.over:
            key = pl.repeat("k" if self.sub >= 0 else None, rows.height, dtype=pl.String)
            batch = batch.with_columns(key.alias(_KEY))
        result = self.engine.process(batch)
        out = result.outcomes
        # M after each event, as engine/watermarks.py derives it: the running maximum of the
        # accepted System.Timestamps (an adjusted out-of-order event never raises M)
        accepted = out["system_timestamp"].dt.epoch("ns").fill_null(NEG).to_numpy()
        m_after = np.maximum.accumulate(np.r_[self.m, accepted])[1:]
        rise = m_after > np.r_[self.m, m_after[:-1]]
        self.m = int(m_after[-1])
        outcome = pl.DataFrame(
            {
                "part": rows["part"],
                "pos": out["event_id"],
                "eid": rows["eid"],
                "split": rows["split"],
                # the run's timeline id (null stays null: an event without an OVER key)
                "timeline": out["timeline"].cast(pl.Int64) * 0 + self.timeline,
                **{name: _ns(out[name]) for name in _TIMES},
                "flags": pack(out),
                "dropped": out["dropped"],
                "m_after": pl.Series(m_after, dtype=pl.Int64).set(pl.Series(~rise), None),
            }
        )
        if not self.own:
            return [_arrow(outcome)]  # the merged watermark's releases come in S4/S5
        return self._released(outcome, result.releases, closing=False)

    def close(self) -> list[pa.RecordBatch]:
        if not self.own:
            self.engine.close()
            return []
        return self._released(None, self.engine.close(), closing=True)

    def _released(
        self, outcome: pl.DataFrame | None, releases: pl.DataFrame, *, closing: bool
    ) -> list[pa.RecordBatch]:
        """The waiting rows (with ``outcome``'s) that ``releases`` resolve, with their release
        times; the dropped ones (never released); at the end, all that are left."""
        fresh = None if outcome is None else outcome.drop("release_time")
        frames = [f for f in (self.waiting, fresh) if f is not None]
        if not frames:
            return []
        waiting = pl.concat(frames).with_columns(pl.col("pos").cast(pl.Int64))
        known = pl.DataFrame(
            {
                "pos": releases["event_id"].cast(pl.Int64),
                "release_time": _ns(releases["release_time"]),
            }
        )
        out = [waiting.join(known, on="pos", how="inner")]
        waiting = waiting.join(known, on="pos", how="anti")
        never = pl.col("dropped") | pl.lit(closing)
        out.append(waiting.filter(never).with_columns(release_time=pl.lit(None, pl.Int64)))
        self.waiting = waiting.filter(~never)
        return [_arrow(frame) for frame in out if not frame.is_empty()]


def _ns(series: pl.Series) -> pl.Series:
    return series.dt.epoch("ns").cast(pl.Int64)


def _arrow(frame: pl.DataFrame) -> pa.RecordBatch:
    """``frame`` as a batch of :data:`REPLAYED` (absent columns null)."""
    arrays = []
    for field in REPLAYED:
        if field.name in frame.columns:
            arrays.append(frame[field.name].to_arrow().cast(field.type))
        else:
            arrays.append(pa.nulls(frame.height, field.type))
    return pa.RecordBatch.from_arrays(arrays, schema=REPLAYED)


def replay_batches(plan: ReplayPlan, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """S3: narrow rows with ``sub`` sorted by (part, sub, arr, eid) in, outcome and release
    rows out (``sub``: the OVER substream from S2, else 0).

    One engine per run of a timeline; state: that engine (its timeline and its pending
    events, bounded by the tolerances), never the timeline's events."""
    run: _PartitionRun | None = None
    for batch in batches:
        rows = pl.from_arrow(batch)
        assert isinstance(rows, pl.DataFrame)
        if rows.is_empty():
            continue
        part, sub = rows["part"].to_numpy(), rows["sub"].to_numpy()
        cuts = np.flatnonzero((part[1:] != part[:-1]) | (sub[1:] != sub[:-1])) + 1
        for start, stop in zip(np.r_[0, cuts], np.r_[cuts, len(part)], strict=True):
            value, key = int(part[start]), int(sub[start])
            if run is None or (run.part, run.sub) != (value, key):
                if run is not None:
                    yield from run.close()
                run = _PartitionRun(plan, value, key)
            yield from run.feed(rows.slice(int(start), int(stop - start)))
    if run is not None:
        yield from run.close()


def outcome_columns(rows: pl.DataFrame) -> pl.DataFrame:
    """The outcome columns (docs/schemas.md), typed as the local replay types them, from S7's
    rows of one slice sorted by ``eid``."""
    times = {
        name: rows[name].cast(pl.Datetime("ns")).dt.replace_time_zone("UTC") for name in _TIMES
    }
    columns = {
        "event_id": rows["eid"],
        "partition": rows["part"],
        "timeline": rows["timeline"],
        **times,
        **unpack(rows["flags"]),
        "output_rank": rows["output_rank"],
    }
    frame = pl.DataFrame(columns)
    assert all(frame.schema[name] == UTC_NS for name in _TIMES)
    return frame.select(OUTCOME_COLUMNS)


def write_batches(
    plan: ReplayPlan, folder: str, batches: Iterator[pa.RecordBatch]
) -> Iterator[pa.RecordBatch]:
    """S7: rows sorted by (split, eid) in (with :data:`RANK_ROW`, S6's rank rows among
    them); each slice's input columns and outcome columns written as ``part-NNNNN.parquet``
    (its eids consecutive); its counts out."""
    pending: list[pl.DataFrame] = []
    current: int | None = None
    for batch in batches:
        rows = pl.from_arrow(batch)
        assert isinstance(rows, pl.DataFrame)
        if rows.is_empty():
            continue
        split = rows["split"].to_numpy()
        cuts = np.flatnonzero(split[1:] != split[:-1]) + 1
        for start, stop in zip(np.r_[0, cuts], np.r_[cuts, len(split)], strict=True):
            value = int(split[start])
            if current is not None and value != current:
                yield _write_slice(plan, folder, current, pl.concat(pending))
                pending = []
            current = value
            pending.append(rows.slice(int(start), int(stop - start)))
    if current is not None:
        yield _write_slice(plan, folder, current, pl.concat(pending))


def _write_slice(plan: ReplayPlan, folder: str, split: int, rows: pl.DataFrame) -> pa.RecordBatch:
    events, _, _ = read_slice(plan, split)
    if RANK_ROW in rows.columns:  # S6's ranks, beside the rows: each event's own
        ranks = rows.filter(pl.col(RANK_ROW)).select("eid", "output_rank")
        rows = (
            rows.filter(~pl.col(RANK_ROW))
            .drop("output_rank")
            .join(ranks, on="eid", how="left")
            .sort("eid")
        )
    outcomes = outcome_columns(rows)
    if outcomes.height != events.height:
        msg = f"slice {split}: {outcomes.height} outcome rows for {events.height} events"
        raise AssertionError(msg)
    frame = pl.concat([events, outcomes], how="horizontal")
    path = Path(folder) / f"part-{split:05d}.parquet"
    tmp = path.with_name(f".{path.name}.tmp")
    frame.write_parquet(tmp, compression="snappy")
    tmp.replace(path)
    counts = count_columns(frame)
    return pa.RecordBatch.from_pylist([{"split": split, **counts}], schema=WRITTEN)
