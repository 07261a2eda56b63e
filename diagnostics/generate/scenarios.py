"""The seven synthetic scenarios, vectorised with numpy (10M events in seconds).

Every scenario starts from the same skeleton: ``events`` true moments spread over
``duration`` (sorted, a Poisson-like process), a partition per event, a device per event (device
``d`` always lives in partition ``d % partitions``, as a partition key would put it), and a
constant per-partition network latency of 50-500 ms. A scenario then changes one thing (its
cause, listed in :data:`diagnostics.generate.config.CAUSES`). Arrival times are those the broker
stamps; the capture is sorted by arrival (ties: partition, event time), so arrival is
non-decreasing per partition and overall. All times are whole milliseconds.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from diagnostics.generate.config import GenerateConfig, Scenario

SECOND_MS = 1_000
MINUTE_MS = 60 * SECOND_MS
DAY_MS = 24 * 60 * MINUTE_MS

#: Batch interval of the late senders and the share of devices that batch.
BATCH_INTERVAL_MS = 2 * MINUTE_MS
BATCHING_EVERY = 5
#: How fast the skewed clock runs (beyond ASA's 5-minute early window).
CLOCK_SKEW_MS = 10 * MINUTE_MS
#: Largest clock offset between devices in cross_device_disorder (below the 5 s late tolerance).
DEVICE_SKEW_MAX_MS = 4 * SECOND_MS
#: historical_replay: age of the oldest replayed event and the span of data replayed.
HISTORY_AGE_MS = 30 * DAY_MS
HISTORY_SPAN_MS = 7 * DAY_MS
#: hot_partition: share of the events that go to partition 0.
HOT_SHARE = 0.8
#: idle_partition: the silent stretch of the last partition, as fractions of the duration.
IDLE_FROM, IDLE_TO = 0.2, 0.8


@dataclass(frozen=True)
class Capture:
    """Columns of a capture as numpy arrays, before sorting and formatting (times in ms)."""

    event_ms: np.ndarray
    arrival_ms: np.ndarray
    device: np.ndarray
    partition: np.ndarray
    value: np.ndarray


@dataclass(frozen=True)
class Skeleton:
    """The shared starting point: true moments (ms offsets), partitions, devices, latencies."""

    true_ms: np.ndarray
    partition: np.ndarray
    device: np.ndarray
    latency_ms: np.ndarray
    value: np.ndarray


def device_count(config: GenerateConfig) -> int:
    """Devices per capture: about one per 200 events, 2..64 per partition."""
    per_partition = min(64, max(2, config.events // (200 * config.partitions)))
    return per_partition * config.partitions


def skeleton(
    config: GenerateConfig, rng: np.random.Generator, weights: np.ndarray | None = None
) -> Skeleton:
    """True moments, partitions (by ``weights``, default uniform), devices and latencies."""
    n, parts = config.events, config.partitions
    gaps = rng.exponential(1.0, n)
    cumulative = np.cumsum(gaps)
    true_ms = np.floor((cumulative - cumulative[0]) / cumulative[-1] * (config.duration_ms - 1))
    true_ms = true_ms.astype(np.int64)
    if weights is None:
        partition = rng.integers(0, parts, n, dtype=np.int64)
    else:
        partition = rng.choice(parts, n, p=weights).astype(np.int64)
    per_partition = device_count(config) // parts
    device = partition + parts * rng.integers(0, per_partition, n, dtype=np.int64)
    latency = rng.integers(50, 500, parts, dtype=np.int64)[partition]
    value = np.round(rng.normal(20.0, 2.0, n), 2)
    return Skeleton(true_ms, partition, device, latency, value)


def _plain(
    sk: Skeleton, event_ms: np.ndarray | None = None, arrival_ms: np.ndarray | None = None
) -> Capture:
    true = sk.true_ms
    return Capture(
        event_ms=true if event_ms is None else event_ms,
        arrival_ms=true + sk.latency_ms if arrival_ms is None else arrival_ms,
        device=sk.device,
        partition=sk.partition,
        value=sk.value,
    )


def healthy(config: GenerateConfig, rng: np.random.Generator) -> Capture:
    """Event-time order equals arrival order in every partition; small constant latency."""
    return _plain(skeleton(config, rng))


def idle_partition(config: GenerateConfig, rng: np.random.Generator) -> Capture:
    """The last partition's moments are squeezed out of [20%, 80%) of the duration."""
    sk = skeleton(config, rng)
    idle = sk.partition == config.partitions - 1
    gap_from = int(config.duration_ms * IDLE_FROM)
    gap = int(config.duration_ms * IDLE_TO) - gap_from
    squeezed = sk.true_ms * (config.duration_ms - gap) // config.duration_ms
    moved = np.where(squeezed >= gap_from, squeezed + gap, squeezed)
    true = np.where(idle, moved, sk.true_ms)
    return _plain(sk, event_ms=true, arrival_ms=true + sk.latency_ms)


