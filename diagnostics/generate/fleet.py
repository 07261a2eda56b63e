"""A production-shaped fleet: the events of an IoT hub with several causes at once.

The bundled scenarios (:mod:`diagnostics.generate.scenarios`) each inject one cause into a
tidy table. A real Event Hub is messier, and the fleet is built to look like one:

* ``devices`` devices (``dev-000`` ...) behind gateways (``gw-00`` ..., 20 devices each),
  each device in partition ``device % partitions`` (a partition key would do the same), its
  readings a Poisson process over ``duration``; a JSON body of about 150 bytes per reading
  (``deviceId``, ``gatewayId``, ``eventTime``, ``temperature``, ``humidity``, ``battery``,
  ``firmware``, ``msgSeq``); a constant network latency per partition (50-500 ms) and a little
  jitter;
* a **batching gateway**: the devices of one gateway (``gateway_devices`` of them) are uploaded
  in batches every ``gateway_period``, so their lateness is a sawtooth of that period;
* **fast clocks**: ``fast_devices`` devices stamp their readings ``fast_by`` ahead (beyond
  ASA's 5-minute early window: dropped as early);
* **slow clocks**: ``slow_devices`` devices stamp them ``slow_by`` behind (late by a constant);
* a **silent partition**: ``silent_partition`` sends nothing for ``silent_for`` from
  ``silent_from`` (Capture still writes its empty files);
* **bad times**: one device writes its times as US dates (``6/3/2024 9:20:01 AM``) in the
  second half; ``missing_times`` bodies have no ``eventTime`` and ``null_times`` have it null;
* ``non_json`` bodies that are not JSON (cut short), and ``far_off`` readings stamped 2099.

Which devices are in which group is fixed by :class:`FleetConfig` (see :func:`groups`), so
tests name the injected devices. Everything derives from the seed: no wall clock is read.
The events come out as numpy columns (:class:`FleetEvents`), sorted by partition and arrival;
:mod:`diagnostics.generate.fleet_files` writes them as an Event Hubs Capture folder with the
job's ARM template (a portal export) and two jobs' resource logs.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
import polars as pl

from diagnostics.errors import UsageError
from diagnostics.generate.config import check_size

#: The fleet's name among ``orderdoc generate``'s scenarios, and what it holds.
FLEET = "fleet"
FLEET_CAUSES = (
    "a production-shaped Event Hubs Capture folder with the job's ARM template (and with "
    "--logs two jobs' resource logs): 200 devices behind gateways, Capture's maps and JSON "
    "bodies, and several causes at once: a gateway batching 20 devices every 180 s, 5 clocks "
    "420 s fast (dropped as early), 5 clocks 45 s slow, partition 5 silent for 30 minutes, "
    "US-format, missing and null times, 84 bodies that are not JSON, 6 readings stamped 2099"
)
SECOND_MS = 1_000
MINUTE_MS = 60 * SECOND_MS
#: 2024-06-03T08:00:00Z in milliseconds: the fleet's first moment by default.
FLEET_START_MS = 1_717_401_600_000
#: 2099-01-01T00:00:00Z in milliseconds: where the far-off readings are stamped.
FAR_OFF_MS = 4_070_908_800_000
#: Devices behind one gateway (``gw-NN`` is the gateway of devices 20*NN .. 20*NN+19).
DEVICES_PER_GATEWAY = 20
#: Body fields in the order they are written.
BODY_FIELDS = (
    "deviceId",
    "gatewayId",
    "eventTime",
    "temperature",
    "humidity",
    "battery",
    "firmware",
    "msgSeq",
)


@dataclass(frozen=True)
class FleetConfig:
    """The fleet's settings. Invariants (``__post_init__``): positive counts and spans; the
    injected groups are disjoint device ranges inside the fleet; the silent partition exists.

    Device groups, as first device and count: the batching gateway's devices are the first
    ``gateway_devices`` of gateway ``batching_gateway`` (devices ``20 * batching_gateway`` ...); the fast clocks start
    at ``fast_first``, the slow clocks at ``slow_first``; ``us_time_device`` writes US dates.
    A count of 0 (or ``None`` for the partition and device) switches that cause off.
    """

    events: int = 2_000_000
    partitions: int = 8
    devices: int = 200
    duration_ms: int = 2 * 60 * MINUTE_MS
    seed: int = 0
    start_ms: int = FLEET_START_MS
    batching_gateway: int | None = 2
    #: how many of the batching gateway's devices (its first ones) upload in batches
    gateway_devices: int = DEVICES_PER_GATEWAY
    gateway_period_ms: int = 180 * SECOND_MS
    fast_first: int = 120
    fast_devices: int = 5
    fast_by_ms: int = 420 * SECOND_MS
    slow_first: int = 160
    slow_devices: int = 5
    slow_by_ms: int = 45 * SECOND_MS
    silent_partition: int | None = 5
    silent_from_ms: int = 40 * MINUTE_MS
    silent_for_ms: int = 30 * MINUTE_MS
    us_time_device: int | None = 78
    missing_times: int = 40
    null_times: int = 20
    non_json: int = 84
    far_off: int = 6

    def __post_init__(self) -> None:
        check_size(self.events, self.partitions)
        for name in ("devices", "duration_ms", "gateway_period_ms", "gateway_devices"):
            if getattr(self, name) <= 0:
                msg = f"fleet setting {name} must be positive, got {getattr(self, name)}"
                raise UsageError(msg)
        for name in ("fast_devices", "slow_devices", "missing_times", "null_times"):
            if getattr(self, name) < 0:
                msg = f"fleet setting {name} must be 0 or more, got {getattr(self, name)}"
                raise UsageError(msg)
        if self.gateway_devices > DEVICES_PER_GATEWAY:
            msg = (
                f"fleet setting gateway_devices {self.gateway_devices}: a gateway has "
                f"{DEVICES_PER_GATEWAY} devices"
            )
            raise UsageError(msg)
        if self.non_json < 0 or self.far_off < 0:
            msg = "fleet settings non_json and far_off must be 0 or more"
            raise UsageError(msg)
        taken: set[int] = set()
        for name, members in groups(self).items():
            if any(d < 0 or d >= self.devices for d in members) or taken & set(members):
                msg = (
                    f"fleet group {name} (devices {min(members)}-{max(members)}) must lie "
                    f"inside the {self.devices} devices and apart from the other groups"
                )
                raise UsageError(msg)
            taken |= set(members)
        if self.silent_partition is not None and not 0 <= self.silent_partition < self.partitions:
            msg = f"fleet silent_partition {self.silent_partition} is not one of the partitions"
            raise UsageError(msg)

    def scaled(self, events: int, **changes: object) -> FleetConfig:
        """The same fleet with ``events`` readings (and any other ``changes``)."""
        return dataclasses.replace(self, events=events, **changes)  # type: ignore[arg-type]


def device_name(index: int) -> str:
    """``dev-042``."""
    return f"dev-{index:03d}"


def gateway_name(index: int) -> str:
    """``gw-02``."""
    return f"gw-{index:02d}"


def groups(config: FleetConfig) -> dict[str, tuple[int, ...]]:
    """The devices of each injected cause (by index), for tests and the generator alike."""
    found: dict[str, tuple[int, ...]] = {}
    if config.batching_gateway is not None:
        first = config.batching_gateway * DEVICES_PER_GATEWAY
        found["batching_gateway"] = tuple(range(first, first + config.gateway_devices))
    if config.fast_devices:
        found["fast_clocks"] = tuple(
            range(config.fast_first, config.fast_first + config.fast_devices)
        )
    if config.slow_devices:
        found["slow_clocks"] = tuple(
            range(config.slow_first, config.slow_first + config.slow_devices)
        )
    if config.us_time_device is not None:
        found["us_times"] = (config.us_time_device,)
    return found


@dataclass(frozen=True)
class FleetEvents:
    """The fleet's readings, sorted by partition, arrival and true time (numpy columns).

    ``event_text`` is the body's ``eventTime`` as written (``None`` where the body has it
    null or has no such key); ``time_missing`` marks bodies without the key; ``non_json`` bodies that are not
    JSON. ``true_ms`` is when the reading was taken; ``event_ms`` what its clock said.
    """

    partition: np.ndarray
    arrival_ms: np.ndarray
    true_ms: np.ndarray
    event_ms: np.ndarray
    device: np.ndarray
    msg_seq: np.ndarray
    temperature: np.ndarray
    humidity: np.ndarray
    battery: np.ndarray
    event_text: list[str | None]
    time_missing: np.ndarray
    non_json: np.ndarray

    @property
    def size(self) -> int:
        """Readings in the fleet."""
        return int(self.partition.size)


def _iso_ms(ms: np.ndarray) -> pl.Series:
    return (
        pl.Series(ms, dtype=pl.Int64)
        .cast(pl.Datetime("ms", "UTC"))
        .dt.to_string("%Y-%m-%dT%H:%M:%S%.3fZ")
    )


def _us_text(ms: np.ndarray) -> pl.Series:
    """``6/3/2024 9:20:01 AM`` (no zero padding of month, day and hour)."""
    t = pl.Series(ms, dtype=pl.Int64).cast(pl.Datetime("ms", "UTC"))
    frame = pl.DataFrame({"t": t})
    hour = (pl.col("t").dt.hour() % 12).replace(0, 12)
    return frame.select(
        pl.format(
            "{}/{}/{} {}:{} {}",
            pl.col("t").dt.month(),
            pl.col("t").dt.day(),
            pl.col("t").dt.year(),
            hour,
            pl.col("t").dt.strftime("%M:%S"),
            pl.when(pl.col("t").dt.hour() < 12).then(pl.lit("AM")).otherwise(pl.lit("PM")),
        )
    ).to_series()


def fleet_events(config: FleetConfig) -> FleetEvents:
    """The fleet's readings under ``config`` (see the module docstring)."""
    rng = np.random.default_rng(config.seed)
    n = config.events
    device = rng.integers(0, config.devices, n, dtype=np.int64)
    true_ms = config.start_ms + np.floor(rng.uniform(0, config.duration_ms, n)).astype(np.int64)
    partition = device % config.partitions
    latency = rng.integers(50, 500, config.partitions, dtype=np.int64)
    arrival_ms = true_ms + latency[partition] + rng.integers(0, 200, n, dtype=np.int64)
    event_ms = true_ms.copy()
    found = groups(config)
    if "batching_gateway" in found:
        batched = np.isin(device, found["batching_gateway"])
        period = config.gateway_period_ms
        phase = int(rng.integers(0, period))
        flush = ((true_ms[batched] - config.start_ms - phase) // period + 1) * period
        arrival_ms[batched] = (
            config.start_ms + phase + flush + latency[partition[batched]]
            + rng.integers(0, 2_000, int(batched.sum()), dtype=np.int64)
        )  # fmt: skip
    if "fast_clocks" in found:
        event_ms[np.isin(device, found["fast_clocks"])] += config.fast_by_ms
    if "slow_clocks" in found:
        event_ms[np.isin(device, found["slow_clocks"])] -= config.slow_by_ms
    keep = np.ones(n, dtype=bool)
    if config.silent_partition is not None:
        begin = config.start_ms + config.silent_from_ms
        keep &= ~(
            (partition == config.silent_partition)
            & (arrival_ms >= begin)
            & (arrival_ms < begin + config.silent_for_ms)
        )
    order = np.lexsort((true_ms, arrival_ms, partition))
    order = order[keep[order]]
    device, partition = device[order], partition[order]
    true_ms, event_ms, arrival_ms = true_ms[order], event_ms[order], arrival_ms[order]
    size = order.size
    # per-device message counter in the order each device took its readings
    by_device = np.lexsort((true_ms, device))
    msg_seq = np.empty(size, dtype=np.int64)
    starts = np.r_[0, np.flatnonzero(np.diff(device[by_device])) + 1]
    counts = np.diff(np.r_[starts, size])
    msg_seq[by_device] = np.arange(size) - np.repeat(starts, counts)
    # far-off readings: a few stamped 2099 (the rest of the body as usual)
    picks = rng.permutation(size)
    at = 0

    def take(count: int) -> np.ndarray:
        nonlocal at
        chosen = np.sort(picks[at : at + count])
        at += count
        return chosen

    far = take(config.far_off)
    event_ms[far] = FAR_OFF_MS + true_ms[far] % (24 * 60 * MINUTE_MS)
    text = _iso_ms(event_ms)
    if "us_times" in found:
        us = (device == found["us_times"][0]) & (
            true_ms >= config.start_ms + config.duration_ms // 2
        )
        us[far] = False
        text = text.scatter(np.flatnonzero(us), _us_text(event_ms[us]))
    null = take(config.null_times)
    texts: list[str | None] = text.to_list()
    for i in null:
        texts[int(i)] = None
    missing = np.zeros(size, dtype=bool)
    missing[take(config.missing_times)] = True
    for i in np.flatnonzero(missing):
        texts[int(i)] = None  # written as null, then its key removed (see bodies)
    broken = np.zeros(size, dtype=bool)
    broken[take(config.non_json)] = True
    return FleetEvents(
        partition=partition,
        arrival_ms=arrival_ms,
        true_ms=true_ms,
        event_ms=event_ms,
        device=device,
        msg_seq=msg_seq,
        temperature=np.round(rng.normal(21.5, 3.0, size), 2),
        humidity=np.round(rng.uniform(20.0, 80.0, size), 1),
        battery=rng.integers(5, 101, size, dtype=np.int64),
        event_text=texts,
        time_missing=missing,
        non_json=broken,
    )


#: Firmware versions, by device index modulo their count.
FIRMWARE = ("2.4.1", "2.4.3", "2.5.0", "3.0.0-rc1")


def bodies(events: FleetEvents) -> list[bytes]:
    """The JSON body of each reading (about 150 bytes; not JSON where ``non_json``)."""
    device = pl.Series("d", events.device, dtype=pl.Int64)
    digits = pl.col("d").cast(pl.String)
    frame = pl.DataFrame(
        {
            "d": device,
            "eventTime": pl.Series(events.event_text, dtype=pl.String),
            "temperature": events.temperature,
            "humidity": events.humidity,
            "battery": events.battery,
            "firmware": pl.Series(FIRMWARE).gather(device % len(FIRMWARE)),
            "msgSeq": events.msg_seq,
        }
    ).with_columns(
        pl.format("dev-{}", digits.str.zfill(3)).alias("deviceId"),
        pl.format("gw-{}", (pl.col("d") // DEVICES_PER_GATEWAY).cast(pl.String).str.zfill(2)).alias(
            "gatewayId"
        ),
    )
    missing = pl.Series(events.time_missing)
    json = frame.select(pl.struct(list(BODY_FIELDS)).struct.json_encode().alias("j"))["j"]
    json = (
        pl.DataFrame({"j": json, "m": missing, "b": pl.Series(events.non_json)})
        .select(
            pl.when(pl.col("m"))
            .then(pl.col("j").str.replace(r',"eventTime":null', "", literal=True))
            .when(pl.col("b"))
            .then(pl.col("j").str.slice(0, 40))
            .otherwise(pl.col("j"))
        )
        .to_series()
    )
    return [s.encode() for s in json.to_list()]
