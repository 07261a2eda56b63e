"""Live ASA logs for the watcher's tests and its soak bench (bench/watch_soak.py).

Several jobs write, each to its hourly ``PT1H.json`` in ASA's folder layout
(``resourceId=/SUBSCRIPTIONS/.../STREAMINGJOBS/<JOB>/y=YYYY/m=MM/d=DD/h=HH/m=00/PT1H.json``):
data errors every minute with bursts (late-event spikes, out-of-order runs, early events),
an input partition that goes idle twice (an ``InputPartitionNotProgressing`` notice every 5
minutes while it is silent, as ASA sends them), malformed lines now and then, and an
AzureMetrics export of each job's watermark delay, which runs high while a partition is idle.
Every rule of the default pack fires on it. :func:`lines` gives the lines of a stretch of time
in the order ASA writes them; :class:`Writer` appends them to a folder, a line possibly in
two writes.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

T0 = datetime(2024, 3, 5, 10, tzinfo=UTC)
JOBS = ("orders", "payments", "sensors")
METRICS_FILE = "metrics/azuremetrics.csv"
METRICS_HEADER = (
    b"TenantId,SourceSystem,TimeGenerated [UTC],ResourceId,MetricName,Total,Count,Maximum,"
    b"Minimum,Average,TimeGrain,UnitName,Type,_ResourceId\n"
)
#: The input partition that goes idle, and how long the pattern of a job's bursts is.
IDLE_PARTITION = 3
CYCLE_MINUTES = 120


@dataclass(frozen=True)
class Line:
    """One line of one file: written at ``at``; ``whole`` lines (a metrics export's rows)
    are written in one piece."""

    at: datetime
    path: str
    text: bytes
    whole: bool = False


def resource_id(job: str) -> str:
    """ASA's upper-case resource id of ``job``."""
    return (
        "/SUBSCRIPTIONS/00000000-0000-0000-0000-000000000000/RESOURCEGROUPS/RG-LIVE/PROVIDERS/"
        f"MICROSOFT.STREAMANALYTICS/STREAMINGJOBS/{job.upper()}"
    )


def log_path(job: str, at: datetime) -> str:
    """The hour's blob of ``job`` (relative to the log folder)."""
    return f"resourceId={resource_id(job)}/y={at:%Y}/m={at:%m}/d={at:%d}/h={at:%H}/m=00/PT1H.json"


def _stamp(at: datetime) -> str:
    return at.strftime("%Y-%m-%dT%H:%M:%S.0000000Z")


def _record(job: str, at: datetime, properties: dict) -> bytes:
    record = {
        "time": _stamp(at),
        "resourceId": resource_id(job),
        "category": "Execution",
        "operationName": "Process Events",
        "level": "Information",
        "properties": properties,
    }
    return json.dumps(record).encode() + b"\n"


def data_error(job: str, minute: datetime, kind: str, count: int, partition: int) -> Line:
    """A DataError record of ``count`` events of ``kind`` in the minute from ``minute``."""
    at = minute + timedelta(seconds=50)
    text = _record(
        job,
        at,
        {
            "Source": "telemetry",
            "Type": "DataError",
            "DataErrorType": kind,
            "BriefMessage": f"{kind} on partition {partition}",
            "FromTimestamp": _stamp(minute),
            "ToTimestamp": _stamp(minute + timedelta(seconds=45)),
            "EventCount": count,
            "PartitionId": partition,
        },
    )
    return Line(at, log_path(job, at), text)


def idle_notice(job: str, at: datetime, partition: int, minutes: int) -> Line:
    """ASA's notice that ``partition`` has had no data for ``minutes`` minutes."""
    text = _record(
        job,
        at,
        {
            "Source": "telemetry",
            "Type": "InputPartitionNotProgressing",
            "Message": f"Input Partition [{partition}] does not have additional data for more "
            f"than [{minutes}] minute(s). Partition will not progress until either events "
            "arrive or late arrival threshold is met.",
        },
    )
    return Line(at, log_path(job, at), text)


def malformed(job: str, at: datetime) -> Line:
    """A line cut short (a truncated write): quarantined."""
    text = f'{{"time": "{_stamp(at)}", "resourceId": "{resource_id(job)}", "properties": {{"Type'
    return Line(at, log_path(job, at), text.encode() + b"\n")


def watermark_row(job: str, minute: datetime, delay: float) -> Line:
    """The AzureMetrics row of ``job``'s watermark delay in the minute from ``minute``
    (written when the minute is over)."""
    shown = minute.strftime("%-m/%-d/%Y, %-I:%M:00.000 %p")
    rid = resource_id(job)
    text = (
        f'tenant,Azure,"{shown}",{rid},OutputWatermarkDelaySeconds,{delay},1,{delay},{delay},'
        f"{delay},PT1M,Seconds,AzureMetrics,{rid.lower()}\n"
    )
    return Line(minute + timedelta(minutes=1), METRICS_FILE, text.encode(), whole=True)


@dataclass(frozen=True)
class Pattern:
    """Where a job's bursts fall in each :data:`CYCLE_MINUTES` (minutes from the cycle's
    start), drawn once per job and seed."""

    late: int
    out_of_order: int
    idle: tuple[tuple[int, int], ...]  # (first silent minute, minutes silent)
    early: frozenset[int]
    malformed: frozenset[int]

    @classmethod
    def draw(cls, rng: random.Random) -> Pattern:
        first = rng.randrange(4, 14)
        second = first + rng.randrange(22, 34) + rng.randrange(12, 20)
        return cls(
            late=rng.randrange(60, 100),
            out_of_order=rng.randrange(2, 40),
            idle=((first, rng.randrange(22, 34)), (second, rng.randrange(21, 30))),
            early=frozenset(rng.sample(range(CYCLE_MINUTES), 4)),
            malformed=frozenset(rng.sample(range(CYCLE_MINUTES), 2)),
        )


def _job_minute(
    job: str, pattern: Pattern, rng: random.Random, minute: datetime, m: int
) -> list[Line]:
    """What ``job`` writes about the minute ``m`` of its cycle (starting at ``minute``)."""
    out: list[Line] = []
    in_late = pattern.late <= m < pattern.late + 6
    late = rng.randrange(40, 60) if in_late else rng.randrange(0, 6)
    if late:  # a spike comes from one partition
        partition = 0 if in_late else rng.randrange(0, 3)
        out.append(data_error(job, minute, "LateInputEvent", late, partition))
    in_run = pattern.out_of_order <= m < pattern.out_of_order + 16
    disorder = rng.randrange(80, 120) if in_run else rng.randrange(0, 8)
    if disorder:
        out.append(data_error(job, minute, "OutOfOrderEvent", disorder, rng.randrange(0, 3)))
    if m in pattern.early:
        out.append(data_error(job, minute, "EarlyInputEvent", rng.randrange(1, 5), 1))
    if m in pattern.malformed:
        out.append(malformed(job, minute + timedelta(seconds=20)))
    silent = [(m - start, length) for start, length in pattern.idle if 0 <= m - start < length]
    if silent and silent[0][0] and silent[0][0] % 5 == 0:  # ASA's notice every 5 minutes
        out.append(idle_notice(job, minute + timedelta(seconds=30), IDLE_PARTITION, silent[0][0]))
    delay = 5.0 + (60.0 * min(silent[0][0], 20) if silent else 0.0)
    out.append(watermark_row(job, minute, delay))
    return out


def lines(
    seed: int, minutes: int, *, jobs: Sequence[str] = JOBS, start: datetime = T0
) -> list[Line]:
    """The lines the jobs write in ``minutes`` minutes from ``start``, in the order they are
    written (by time, then job); the same for the same seed."""
    found: list[tuple[datetime, int, int, Line]] = []
    for rank, job in enumerate(jobs):
        rng = random.Random(f"{seed}:{job}")
        pattern = Pattern.draw(rng)
        for m in range(minutes):
            if m and m % CYCLE_MINUTES == 0:
                pattern = Pattern.draw(rng)
            minute = start + timedelta(minutes=m)
            for line in _job_minute(job, pattern, rng, minute, m % CYCLE_MINUTES):
                found.append((line.at, rank, len(found), line))
    found.sort(key=lambda item: item[:3])
    return [line for *_key, line in found]


class Writer:
    """Appends lines to the files under ``root``: the metrics export gets its header first;
    :meth:`write` can stop in the middle of a line, and the next write goes on from there."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._partial: tuple[Line, int] | None = None

    def _append(self, line: Line, data: bytes) -> None:
        path = self.root / line.path
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            if line.path == METRICS_FILE:
                data = METRICS_HEADER + data
        with path.open("ab") as out:
            out.write(data)

    def write(self, batch: Iterable[Line], cut: int | None = None) -> None:
        """Finish the line left half-written, append ``batch`` and, when ``cut`` is given,
        the first ``cut`` bytes of the batch's last line only (unless it is ``whole``)."""
        if self._partial is not None:
            line, done = self._partial
            self._append(line, line.text[done:])
            self._partial = None
        batch = list(batch)
        for index, line in enumerate(batch):
            last = index == len(batch) - 1
            if last and cut is not None and not line.whole and 0 < cut < len(line.text):
                self._append(line, line.text[:cut])
                self._partial = (line, cut)
            else:
                self._append(line, line.text)