def late_senders(config: GenerateConfig, rng: np.random.Generator) -> Capture:
    """Every fifth device sends at the next multiple of the batch interval."""
    sk = skeleton(config, rng)
    batching = sk.device % BATCHING_EVERY == 0
    flush = -(-sk.true_ms // BATCH_INTERVAL_MS) * BATCH_INTERVAL_MS
    arrival = np.where(batching, flush, sk.true_ms) + sk.latency_ms
    return _plain(sk, arrival_ms=arrival)


def clock_skew(config: GenerateConfig, rng: np.random.Generator) -> Capture:
    """Device 0 stamps its events 10 minutes in the future."""
    sk = skeleton(config, rng)
    event = np.where(sk.device == 0, sk.true_ms + CLOCK_SKEW_MS, sk.true_ms)
    return _plain(sk, event_ms=event)


def cross_device_disorder(config: GenerateConfig, rng: np.random.Generator) -> Capture:
    """Each device's clock lags by its own constant 0-4 s: in order per device, not across."""
    sk = skeleton(config, rng)
    offsets = rng.integers(0, DEVICE_SKEW_MAX_MS + 1, device_count(config), dtype=np.int64)
    return _plain(sk, event_ms=sk.true_ms - offsets[sk.device])


def historical_replay(config: GenerateConfig, rng: np.random.Generator) -> Capture:
    """A week of data, 30 days old, replayed (in order) within the capture's duration."""
    sk = skeleton(config, rng)
    scale = HISTORY_SPAN_MS / max(1, config.duration_ms - 1)
    event = -HISTORY_AGE_MS + np.floor(sk.true_ms * scale).astype(np.int64)
    return _plain(sk, event_ms=event)


def hot_partition(config: GenerateConfig, rng: np.random.Generator) -> Capture:
    """Partition 0 gets 80% of the events; otherwise healthy."""
    parts = config.partitions
    weights = np.full(parts, (1.0 - HOT_SHARE) / (parts - 1))
    weights[0] = HOT_SHARE
    return _plain(skeleton(config, rng, weights=weights))


BUILDERS: dict[Scenario, Callable[[GenerateConfig, np.random.Generator], Capture]] = {
    Scenario.HEALTHY: healthy,
    Scenario.IDLE_PARTITION: idle_partition,
    Scenario.LATE_SENDERS: late_senders,
    Scenario.CLOCK_SKEW: clock_skew,
    Scenario.CROSS_DEVICE_DISORDER: cross_device_disorder,
    Scenario.HISTORICAL_REPLAY: historical_replay,
    Scenario.HOT_PARTITION: hot_partition,
}


def arrival_order(arrival_ms: np.ndarray, partition: np.ndarray, partitions: int) -> np.ndarray:
    """Indices sorting by arrival, then partition, then generation order (a stable sort).

    Generation order is true-time order, so ties keep each device's events in order. One
    stable argsort of a combined key (nearly sorted already) is ~8x faster than a lexsort.
    """
    low = int(arrival_ms.min())
    span = int(arrival_ms.max()) - low + 1
    if span * partitions >= 2**62:
        return np.lexsort((np.arange(arrival_ms.size), partition, arrival_ms))
    key = (arrival_ms - low) * partitions + partition
    return np.argsort(key, kind="stable")


def build(scenario: Scenario, config: GenerateConfig) -> Capture:
    """The capture of ``scenario``, sorted by arrival (ties: partition, generation order).

    Times are absolute epoch milliseconds (``config.start_ms`` added). Deterministic in
    (scenario, config): the random generator is seeded from ``config.seed`` and the scenario.
    """
    config.check(scenario)
    order_index = list(Scenario).index(scenario)
    rng = np.random.default_rng([config.seed, order_index])
    raw = BUILDERS[scenario](config, rng)
    order = arrival_order(raw.arrival_ms, raw.partition, config.partitions)
    return Capture(
        event_ms=raw.event_ms[order] + config.start_ms,
        arrival_ms=raw.arrival_ms[order] + config.start_ms,
        device=raw.device[order],
        partition=raw.partition[order],
        value=raw.value[order],
    )
