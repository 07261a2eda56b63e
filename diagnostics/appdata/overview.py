"""Overview data: the KPI row, of the whole folder or of one job (the app's job scope,
:mod:`diagnostics.appdata.scope`); the charts' data over time is
:mod:`diagnostics.appdata.over_time`'s (its names are re-exported here).

Everything here reads the tables lazily and returns small frames (a few hundred rows at
most), so that the page stays fast on millions of aggregate rows.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

import polars as pl

from diagnostics.aggregates import TableName
from diagnostics.appdata.over_time import (
    BUCKETS,
    choose_bucket,
    errors_over_time,
    input_events_by_partition,
    kind_totals,
    kinds_by_partition,
)
from diagnostics.appdata.store import Aggregate, collect, of_job, scan, utc
from diagnostics.engine.outcomes_files import read_outcomes
from diagnostics.kinds import ErrorKind
from diagnostics.words import plural

IDLE_KIND = ErrorKind.PARTITION_NOT_PROGRESSING.value
#: The summary's record counts: the folder's whatever the job scope.
RECORD_COUNTS = ("records_total", "records_parsed", "records_quarantined")


@dataclass(frozen=True)
class Kpis:
    """The KPI row. ``watermark`` is ``None`` without a metrics table."""

    records_total: int
    records_parsed: int
    records_quarantined: int
    events_by_kind: dict[str, int] = field(default_factory=dict)
    idle_partitions: tuple[int, ...] = ()
    jobs: tuple[str, ...] = ()
    #: the worst minute's watermark delay (``None`` without a metrics table)
    watermark: WatermarkDelay | None = None
    time_from: str | None = None
    time_to: str | None = None
    #: per kind, the records that named no count (their events are at least one each)
    records_without_count: dict[str, int] = field(default_factory=dict)
    #: with a capture, the events with a data error, each once (an event both late and out
    #: of order is in two kinds' counts); ``None`` from logs alone
    distinct_data_errors: int | None = None
    #: one line each: what a replayed capture's reader or replay says to look at (far-off
    #: arrival times, most application times invalid with an example and the accepted forms)
    warnings: tuple[str, ...] = ()

    @property
    def data_errors(self) -> int:
        """Events in data-error records (every kind except idle notices)."""
        return sum(v for k, v in self.events_by_kind.items() if k != IDLE_KIND)

    @property
    def data_errors_text(self) -> str:
        """:attr:`data_errors` for display: ``"at least N"`` when some records had no count
        (N counts such a record as one event); with a capture, each event once."""
        if self.distinct_data_errors is not None:
            return f"{self.distinct_data_errors:,}"
        unknown = sum(v for k, v in self.records_without_count.items() if k != IDLE_KIND)
        return _at_least(self.data_errors + unknown, unknown)

    @property
    def data_errors_help(self) -> str:
        """What :attr:`data_errors_text` counts, for the number's help: with a capture each
        event once, from logs the sum of the kinds' counts (the logs do not say which events
        two kinds share)."""
        if self.distinct_data_errors is not None:
            return (
                "Each event once (replayed from the capture): an event both late and out of "
                "order is in both kinds' counts below, so they can add up to more."
            )
        text = (
            "The sum of the logs' event counts over the kinds: an event both late and out of "
            "order is counted under each (ASA's records do not say which events they share)."
        )
        if any(v for k, v in self.records_without_count.items() if k != IDLE_KIND):
            text += " At least: some records named no count; each is counted as one event."
        return text

    @property
    def time_range_text(self) -> str:
        """The log records' time range in words: ``2024-01-01 00:02:00 → 00:30:00 UTC`` (the
        end's date only when it differs), ``?`` for an end that is unknown."""
        start, end = _parse_time(self.time_from), _parse_time(self.time_to)
        first = "?" if start is None else f"{start:%Y-%m-%d %H:%M:%S}"
        if end is None:
            last = "?"
        elif start is not None and end.date() == start.date():
            last = f"{end:%H:%M:%S}"
        else:
            last = f"{end:%Y-%m-%d %H:%M:%S}"
        return f"{first} → {last} UTC"

    def events_text(self, kind: str) -> str:
        """Events of ``kind`` for display (``"at least N"`` as in :attr:`data_errors_text`)."""
        unknown = self.records_without_count.get(kind, 0)
        return _at_least(self.events_by_kind.get(kind, 0) + unknown, unknown)


