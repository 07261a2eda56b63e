"""Whole-capture replay under Flink's or Spark's rules: read the columns, sort by arrival,
decide (:mod:`diagnostics.engines.flink`, :mod:`diagnostics.engines.spark`), and build the
same outcome columns as the ASA replay (docs/schemas.md), in input order."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
import polars as pl

from diagnostics.captures.names import Rename, rename_taken, renamed
from diagnostics.engine.columns import EventColumns
from diagnostics.engine.inputs import BatchReader
from diagnostics.engine.outcomes import STATUS_DTYPE
from diagnostics.engine.policy import OrderingPolicy
from diagnostics.engine.replay import arrival_times, partitions_in
from diagnostics.engines.flink import (
    FlinkWatermarks,
    FlinkWindows,
    flink_decide,
    flink_releases,
    flink_timestamps,
    flink_watermarks,
)
from diagnostics.engines.policy import EngineRules, FlinkRules, SparkRules
from diagnostics.engines.spark import (
    SparkBatches,
    SparkWindows,
    spark_batches,
    spark_decide,
    spark_releases,
)
from diagnostics.engines.windows import Decisions, Releases
from diagnostics.errors import InputError, Setting
from diagnostics.kinds import EventStatus
from diagnostics.timestamps import from_ns


@dataclass(frozen=True, slots=True)
class EngineReplayResult:
    """A finished replay under ``rules``: ``outcomes`` has one row per input event, in input
    order, with the outcome columns; ``sources`` names the inputs (Spark with an input column)."""

    outcomes: pl.DataFrame
    rules: EngineRules
    partitions: tuple[int, ...]
    columns: EventColumns
    renames: tuple[Rename, ...] = ()
    sources: tuple[str, ...] = ()


class EngineCapture:
    """A capture read once for replays under one engine's rules on its event-time column
    ``event_time``: the columns parsed, the arrival order, and what the settings share (Flink's
    combined watermark per idleness, interval and release, and windows; Spark's inputs,
    micro-batches per trigger, and windows) kept between replays. A what-if replays one capture under many settings; :func:`replay_rules` is one.
    """

    def __init__(
        self,
        events: pl.DataFrame,
        event_time: str,
        *,
        partitions: Sequence[int] | None = None,
        columns: EventColumns | None = None,
    ) -> None:
        columns = columns or EventColumns()
        self.event_time = event_time
        events, renames = rename_taken(events)
        if renames:
            part = None if columns.partition is None else renamed(columns.partition, renames)
            columns = replace(columns, arrival=renamed(columns.arrival, renames), partition=part)
            event_time = renamed(event_time, renames)
        self.events, self.columns, self.renames = events, columns, renames
        arrival = arrival_times(events, columns)
        parts = tuple(partitions) if partitions is not None else partitions_in(events, columns)
        reader = BatchReader(OrderingPolicy(timestamp_by=event_time), columns, parts)
        work = reader.read(events.with_columns(arrival.alias(columns.parsed_arrival)), 0)
        self.parts = parts
        self.arrival_ns = work["__arr"].to_numpy()
        self.order = np.argsort(self.arrival_ns, kind="stable")
        app = work["__app"]
        self.valid = app.is_not_null().to_numpy()
        self.event_ns = app.fill_null(0).to_numpy()
        self.pidx = work["__pidx"].to_numpy()
        #: in arrival order
        self.arrival_sorted = self.arrival_ns[self.order]
        self.valid_sorted = self.valid[self.order]
        self._ts_ms: np.ndarray | None = None
        self._marks: dict[tuple[object, ...], FlinkWatermarks] = {}
        self._windows: dict[int, FlinkWindows] = {}
        self._batches: dict[tuple[int, str | None], SparkBatches] = {}
        self._spark_windows: dict[int, SparkWindows] = {}
        self._sources: dict[str | None, tuple[np.ndarray, tuple[str, ...]]] = {}

    def decisions(self, rules: EngineRules) -> Decisions:
        """The engine's decisions under ``rules`` (on this capture's event-time column), in
        arrival order."""
        arrival, valid = self.arrival_sorted, self.valid_sorted
        if isinstance(rules, FlinkRules):
            marks, windows, ts_ms = self._flink(rules)
            split = self.pidx[self.order]
            return flink_decide(marks, windows, ts_ms, arrival, split, valid, rules)
        batches, ends, source = self._spark(rules)
        return spark_decide(batches, ends, source, valid, rules)

    def releases(self, rules: EngineRules) -> Releases:
        """What a what-if measures of the decisions under ``rules`` (in arrival order)."""
        if isinstance(rules, FlinkRules):
            marks, windows, _ = self._flink(rules)
            return flink_releases(marks, windows, self.arrival_sorted, self.valid_sorted, rules)[0]
        batches, ends, _ = self._spark(rules)
        return spark_releases(batches, ends, self.valid_sorted, rules)[0]

    def _check(self, rules: EngineRules) -> None:
        if rules.event_time != self.event_time:
            msg = f"rules on '{rules.event_time}', capture read on '{self.event_time}'"
            raise ValueError(msg)

    def _flink(self, rules: FlinkRules) -> tuple[FlinkWatermarks, FlinkWindows, np.ndarray]:
        self._check(rules)
        if self._ts_ms is None:
            self._ts_ms = flink_timestamps(self.event_ns[self.order], self.valid_sorted)
        key = (rules.idleness_ns, rules.watermark_interval_ns, rules.version)
        if key not in self._marks:
            split = self.pidx[self.order]
            self._marks[key] = flink_watermarks(
                self.arrival_sorted, split, len(self.parts), self._ts_ms, self.valid_sorted, rules
            )
        if rules.window_ns not in self._windows:
            self._windows[rules.window_ns] = FlinkWindows.of(self._ts_ms, rules.window_ns)
        return self._marks[key], self._windows[rules.window_ns], self._ts_ms

    def _spark(self, rules: SparkRules) -> tuple[SparkBatches, SparkWindows, np.ndarray]:
        self._check(rules)
        source, sources = self.sources(rules.input_column)
        source = source[self.order]
        key = (rules.trigger_ns, rules.input_column)
        if key not in self._batches:
            event_ns, valid = self.event_ns[self.order], self.valid_sorted
            self._batches[key] = spark_batches(
                self.arrival_sorted, source, len(sources), event_ns, valid, rules.trigger_ns
            )
        batches = self._batches[key]
        if rules.window_ns not in self._spark_windows:
            self._spark_windows[rules.window_ns] = SparkWindows.of(batches.ts_us, rules.window_ns)
        return batches, self._spark_windows[rules.window_ns], source

    def sources(self, column: str | None) -> tuple[np.ndarray, tuple[str, ...]]:
        """Each event's Spark input (input order) and the inputs' names."""
        if column not in self._sources:
            name = None if column is None else renamed(column, self.renames)
            self._sources[column] = _sources(self.events, name)
        return self._sources[column]

    def replay(self, rules: EngineRules) -> EngineReplayResult:
        """The replay under ``rules``: the outcome columns in input order."""
        decided = self.decisions(rules)
        order = self.order
        inverse = np.empty_like(order)
        inverse[order] = np.arange(len(order))
        feed = _outcome_columns(
            decided,
            inverse,
            order,
            self.parts,
            self.pidx,
            self.arrival_ns,
            self.event_ns,
            self.valid,
        )
        outcomes = pl.concat([self.events, feed], how="horizontal")
        sources = () if isinstance(rules, FlinkRules) else self.sources(rules.input_column)[1]
        shown = _renamed(rules, self.renames) if self.renames else rules
        return EngineReplayResult(outcomes, shown, self.parts, self.columns, self.renames, sources)


def replay_rules(
    events: pl.DataFrame,
    rules: EngineRules,
    *,
    partitions: Sequence[int] | None = None,
    columns: EventColumns | None = None,
) -> EngineReplayResult:
    """Replay ``events`` under ``rules``: events are taken in arrival order (ties: input
    order); an event without a valid event time is set aside (``invalid_timestamp``)."""
    capture = EngineCapture(events, rules.event_time, partitions=partitions, columns=columns)
    return capture.replay(rules)


def _renamed(rules: EngineRules, renames: tuple[Rename, ...]) -> EngineRules:
    if isinstance(rules, FlinkRules):
        return replace(rules, event_time=renamed(rules.event_time, renames))
    source = None if rules.input_column is None else renamed(rules.input_column, renames)
    return replace(rules, event_time=renamed(rules.event_time, renames), input_column=source)


def _sources(events: pl.DataFrame, column: str | None) -> tuple[np.ndarray, tuple[str, ...]]:
    """Each event's input index and the inputs' names (one input without ``column``)."""
    if column is None:
        return np.zeros(events.height, dtype=np.int64), ("input",)
    if column not in events.columns:
        msg = f"input column '{column}' is missing (columns: {', '.join(events.columns)})"
        raise InputError(msg, Setting.INPUT_COLUMN)
    names = events[column].cast(pl.String)
    if names.null_count():
        row = int(names.is_null().arg_true()[0]) + 1
        msg = f"input column '{column}', row {row}: is empty; every event names its input"
        raise InputError(msg, Setting.INPUT_COLUMN)
    unique = names.unique().sort()
    index = {name: i for i, name in enumerate(unique.to_list())}
    codes = names.replace_strict(index, return_dtype=pl.Int64).to_numpy()
    return codes, tuple(str(v) for v in unique.to_list())


def _outcome_columns(
    decided: Decisions,
    inverse: np.ndarray,
    order: np.ndarray,
    parts: tuple[int, ...],
    pidx: np.ndarray,
    arrival_ns: np.ndarray,
    event_ns: np.ndarray,
    valid: np.ndarray,
) -> pl.DataFrame:
    """The outcome columns in input order (``inverse`` maps input row to arrival position)."""
    n = len(inverse)

    def back(values: np.ndarray) -> np.ndarray:
        return values[inverse]

    dropped = back(decided.dropped) | ~valid
    released = back(decided.released)
    release = back(decided.release_ns)
    kept_time = pl.Series(event_ns, dtype=pl.Int64)
    behind = _behind(decided.timeline, event_ns[order], valid[order])
    return pl.DataFrame(
        {
            "event_id": pl.Series(np.arange(n), dtype=pl.Int64),
            "partition": pl.Series(np.asarray(parts, dtype=np.int64)[pidx], dtype=pl.Int64),
            "timeline": pl.Series(back(decided.timeline), dtype=pl.Int64),
            "application_time": from_ns(pl.Series(event_ns).set(pl.Series(~valid), None)),
            "arrival": from_ns(pl.Series(arrival_ns)),
            "system_timestamp": from_ns(kept_time.set(pl.Series(dropped), None)),
            "late": back(decided.late),
            "early": np.zeros(n, dtype=bool),
            "out_of_order": back(behind),
            "reordered": np.zeros(n, dtype=bool),
            "invalid_timestamp": ~valid,
            "invalid_key": np.zeros(n, dtype=bool),
            "dropped": dropped,
            "status": _status(dropped),
            "watermark": from_ns(
                pl.Series(back(decided.watermark_ns)).set(
                    pl.Series(~back(decided.has_watermark)), None
                )
            ),
            "release_time": from_ns(pl.Series(release).set(pl.Series(~released), None)),
            "output_rank": _ranks(released, release, event_ns, order),
        }
    )


def _behind(timeline: np.ndarray, event_ns: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """In arrival order: the event's time is before one that arrived earlier on its timeline
    (out of order; neither engine reorders or adjusts it)."""
    frame = pl.DataFrame({"t": timeline, "e": np.where(valid, event_ns, np.iinfo(np.int64).min)})
    previous = frame.select(pl.col("e").cum_max().shift(1).over("t").alias("p"))["p"]
    return (valid & (event_ns < previous.fill_null(np.iinfo(np.int64).min).to_numpy())).astype(bool)


_STATUS = pl.Series([s.value for s in EventStatus], dtype=STATUS_DTYPE)


def _status(dropped: np.ndarray) -> pl.Series:
    accepted, gone = (
        list(EventStatus).index(s) for s in (EventStatus.ACCEPTED, EventStatus.DROPPED)
    )
    codes = np.where(dropped, gone, accepted).astype(np.uint32)
    return _STATUS.gather(pl.Series(codes)).alias("status")


def _ranks(
    released: np.ndarray, release: np.ndarray, event_ns: np.ndarray, order: np.ndarray
) -> pl.Series:
    """``output_rank``: released events by release time, then event time, then arrival."""
    position = np.empty_like(order)
    position[order] = np.arange(len(order))
    ids = np.flatnonzero(released)
    ranked = ids[np.lexsort((position[ids], event_ns[ids], release[ids]))]
    rank = np.full(len(released), -1, dtype=np.int64)
    rank[ranked] = np.arange(len(ranked))
    series = pl.Series("output_rank", rank)
    return series.set(series < 0, None)
