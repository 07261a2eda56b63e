"""Prometheus metrics of the watcher (``--metrics-port``), with the standard client library.

Gauges, refreshed after every tick from the aggregate tables and the alert store:

* ``orderdoc_events{job,partition,kind}``: events in the logs so far, by job, partition, kind;
* ``orderdoc_partition_idle_minutes{job,source,partition}``: the longest idle time of each
  partition's latest idle episode;
* ``orderdoc_watermark_delay_max_seconds{job,partition}``: the worst watermark delay in the
  engine metrics (``partition`` empty for the job as a whole);
* ``orderdoc_records_quarantined``: log records that could not be parsed;
* ``orderdoc_alerts_firing{alertname,severity}``: alerts firing now;
* ``orderdoc_watch_lag_seconds``: now minus the modification time of the newest log file read
  (how far the watcher is behind what ASA wrote);
* ``orderdoc_watch_passes`` and ``orderdoc_watch_last_tick_timestamp_seconds``.

Nothing is computed on scrape: the values are set after a tick, so a scrape is cheap.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path
from typing import Any

import polars as pl

from diagnostics.aggregates import TableName, scan
from diagnostics.errors import UsageError
from diagnostics.rules.model import AlertState
from diagnostics.watch.alertstate import Episode

try:  # an optional dependency: only --metrics-port needs it
    from prometheus_client import CollectorRegistry, Gauge, start_http_server
except ImportError:  # pragma: no cover - checked when a port is asked for
    CollectorRegistry = None  # type: ignore[assignment,misc]


def _label(value: Any) -> str:
    return "" if value is None else str(value)


def _scan(agg: Path, table: TableName) -> pl.LazyFrame | None:
    return scan(agg, table)


class WatchMetrics:
    """The watcher's gauges in an own registry, served on ``host:port`` once :meth:`serve`d."""

    def __init__(self) -> None:
        if CollectorRegistry is None:
            msg = "--metrics-port needs prometheus-client: pip install 'diagnostics[watch]'"
            raise UsageError(msg)
        self.registry = CollectorRegistry()
        reg = self.registry
        self.events = Gauge(
            "orderdoc_events", "Events in the logs by job, partition and kind",
            ["job", "partition", "kind"], registry=reg,
        )  # fmt: skip
        self.idle = Gauge(
            "orderdoc_partition_idle_minutes",
            "Longest idle time of the latest idle episode of each partition",
            ["job", "source", "partition"], registry=reg,
        )  # fmt: skip
        self.delay = Gauge(
            "orderdoc_watermark_delay_max_seconds", "Worst watermark delay in the engine metrics",
            ["job", "partition"], registry=reg,
        )  # fmt: skip
        self.quarantined = Gauge(
            "orderdoc_records_quarantined", "Log records that could not be parsed", registry=reg
        )
        self.firing = Gauge(
            "orderdoc_alerts_firing", "Alerts firing now", ["alertname", "severity"], registry=reg
        )
        self.lag = Gauge(
            "orderdoc_watch_lag_seconds",
            "Now minus the modification time of the newest log file read",
            registry=reg,
        )
        self.passes = Gauge("orderdoc_watch_passes", "Passes completed", registry=reg)
        self.last_tick = Gauge(
            "orderdoc_watch_last_tick_timestamp_seconds", "When the last tick ended", registry=reg
        )
        self._server: Any = None

    def serve(self, port: int, host: str = "127.0.0.1") -> int:
        """Start the HTTP endpoint (``/metrics``); the port it is bound to."""
        try:
            self._server, _thread = start_http_server(port, addr=host, registry=self.registry)
        except OSError as exc:
            msg = f"--metrics-port {port}: cannot listen on {host}:{port} ({exc.strerror or exc})"
            raise UsageError(msg) from exc
        return int(self._server.server_port)

    def stop(self) -> None:
        """Stop the HTTP endpoint."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def update(
        self,
        agg: Path,
        history: Iterable[Episode],
        *,
        now: datetime,
        passes: int,
        log_files: Iterable[str],
    ) -> None:
        """Set every gauge from the tables under ``agg``, the alert history and the files."""
        self._tables(agg)
        self.firing.clear()
        counts: dict[tuple[str, str], int] = {}
        for episode in history:
            if episode.state is AlertState.FIRING:
                key = (episode.rule_id, episode.severity)
                counts[key] = counts.get(key, 0) + 1
        for (name, severity), count in counts.items():
            self.firing.labels(name, severity).set(count)
        newest = max((_mtime(p) for p in log_files), default=None)
        if newest is not None:
            self.lag.set(max(0.0, now.timestamp() - newest))
        self.passes.set(passes)
        self.last_tick.set(now.timestamp())

    def _tables(self, agg: Path) -> None:
        self.events.clear()
        rollup = _scan(agg, TableName.ERROR_ROLLUP)
        if rollup is not None:
            sums = (
                rollup.group_by("job", "partition_id", "kind")
                .agg(pl.col("event_count").sum())
                .sort("job", "partition_id", "kind")
                .collect()
            )
            for job, partition, kind, count in sums.iter_rows():
                self.events.labels(_label(job), _label(partition), _label(kind)).set(count or 0)
        self.idle.clear()
        idle = _scan(agg, TableName.PARTITION_IDLE)
        if idle is not None:
            latest = (
                idle.sort("start")
                .group_by("job", "source", "partition_id")
                .agg(pl.col("max_idle_minutes").last())
                .collect()
            )
            for job, source, partition, minutes in latest.iter_rows():
                self.idle.labels(_label(job), _label(source), _label(partition)).set(minutes or 0)
        self.delay.clear()
        metrics = _scan(agg, TableName.METRICS)
        if metrics is not None:
            worst = (
                metrics.group_by("job", "partition_id")
                .agg(pl.col("output_watermark_delay_seconds").max())
                .collect()
            )
            for job, partition, seconds in worst.iter_rows():
                if seconds is not None:
                    self.delay.labels(_label(job), _label(partition)).set(seconds)
        quarantine = _scan(agg, TableName.QUARANTINE)
        rows = 0 if quarantine is None else quarantine.select(pl.len()).collect().item()
        self.quarantined.set(rows)


def _mtime(path: str) -> float:
    try:
        return os.stat(path).st_mtime
    except OSError:
        return 0.0