def _parse_time(text: str | None) -> datetime | None:
    """An ISO-8601 time of the summary (``...Z``) in UTC, ``None`` when absent or unreadable."""
    if not text:
        return None
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        return None
    return parsed.astimezone(UTC) if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _at_least(events: int, unknown: int) -> str:
    return f"at least {events:,}" if unknown else f"{events:,}"


@dataclass(frozen=True)
class WatermarkDelay:
    """The worst minute's output watermark delay, where it was, and the delay of the other
    minutes of that job (their median: the steady state beside the worst)."""

    worst_s: float
    job: str | None
    minute: datetime
    #: the worst minute is the job's first (its start: the watermark has not settled yet)
    at_start: bool
    #: median delay of the job's other minutes (``None``: it has one minute only)
    others_median_s: float | None
    #: how many other minutes that median is over
    others: int


def _worst_delay(agg: Aggregate, job: str | None = None) -> WatermarkDelay | None:
    frame = scan(agg, TableName.METRICS)
    if frame is None:
        return None
    frame = of_job(frame, job)
    minutes = collect(
        frame.drop_nulls("output_watermark_delay_seconds")
        .group_by("job", utc(pl.col("minute")).alias("minute"))
        .agg(pl.col("output_watermark_delay_seconds").max().cast(pl.Float64).alias("delay")),
        agg,
        TableName.METRICS,
    ).sort("delay", "minute", descending=[True, False], nulls_last=True)
    if minutes.is_empty():
        return None
    worst = minutes.row(0, named=True)
    same_job = minutes.filter(
        pl.col("job").is_null() if worst["job"] is None else pl.col("job") == worst["job"]
    )
    others = same_job.filter(pl.col("minute") != worst["minute"])
    median = others["delay"].median() if others.height else None
    return WatermarkDelay(
        worst_s=float(worst["delay"]),
        job=worst["job"],
        minute=worst["minute"],
        at_start=worst["minute"] == same_job["minute"].min(),
        others_median_s=None if median is None else float(median),  # type: ignore[arg-type]
        others=others.height,
    )


def _clock(minute: datetime) -> str:
    return f"{minute:%Y-%m-%d %H:%M} UTC"


def watermark_text(delay: WatermarkDelay | None, seconds: Callable[[float], str]) -> str:
    """What the worst watermark delay measures, in words: which minute, and the other
    minutes' median beside it (``seconds`` formats a duration)."""
    if delay is None:
        return "No metrics were loaded (a capture or the job's metrics give them)."
    where = (
        f"in the job's first minute ({_clock(delay.minute)}, its start)"
        if delay.at_start
        else f"in the minute {_clock(delay.minute)}"
    )
    where = where[0].upper() + where[1:]
    if delay.others_median_s is None:
        return f"{where}, the only minute measured."
    others = "later" if delay.at_start else "other"
    return (
        f"{where}; the {plural(delay.others, f'{others} minute')}: "
        f"median {seconds(delay.others_median_s)}."
    )


