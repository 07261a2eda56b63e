"""Options of the instrumented replay: error windows, idle notices, names, log form.

Invariants (checked in ``__post_init__``): both intervals are positive whole nanoseconds, the
job and source names are non-empty and free of ``/`` (they end up inside a resource id).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from diagnostics.durations import MINUTE
from diagnostics.errors import Setting, UsageError

#: The fixed part of the resource id ASA writes (upper case, as ASA writes it); the job name
#: is appended as given so that it matches the ``job`` column of ``metrics.parquet``.
RESOURCE_PREFIX = (
    "/SUBSCRIPTIONS/00000000-0000-0000-0000-000000000000/RESOURCEGROUPS/ORDERDOC"
    "/PROVIDERS/MICROSOFT.STREAMANALYTICS/STREAMINGJOBS/"
)


class LogFormat(StrEnum):
    """Which of ASA's two diagnostics forms ``diagnostics.jsonl`` is written in."""

    RESOURCE = "resource"
    ACTIVITY = "activity"


@dataclass(frozen=True)
class InstrumentOptions:
    """How data errors are aggregated and named.

    ``error_window_ns``: processing-time window of one aggregate record (ASA: 1 minute).
    ``idle_notice_ns``: idle time after which ``InputPartitionNotProgressing`` is written,
    and repeated each such interval while the partition stays idle.
    ``key_columns``: columns whose distinct values are counted per aggregate (orderdoc extra);
    empty means "use ``device_id`` when the input has it".
    """

    error_window_ns: int = MINUTE
    idle_notice_ns: int = 5 * MINUTE
    job: str = "orderdoc-replay"
    source: str = "input"
    log_format: LogFormat = LogFormat.RESOURCE
    key_columns: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for name, setting in (
            ("error_window_ns", Setting.ERROR_WINDOW),
            ("idle_notice_ns", Setting.IDLE_NOTICE),
        ):
            value = getattr(self, name)
            if not isinstance(value, int) or value <= 0:
                msg = f"{setting} must be a positive duration in nanoseconds, got {value!r}"
                raise UsageError(msg, setting)
        for name, setting in (("job", Setting.JOB), ("source", Setting.SOURCE)):
            value = getattr(self, name)
            if not value or "/" in value or value != value.strip():
                msg = f"{setting} {value!r} must be non-empty, without '/' or edge spaces"
                raise UsageError(msg, setting)
        if not isinstance(self.log_format, LogFormat):
            object.__setattr__(self, "log_format", LogFormat(self.log_format))

    @property
    def resource_id(self) -> str:
        """The ``resourceId`` of every record: ASA's path with this job's name at the end."""
        return RESOURCE_PREFIX + self.job
