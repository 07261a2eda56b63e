"""Spark Structured Streaming's rules (docs/engines.md, "Spark Structured Streaming"):
micro-batches on processing-time trigger ticks, one global watermark from the maximum event
time of the batches already run, and the stateful aggregation's late-row filter on the
window's end.
Vectorised over micro-batches; the batches and each input's largest event times are computed
once per trigger and inputs (:class:`SparkBatches`: the delay only lowers them).

Time is injected: processing time is the capture's arrival times; a trigger of ``I`` starts
micro-batches on whole multiples of ``I`` since the epoch (as Spark's
``ProcessingTimeExecutor`` does), each taking the events that arrived since the previous one.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from diagnostics.durations import MS, US
from diagnostics.engines.policy import SparkRules, WatermarkPolicy
from diagnostics.engines.windows import (
    Decisions,
    Releases,
    floor_units,
    next_tick,
    tumbling_end,
)

_UNSET = np.iinfo(np.int64).min


@dataclass(frozen=True, slots=True)
class SparkBatches:
    """A capture's micro-batches for one trigger and its inputs, with what every watermark
    delay shares: each input's largest event time of the batches so far (the delay only
    lowers it, :meth:`input_watermarks`). A what-if reuses one for every delay and window."""

    batch_time: np.ndarray  # the data batches' start times (ns, ascending)
    batch: np.ndarray  # per event (arrival order): its batch's index
    running: np.ndarray  # per input and batch: the largest event time so far (ms)
    seen: np.ndarray  # per input and batch: the input had rows by then
    ts_us: np.ndarray  # per event: Spark's microsecond event time (0 where invalid)

    def input_watermarks(self, delay_ns: int) -> np.ndarray:
        """Each input's watermark after each data batch (ms): the largest event time seen −
        delay, rising only; 0 for an input without data yet."""
        return np.where(self.seen, self.running - delay_ns // MS, 0)


@dataclass(frozen=True, slots=True)
class SparkWindows:
    """Each event's tumbling window end (µs) for one window size, as the distinct ends and
    each event's index into them."""

    ends: np.ndarray
    index: np.ndarray

    @classmethod
    def of(cls, ts_us: np.ndarray, window_ns: int) -> SparkWindows:
        ends, index = np.unique(tumbling_end(ts_us, window_ns // US), return_inverse=True)
        return cls(ends, index.reshape(-1))


def spark_batches(
    arrival_ns: np.ndarray,
    source: np.ndarray,
    sources: int,
    event_ns: np.ndarray,
    valid: np.ndarray,
    trigger_ns: int,
) -> SparkBatches:
    """The micro-batches of events in arrival order (``source``: each event's input,
    0..sources-1) under a trigger of ``trigger_ns`` (0: back to back)."""
    ticks = next_tick(arrival_ns, trigger_ns)
    # arrival order: the ticks never decrease, each new value starts a batch
    starts = np.ones(len(ticks), dtype=bool)
    starts[1:] = ticks[1:] != ticks[:-1]
    batch_time = ticks[starts]
    batch = np.cumsum(starts) - 1
    count = len(batch_time)
    ts_ms = floor_units(np.where(valid, event_ns, 0), MS)
    running = np.empty((sources, count), dtype=np.int64)
    for s in range(sources):
        mine = valid & (source == s)
        best = np.full(count, _UNSET, dtype=np.int64)
        np.maximum.at(best, batch[mine], ts_ms[mine])
        running[s] = np.maximum.accumulate(best)
    ts_us = floor_units(np.where(valid, event_ns, 0), US)
    return SparkBatches(batch_time, batch, running, running != _UNSET, ts_us)


def spark_releases(
    batches: SparkBatches,
    windows: SparkWindows,
    valid: np.ndarray,
    rules: SparkRules,
) -> tuple[Releases, np.ndarray]:
    """Which events Spark drops and when each kept one's window is emitted, for the events
    ``batches`` and ``windows`` (of ``rules``' trigger, inputs and window) were computed
    from, under ``rules``' watermark delay and policy; and each event's late-row watermark
    (ms)."""
    batch, batch_time = batches.batch, batches.batch_time
    count = len(batch_time)
    interval = rules.trigger_ns
    after = _global_watermarks(batches, rules)
    # The batch watermark of data batch j is the tracker's value after the batch before it.
    before = np.concatenate(([0], after[:-1]))
    gap = np.ones(count, dtype=bool)
    if interval > 0:
        gap[:-1] = batch_time[1:] > batch_time[:-1] + interval
    # A watermark that moved makes Spark run one more batch without data on the next free
    # trigger (spark.sql.streaming.noDataMicroBatches.enabled; StateStoreSaveExec's
    # shouldRunAnotherBatch), which becomes the batch before the next data batch.
    no_data = (after > before) & gap
    # Late rows are filtered with the watermark of the previous batch (Spark 3.4+,
    # WatermarkPropagator.getInputWatermarkForLateEvents(batchId - 1); 0 before batch 0).
    late_mark = np.zeros(count, dtype=np.int64)
    late_mark[1:] = np.where(no_data[:-1], after[:-1], before[:-1])
    mark = late_mark[batch]
    end_us = windows.ends[windows.index]
    # WatermarkSupport.watermarkExpression: window.end <= watermark (µs) drops the row.
    dropped = valid & (end_us <= mark * 1_000)
    released, release = _releases(batch, batch_time, before, after, no_data, windows, rules)
    released &= valid & ~dropped
    return Releases(dropped, released, np.where(released, release, 0)), mark


def spark_decide(
    batches: SparkBatches,
    windows: SparkWindows,
    source: np.ndarray,
    valid: np.ndarray,
    rules: SparkRules,
) -> Decisions:
    """Spark's decisions for the events ``batches`` and ``windows`` (of ``rules``' trigger,
    inputs and window) were computed from, under ``rules``' watermark delay and policy."""
    releases, mark = spark_releases(batches, windows, valid, rules)
    return Decisions(
        watermark_ns=mark * MS,
        has_watermark=np.ones(len(mark), dtype=bool),
        late=valid & (batches.ts_us <= mark * 1_000),
        dropped=releases.dropped,
        release_ns=releases.release_ns,
        released=releases.released,
        timeline=source.astype(np.int64),
    )


def spark_decisions(
    arrival_ns: np.ndarray,
    source: np.ndarray,
    sources: int,
    event_ns: np.ndarray,
    valid: np.ndarray,
    rules: SparkRules,
) -> Decisions:
    """Spark's decisions for events in arrival order: ``source`` (0..sources-1) is each
    event's input (its own ``withWatermark``), ``event_ns`` its event time (meaningful
    where ``valid``)."""
    batches = spark_batches(arrival_ns, source, sources, event_ns, valid, rules.trigger_ns)
    windows = SparkWindows.of(batches.ts_us, rules.window_ns)
    return spark_decide(batches, windows, source, valid, rules)


def _global_watermarks(batches: SparkBatches, rules: SparkRules) -> np.ndarray:
    """The global watermark (ms) after each data batch (``WatermarkTracker.updateWatermark``):
    each input's watermark is the max event time seen − delay, rising only; an input without
    data yet counts as 0; the policy picks min or max; the global value starts at 0 and only
    rises."""
    marks = batches.input_watermarks(rules.watermark_delay_ns)
    chosen = marks.min(axis=0) if rules.watermark_policy is WatermarkPolicy.MIN else marks.max(0)
    return np.maximum.accumulate(np.maximum(chosen, 0))


def _releases(
    batch: np.ndarray,
    batch_time: np.ndarray,
    before: np.ndarray,
    after: np.ndarray,
    no_data: np.ndarray,
    windows: SparkWindows,
    rules: SparkRules,
) -> tuple[np.ndarray, np.ndarray]:
    """When each event's window is emitted (append mode): the first micro-batch, from the
    event's own on, whose watermark has reached the window's end (state eviction)."""
    sizes = 1 + no_data.astype(np.int64)
    first = np.cumsum(sizes) - sizes
    total = int(sizes.sum())
    times = np.empty(total, dtype=np.int64)
    marks = np.empty(total, dtype=np.int64)
    times[first] = batch_time
    marks[first] = before
    times[first[no_data] + 1] = batch_time[no_data] + rules.trigger_ns
    marks[first[no_data] + 1] = after[no_data]
    reached = np.searchsorted(marks * 1_000, windows.ends, side="left")[windows.index]
    k = np.maximum(reached, first[batch])
    released = k < total
    return released, times[np.minimum(k, total - 1)]