def _from_tables(agg: Aggregate, job: str | None = None) -> dict:
    """Summary facts computed from the tables: when ``summary.json`` is missing, or for one
    ``job`` of a folder of several (its kinds, idle partitions and time range; the record
    counts stay the folder's: quarantined records name no job)."""
    errors = scan(agg, TableName.DATA_ERRORS)
    quarantine = scan(agg, TableName.QUARANTINE)
    by_kind: dict[str, int] = {}
    without_count: dict[str, int] = {}
    idle: list[int] = []
    time_range: dict[str, str | None] = {"from": None, "to": None}
    parsed = 0
    if errors is not None:
        errors = of_job(errors, job)
        counts = collect(
            errors.group_by("kind").agg(
                pl.col("event_count").sum(),
                pl.len().alias("n"),
                pl.col("event_count").is_null().sum().alias("unknown"),
            ),
            agg,
            TableName.DATA_ERRORS,
        ).sort("kind")
        by_kind = dict(zip(counts["kind"], counts["event_count"], strict=True))
        unknown = counts.filter(pl.col("unknown") > 0)
        without_count = dict(zip(unknown["kind"], unknown["unknown"], strict=True))
        parsed = int(counts["n"].sum())
        facts = collect(
            errors.select(
                pl.coalesce("from_time", "record_time").min().alias("from"),
                pl.coalesce("to_time", "record_time").max().alias("to"),
                pl.col("partition_id")
                .filter(pl.col("kind") == IDLE_KIND)
                .drop_nulls()
                .unique()
                .sort()
                .implode()
                .alias("idle"),
            ),
            agg,
            TableName.DATA_ERRORS,
        ).row(0, named=True)
        idle = [int(p) for p in facts["idle"] or ()]
        time_range = {k: None if facts[k] is None else _iso(facts[k]) for k in ("from", "to")}
    bad = (
        0
        if quarantine is None
        else int(collect(quarantine.select(pl.len()), agg, TableName.QUARANTINE).item())
    )
    return {
        "records_total": parsed + bad,
        "records_parsed": parsed,
        "records_quarantined": bad,
        "events_by_kind": by_kind,
        "records_without_count": without_count,
        "idle_partitions": idle,
        "time_range": time_range,
    }


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def kpis(agg: Aggregate, job: str | None = None) -> Kpis:
    """The KPI row of ``agg`` (from ``summary.json``, else from the tables); with ``job``,
    of that job's records (the folder's record counts: quarantined records name no job)."""
    if job is not None:
        own = _from_tables(agg, job)
        folder = {k: agg.summary[k] for k in RECORD_COUNTS if k in agg.summary}
        summary = {**agg.summary, **own, **folder, "jobs": [job]}
    elif "events_by_kind" in agg.summary:
        summary = agg.summary
    else:
        summary = {**agg.summary, **_from_tables(agg)}
    delay = _worst_delay(agg, job)
    time_range = summary.get("time_range") or {}
    return Kpis(
        records_total=int(summary.get("records_total", 0)),
        records_parsed=int(summary.get("records_parsed", 0)),
        records_quarantined=int(summary.get("records_quarantined", 0)),
        events_by_kind={str(k): int(v) for k, v in summary.get("events_by_kind", {}).items()},
        idle_partitions=tuple(int(p) for p in summary.get("idle_partitions", ())),
        jobs=tuple(str(j) for j in summary.get("jobs", ())),
        watermark=delay,
        time_from=time_range.get("from"),
        time_to=time_range.get("to"),
        records_without_count={
            str(k): int(v) for k, v in (summary.get("records_without_count") or {}).items()
        },
        distinct_data_errors=_distinct_errors(agg),
        warnings=tuple(str(w) for w in summary.get("capture_warnings") or ()),
    )


def _distinct_errors(agg: Aggregate) -> int | None:
    """With a capture in the folder, its events with a data error, each once."""
    from diagnostics.appdata.build import capture_context
    from diagnostics.engine.summary import events_with_data_errors

    ctx = capture_context(agg.path)
    if ctx is None or not ctx.outcomes_path.exists():
        return None
    return events_with_data_errors(read_outcomes(ctx.outcomes_path, columns=["status"]))


__all__ = [
    "BUCKETS",
    "IDLE_KIND",
    "Kpis",
    "WatermarkDelay",
    "choose_bucket",
    "errors_over_time",
    "input_events_by_partition",
    "kind_totals",
    "kinds_by_partition",
    "kpis",
    "watermark_text",
]
