"""Prometheus metrics of the watcher (``--metrics-port``), with the standard client library.

Gauges, refreshed after every tick from the aggregate tables, the alert store and the
manifest:

* ``orderdoc_events{job,partition,kind}``: events in the logs so far, by job, partition, kind;
* ``orderdoc_partition_idle{job,source,partition}``: 1 while the partition is idle now, 0 once
  it progresses again. Idle now: its latest idle episode's last notice is at most (its idle
  minutes + 1) minutes before the time the rules were evaluated at, so a notice arriving
  then would still continue the episode (the rule of ``partition_idle``'s episodes);
* ``orderdoc_partition_idle_minutes{job,source,partition}``: the longest idle time of each
  partition's latest idle episode (over or not);
* ``orderdoc_watermark_delay_max_seconds{job,partition}``: the worst watermark delay in the
  engine metrics (``partition`` empty for the job as a whole);
* ``orderdoc_records_quarantined{job,source_file}``: log records that could not be parsed, per
  file; ``job`` is the file's job when its parsed records all name one job, else empty;
* ``orderdoc_alerts_firing{alertname,severity,job,partition}``: alerts firing now, by rule and
  by the ``job`` and ``partition_id`` labels of the alert (empty when its rule does not group
  by them). Every rule of the pack has a series that reads 0 while nothing fires, and so does
  every (rule, job, partition) that fired once: nothing disappears when an alert resolves;
* ``orderdoc_watch_lag_seconds{folder}``: per log folder, the tick's time minus the
  modification time the newest file read had when it was read (how far the watcher is behind
  what ASA wrote there);
* ``orderdoc_watch_passes``, ``orderdoc_watch_last_tick_timestamp_seconds`` and
  ``orderdoc_watch_tick_seconds`` (how long the last tick took: its passes, the rules, the
  notifications).

Nothing is computed on scrape: the values are set after a tick, so a scrape is cheap.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import polars as pl

from diagnostics.aggregates import TableName, scan
from diagnostics.errors import Setting, UsageError
from diagnostics.rules.model import AlertState, RuleSet
from diagnostics.watch.alertstate import Episode
from diagnostics.watch.manifest import FileState

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
            msg = "the metrics endpoint needs prometheus-client: pip install 'diagnostics[watch]'"
            raise UsageError(msg, Setting.METRICS_PORT)
        self.registry = CollectorRegistry()
        reg = self.registry
        self.events = Gauge(
            "orderdoc_events", "Events in the logs by job, partition and kind",
            ["job", "partition", "kind"], registry=reg,
        )  # fmt: skip
        self.idle_now = Gauge(
            "orderdoc_partition_idle",
            "1 while the partition is idle (its latest idle episode goes on), else 0",
            ["job", "source", "partition"], registry=reg,
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
            "orderdoc_records_quarantined", "Log records that could not be parsed, per file",
            ["job", "source_file"], registry=reg,
        )  # fmt: skip
        self.firing = Gauge(
            "orderdoc_alerts_firing", "Alerts firing now",
            ["alertname", "severity", "job", "partition"], registry=reg,
        )  # fmt: skip
        self.lag = Gauge(
            "orderdoc_watch_lag_seconds",
            "Time of the tick minus the modification time of the newest log file read",
            ["folder"], registry=reg,
        )  # fmt: skip
        self.passes = Gauge("orderdoc_watch_passes", "Passes completed", registry=reg)
        self.last_tick = Gauge(
            "orderdoc_watch_last_tick_timestamp_seconds", "When the last tick ended", registry=reg
        )
        self.tick = Gauge(
            "orderdoc_watch_tick_seconds", "How long the last tick took", registry=reg
        )
        self._server: Any = None

    def serve(self, port: int, host: str = "127.0.0.1") -> int:
        """Start the HTTP endpoint (``/metrics``); the port it is bound to."""
        try:
            self._server, _thread = start_http_server(port, addr=host, registry=self.registry)
        except OSError as exc:
            msg = f"metrics port {port}: cannot listen on {host}:{port} ({exc.strerror or exc})"
            raise UsageError(msg, Setting.METRICS_PORT) from exc
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
        files: Iterable[FileState] = (),
        folders: Iterable[Path] = (),
        rules: RuleSet | None = None,
        evaluated_at: datetime | None = None,
        tick_seconds: float | None = None,
    ) -> None:
        """Set every gauge from the tables under ``agg``, the alert history, the files read
        (the manifest's) and the rule pack. ``now`` is the tick's time; ``evaluated_at`` the
        time the rules were evaluated at (the data's end with ``--evaluate-at data-end``),
        which says whether a partition is idle now (default ``now``); ``tick_seconds`` how
        long the tick took."""
        self._tables(agg, evaluated_at or now)
        self._firing(history, rules)
        self._lag(list(files), list(folders), now)
        self.passes.set(passes)
        self.last_tick.set(now.timestamp())
        if tick_seconds is not None:
            self.tick.set(tick_seconds)

    def _firing(self, history: Iterable[Episode], rules: RuleSet | None) -> None:
        self.firing.clear()
        counts: dict[tuple[str, str, str, str], int] = {}
        for rule in rules or ():
            counts[(rule.id, rule.severity.value, "", "")] = 0
        for episode in history:
            key = (
                episode.rule_id,
                episode.severity,
                episode.labels.get("job", ""),
                episode.labels.get("partition_id", ""),
            )
            counts[key] = counts.get(key, 0) + (episode.state is AlertState.FIRING)
        for (name, severity, job, partition), count in counts.items():
            self.firing.labels(name, severity, job, partition).set(count)

    def _lag(self, files: list[FileState], folders: list[Path], now: datetime) -> None:
        self.lag.clear()
        for folder in folders:
            root = os.path.realpath(folder)
            inside = [f.mtime_ns for f in files if f.path.startswith(root + os.sep)]
            if inside:
                self.lag.labels(str(folder)).set(max(0.0, now.timestamp() - max(inside) / 1e9))

    def _tables(self, agg: Path, at: datetime) -> None:
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
        self.idle_now.clear()
        idle = _scan(agg, TableName.PARTITION_IDLE)
        if idle is not None:
            latest = (
                idle.sort("start")
                .group_by("job", "source", "partition_id")
                .agg(pl.col("max_idle_minutes").last(), pl.col("end").last())
                .collect()
            )
            for job, source, partition, minutes, end in latest.iter_rows():
                labels = (_label(job), _label(source), _label(partition))
                self.idle.labels(*labels).set(minutes or 0)
                self.idle_now.labels(*labels).set(int(_idle_now(end, minutes, at)))
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
        self.quarantined.clear()
        for job, source_file, rows in _quarantined(agg):
            self.quarantined.labels(job, source_file).set(rows)


def _idle_now(end: datetime | None, minutes: int | None, at: datetime) -> bool:
    """True when a notice at ``at`` would continue the episode whose last notice was at
    ``end`` saying ``minutes`` minutes idle (within ``minutes + 1`` minutes of it)."""
    if end is None:
        return False
    if end.tzinfo is None:
        end = end.replace(tzinfo=at.tzinfo)
    return at <= end + timedelta(minutes=(minutes or 0) + 1)


def _quarantined(agg: Path) -> list[tuple[str, str, int]]:
    """(job, source file, records) of the quarantine table; the job of a file is the one its
    parsed records name when they name exactly one."""
    quarantine = _scan(agg, TableName.QUARANTINE)
    if quarantine is None:
        return []
    counts = quarantine.group_by("source_file").agg(pl.len().alias("rows")).collect()
    jobs: dict[str, str] = {}
    errors = _scan(agg, TableName.DATA_ERRORS)
    if errors is not None:
        named = (
            errors.filter(pl.col("job").is_not_null())
            .group_by("source_file")
            .agg(pl.col("job").unique().alias("jobs"))
            .collect()
        )
        for source_file, names in named.iter_rows():
            if len(names) == 1:
                jobs[source_file] = str(names[0])
    return sorted(
        (jobs.get(source_file or "", ""), _label(source_file), int(rows))
        for source_file, rows in counts.iter_rows()
    )
