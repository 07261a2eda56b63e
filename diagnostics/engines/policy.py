"""The rule sets of other engines: frozen, validated descriptions of a Flink or a Spark
Structured Streaming job's event-time settings (docs/engines.md). Configuration only: the
stateful logic lives in :mod:`diagnostics.engines.flink` and :mod:`diagnostics.engines.spark`.

Both engines keep time in milliseconds (Flink's ``Watermark``, Spark's ``delayMs`` and
watermark); every duration here is whole milliseconds, held as nanoseconds like the rest of
orderdoc.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from diagnostics.durations import MS, format_duration
from diagnostics.errors import PolicyError, Setting


class Rules(StrEnum):
    """Whose rules a replay follows."""

    ASA = "asa"
    FLINK = "flink"
    SPARK = "spark"


class FlinkVersion(StrEnum):
    """The Flink release whose rules a replay follows (``--flink-version``): 2.2 changed the
    combined watermark of a source whose splits are all idle (docs/engines.md, "Flink",
    rule 4)."""

    V2_1 = "2.1"
    V2_2 = "2.2"


#: The newest Flink release orderdoc models: the default.
NEWEST_FLINK = FlinkVersion.V2_2


class WatermarkPolicy(StrEnum):
    """Spark's ``spark.sql.streaming.multipleWatermarkPolicy``: how the global watermark is
    chosen from the inputs' watermarks."""

    MIN = "min"
    MAX = "max"


def _whole_ms(value: int, setting: Setting, *, positive: bool) -> None:
    """Raise :class:`PolicyError` unless ``value`` ns is whole milliseconds (and > 0 when
    ``positive``, ≥ 0 otherwise)."""
    text = format_duration(value)
    if value < 0 or (positive and value == 0):
        bound = "more than 0s" if positive else "0s or more"
        msg = f"{setting.value} {text} is out of range: it must be {bound}"
        raise PolicyError(msg, setting)
    if value % MS:
        msg = f"{setting.value} {text} is not whole milliseconds, the engine's time unit"
        raise PolicyError(msg, setting)


@dataclass(frozen=True, slots=True)
class FlinkRules:
    """A Flink job: ``WatermarkStrategy.forBoundedOutOfOrderness(out_of_orderness)``,
    optionally ``.withIdleness(idleness)`` (``None``: no idleness), one watermark generator
    per source split (one split per input partition), periodic watermarks every
    ``watermark_interval`` of processing time (``pipeline.auto-watermark-interval``), and a
    tumbling event-time window of ``window`` with ``allowedLateness(allowed_lateness)``, as
    Flink ``version`` runs it.
    """

    event_time: str
    window_ns: int
    out_of_orderness_ns: int = 0
    idleness_ns: int | None = None
    allowed_lateness_ns: int = 0
    watermark_interval_ns: int = 200 * MS
    version: FlinkVersion = NEWEST_FLINK

    def __post_init__(self) -> None:
        if not isinstance(self.version, FlinkVersion):
            object.__setattr__(self, "version", FlinkVersion(self.version))
        _whole_ms(self.window_ns, Setting.WINDOW, positive=True)
        _whole_ms(self.out_of_orderness_ns, Setting.OUT_OF_ORDERNESS, positive=False)
        if self.idleness_ns is not None:
            _whole_ms(self.idleness_ns, Setting.IDLENESS, positive=True)
        _whole_ms(self.allowed_lateness_ns, Setting.ALLOWED_LATENESS, positive=False)
        _whole_ms(self.watermark_interval_ns, Setting.WATERMARK_INTERVAL, positive=True)

    @property
    def rules(self) -> Rules:
        """:attr:`Rules.FLINK`."""
        return Rules.FLINK

    def describe(self) -> str:
        """One line in Flink's terms."""
        parts = [
            f"Flink {self.version.value}: event time {self.event_time}",
            f"forBoundedOutOfOrderness({format_duration(self.out_of_orderness_ns)})",
        ]
        if self.idleness_ns is not None:
            parts.append(f"withIdleness({format_duration(self.idleness_ns)})")
        parts.append(f"tumbling {format_duration(self.window_ns)} window")
        parts.append(f"allowedLateness({format_duration(self.allowed_lateness_ns)})")
        parts.append(f"watermark every {format_duration(self.watermark_interval_ns)}")
        return ", ".join(parts)


@dataclass(frozen=True, slots=True)
class SparkRules:
    """A Spark Structured Streaming job: ``withWatermark(event_time, watermark_delay)``, a
    tumbling ``window(event_time, window)`` aggregation in append (or update) mode, micro-
    batches every ``trigger`` of processing time (``0``: back to back, one micro-batch per
    arrival instant). ``input_column`` names the column telling the query's inputs apart
    (each its own ``withWatermark``, combined by ``watermark_policy``); ``None``: one input.
    """

    event_time: str
    window_ns: int
    watermark_delay_ns: int = 0
    trigger_ns: int = 1_000 * MS
    input_column: str | None = None
    watermark_policy: WatermarkPolicy = WatermarkPolicy.MIN

    def __post_init__(self) -> None:
        _whole_ms(self.window_ns, Setting.WINDOW, positive=True)
        _whole_ms(self.watermark_delay_ns, Setting.WATERMARK_DELAY, positive=False)
        _whole_ms(self.trigger_ns, Setting.TRIGGER, positive=False)
        if not isinstance(self.watermark_policy, WatermarkPolicy):
            object.__setattr__(self, "watermark_policy", WatermarkPolicy(self.watermark_policy))

    @property
    def rules(self) -> Rules:
        """:attr:`Rules.SPARK`."""
        return Rules.SPARK

    def describe(self) -> str:
        """One line in Spark's terms."""
        trigger = (
            "back-to-back micro-batches"
            if self.trigger_ns == 0
            else f"trigger every {format_duration(self.trigger_ns)}"
        )
        parts = [
            f"Spark: withWatermark({self.event_time}, {format_duration(self.watermark_delay_ns)})",
            f"tumbling {format_duration(self.window_ns)} window",
            trigger,
        ]
        if self.input_column is not None:
            parts.append(
                f"inputs by {self.input_column}, multipleWatermarkPolicy "
                f"{self.watermark_policy.value}"
            )
        return ", ".join(parts)


#: Either engine's rules.
EngineRules = FlinkRules | SparkRules
