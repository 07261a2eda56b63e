"""Which input columns hold the arrival time and the partition, when no setting names them.

Order (docs/schemas.md, "Input contract"): the column the setting names; else orderdoc's own
``arrival_time`` / ``partition_id``; else what ASA adds to every event, as a ``SELECT *``
passthrough writes it: ``EventEnqueuedUtcTime`` (Event Hubs), ``IoTHub.EnqueuedTime`` (IoT
Hub: a flattened column, an ``IoTHub`` struct, or ``IoTHub`` as JSON text),
``BlobLastModifiedUtcTime`` (blob input), and ``PartitionId``. ``EventProcessedUtcTime``
(when ASA read the event) is never an arrival time.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

import polars as pl

from diagnostics.errors import Setting, SettingError

ARRIVAL_DEFAULT = "arrival_time"
PARTITION_DEFAULT = "partition_id"
EVENT_HUBS_ARRIVAL = "EventEnqueuedUtcTime"
IOT_HUB_ARRIVAL = "IoTHub.EnqueuedTime"
BLOB_ARRIVAL = "BlobLastModifiedUtcTime"
PROCESSED = "EventProcessedUtcTime"
ASA_PARTITION = "PartitionId"

#: ASA's arrival columns, with why each is one (shown in the replay summary).
ASA_ARRIVALS: tuple[tuple[str, str], ...] = (
    (EVENT_HUBS_ARRIVAL, "Event Hubs input: when the event hub enqueued the event"),
    (IOT_HUB_ARRIVAL, "IoT Hub input: when IoT Hub received the message"),
    (BLOB_ARRIVAL, "blob input: when the blob was last modified"),
)
_FIELD = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True, slots=True)
class ColumnChoice:
    """The column used for ``setting`` (``None``: none, e.g. one partition) and why."""

    setting: Setting
    column: str | None
    reason: str

    def describe(self) -> str:
        """``arrival column: EventEnqueuedUtcTime (Event Hubs input: ...)``."""
        return f"{self.setting.value}: {self.column or 'none'} ({self.reason})"

    def to_dict(self) -> dict[str, str | None]:
        """``{"column", "reason"}`` for JSON summaries."""
        return {"column": self.column, "reason": self.reason}


def nested(frame: pl.DataFrame, name: str) -> pl.Series | None:
    """Column ``name``, or the nested field it names with dots (``IoTHub.EnqueuedTime``: field
    ``EnqueuedTime`` of a struct column ``IoTHub``, or of JSON text in it); ``None`` if absent."""
    if name in frame.columns:
        return frame[name]
    parts = name.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        head, rest = ".".join(parts[:cut]), parts[cut:]
        if head not in frame.columns:
            continue
        series: pl.Series | None = frame[head]
        if series is not None and series.dtype == pl.String:
            if not all(_FIELD.match(p) for p in rest):
                return None
            values = series.str.json_path_match("$." + ".".join(rest))
            return None if values.is_null().all() else values.alias(name)
        for field in rest:
            if series is None or not isinstance(series.dtype, pl.Struct):
                return None
            if field not in {f.name for f in series.dtype.fields}:
                return None
            series = series.struct.field(field)
        return None if series is None else series.alias(name)
    return None


def with_nested(frame: pl.DataFrame, names: Iterable[str | None]) -> pl.DataFrame:
    """``frame`` plus a column for each dotted name that :func:`nested` finds in a struct or
    JSON text column (so ``TIMESTAMP BY body.field`` and ``IoTHub.EnqueuedTime`` work)."""
    extra = []
    for name in dict.fromkeys(n for n in names if n):
        if name in frame.columns:
            continue
        series = nested(frame, name)
        if series is not None:
            extra.append(series)
    return frame.with_columns(extra) if extra else frame


def column_listing(frame: pl.DataFrame) -> str:
    """``columns: 'a', 'b', ...`` (the first 20), for messages about a missing column."""
    shown = ", ".join(f"'{c}'" for c in frame.columns[:20])
    more = f", ... ({frame.width} in all)" if frame.width > 20 else ""
    return f"columns: {shown or 'none'}{more}"


def choose_arrival(frame: pl.DataFrame, given: str | None) -> ColumnChoice:
    """The arrival column: ``given``, else ``arrival_time``, else ASA's (see the module)."""
    if given is not None:
        if nested(frame, given) is None:
            msg = f"arrival column '{given}' is missing ({column_listing(frame)})"
            raise SettingError(msg, Setting.ARRIVAL)
        return ColumnChoice(Setting.ARRIVAL, given, "chosen")
    if ARRIVAL_DEFAULT in frame.columns:
        return ColumnChoice(Setting.ARRIVAL, ARRIVAL_DEFAULT, "orderdoc's default name")
    found = [(name, why) for name, why in ASA_ARRIVALS if nested(frame, name) is not None]
    names = [name for name, _ in found]
    if names == [EVENT_HUBS_ARRIVAL, IOT_HUB_ARRIVAL]:
        # IoT Hub events carry both, holding the same instant; ASA names IoTHub.EnqueuedTime
        found = found[1:]
    if len(found) > 1:
        msg = (
            f"two arrival time columns, '{found[0][0]}' and '{found[1][0]}': choose one as the "
            "arrival column"
        )
        raise SettingError(msg, Setting.ARRIVAL)
    if not found:
        hint = (
            f"; '{PROCESSED}' is when ASA read the event, not when it arrived"
            if PROCESSED in frame.columns
            else ""
        )
        if frame.width == 1 and any(sep in frame.columns[0] for sep in (",", ";", "\t", "|")):
            # the whole header read as one name: the file uses another separator
            hint += (
                "; the header reads as one column: if the file uses another separator, name it "
                "with --separator"
            )
        msg = (
            f"no arrival time column: none of '{ARRIVAL_DEFAULT}', "
            f"{', '.join(repr(n) for n, _ in ASA_ARRIVALS)} is present ({column_listing(frame)}); "
            f"name the arrival column{hint}"
        )
        raise SettingError(msg, Setting.ARRIVAL)
    name, why = found[0]
    return ColumnChoice(Setting.ARRIVAL, name, f"{why}; '{ARRIVAL_DEFAULT}' is absent")


def choose_partition(frame: pl.DataFrame, given: str | None) -> ColumnChoice:
    """The partition column: ``given``, else ``partition_id``, else ``PartitionId``, else none
    (one partition 0)."""
    if given is not None:
        if given not in frame.columns:
            msg = f"partition column '{given}' is missing ({column_listing(frame)})"
            raise SettingError(msg, Setting.PARTITION)
        return ColumnChoice(Setting.PARTITION, given, "chosen")
    if PARTITION_DEFAULT in frame.columns:
        return ColumnChoice(Setting.PARTITION, PARTITION_DEFAULT, "orderdoc's default name")
    if ASA_PARTITION in frame.columns:
        return ColumnChoice(
            Setting.PARTITION,
            ASA_PARTITION,
            f"the input partition ASA adds to every event; '{PARTITION_DEFAULT}' is absent",
        )
    return ColumnChoice(
        Setting.PARTITION,
        None,
        f"no '{PARTITION_DEFAULT}' or '{ASA_PARTITION}' column: one partition 0",
    )
