"""Spark Structured Streaming's rules (docs/engines.md, "Spark Structured Streaming"):
micro-batches on processing-time trigger ticks, one global watermark from the maximum event
time of the batches already run, and the stateful aggregation's late-row filter on the
window's end.
Vectorised over micro-batches.

Time is injected: processing time is the capture's arrival times; a trigger of ``I`` starts
micro-batches on whole multiples of ``I`` since the epoch (as Spark's
``ProcessingTimeExecutor`` does), each taking the events that arrived since the previous one.
"""

from __future__ import annotations

import numpy as np

from diagnostics.durations import MS, US
from diagnostics.engines.policy import SparkRules, WatermarkPolicy
from diagnostics.engines.windows import Decisions, floor_units, next_tick, tumbling_end

_UNSET = np.iinfo(np.int64).min


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
    interval = rules.trigger_ns
    batch_time, batch = np.unique(next_tick(arrival_ns, interval), return_inverse=True)
    count = len(batch_time)
    ts_ms = floor_units(np.where(valid, event_ns, 0), MS)
    ts_us = floor_units(np.where(valid, event_ns, 0), US)
    after = _global_watermarks(batch, count, source, sources, ts_ms, valid, rules)
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
    mark_us = late_mark[batch] * 1_000
    end_us = tumbling_end(ts_us, rules.window_ns // US)
    # WatermarkSupport.watermarkExpression: window.end <= watermark (µs) drops the row.
    dropped = valid & (end_us <= mark_us)
    released, release = _releases(batch, batch_time, before, after, no_data, end_us, rules)
    released &= valid & ~dropped
    return Decisions(
        watermark_ns=late_mark[batch] * MS,
        has_watermark=np.ones(len(batch), dtype=bool),
        late=valid & (ts_us <= mark_us),
        dropped=dropped,
        release_ns=np.where(released, release, 0),
        released=released,
        timeline=source.astype(np.int64),
    )


def _global_watermarks(
    batch: np.ndarray,
    count: int,
    source: np.ndarray,
    sources: int,
    ts_ms: np.ndarray,
    valid: np.ndarray,
    rules: SparkRules,
) -> np.ndarray:
    """The global watermark (ms) after each data batch (``WatermarkTracker.updateWatermark``):
    each input's watermark is the max event time seen − delay, rising only; an input without
    data yet counts as 0; the policy picks min or max; the global value starts at 0 and only
    rises."""
    delay = rules.watermark_delay_ns // MS
    marks = np.empty((sources, count), dtype=np.int64)
    for s in range(sources):
        mine = valid & (source == s)
        best = np.full(count, _UNSET, dtype=np.int64)
        np.maximum.at(best, batch[mine], ts_ms[mine])
        seen = np.logical_or.accumulate(best != _UNSET)
        running = np.maximum.accumulate(np.where(best != _UNSET, best - delay, _UNSET))
        marks[s] = np.where(seen, running, 0)
    chosen = marks.min(axis=0) if rules.watermark_policy is WatermarkPolicy.MIN else marks.max(0)
    return np.maximum.accumulate(np.maximum(chosen, 0))


def _releases(
    batch: np.ndarray,
    batch_time: np.ndarray,
    before: np.ndarray,
    after: np.ndarray,
    no_data: np.ndarray,
    end_us: np.ndarray,
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
    k = np.maximum(np.searchsorted(marks * 1_000, end_us, side="left"), first[batch])
    released = k < total
    return released, times[np.minimum(k, total - 1)]
