"""An ASA job's time handling translated into Flink's or Spark's settings (docs/engines.md,
"Translating an ASA job"): the settings as the target writes them, the rules orderdoc replays
them with, and the ASA features the target has no equivalent for.

The mapping is literal: ASA's watermark is ``max(M − ooo, τ − late)`` (docs/semantics.md,
"Watermarks, merge and output release"). Its event-time term is the engines' bounded
out-of-orderness (Flink) or watermark delay (Spark) with the out-of-order tolerance; its
processing-time term, which stops a silent partition from holding output back longer than the
late arrival tolerance, is Flink's idleness timeout (Spark's watermark is global and is not
held back by a silent partition).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from diagnostics.durations import MINUTE, MS, SECOND, format_duration
from diagnostics.engine.policy import EARLY_WINDOW_NS, Action, OrderingPolicy
from diagnostics.engines.policy import EngineRules, FlinkRules, SparkRules
from diagnostics.errors import UsageError


class Target(StrEnum):
    """What ``orderdoc translate --to`` writes."""

    FLINK_SQL = "flink-sql"
    FLINK_DATASTREAM = "flink-datastream"
    SPARK = "spark"

    @property
    def engine(self) -> str:
        """The engine's name as prose says it."""
        return "Spark" if self is Target.SPARK else "Flink"


@dataclass(frozen=True, slots=True)
class Translation:
    """The job in ``target``'s terms: ``settings`` (code lines to paste), ``mapping`` (how
    each ASA setting became one), ``no_equivalent`` (ASA features the target lacks), and the
    ``rules`` orderdoc replays the translated job with."""

    target: Target
    rules: EngineRules
    settings: tuple[str, ...]
    mapping: tuple[str, ...]
    no_equivalent: tuple[str, ...]


def translate(
    policy: OrderingPolicy,
    window_ns: int,
    target: Target,
    *,
    source: str = "input",
    trigger_ns: int = SECOND,
    watermark_interval_ns: int = 200 * MS,
) -> Translation:
    """Translate ``policy`` (with a tumbling window of ``window_ns``) for ``target``;
    ``source`` names the input as the generated code does."""
    column = policy.timestamp_by
    if column is None:
        msg = (
            "the job reads its input on arrival time (no TIMESTAMP BY): Flink and Spark would "
            "run it on processing time, with no watermark and nothing dropped as late; "
            "there is nothing to translate"
        )
        raise UsageError(msg)
    ooo = policy.effective_ooo_ns
    late = policy.late_arrival_ns
    mapping = [f"event time: TIMESTAMP BY {column}"]
    rules: EngineRules
    if target is Target.SPARK:
        spark = SparkRules(
            event_time=column, window_ns=window_ns, watermark_delay_ns=ooo, trigger_ns=trigger_ns
        )
        mapping.append(f"watermark delay {format_duration(ooo)}: the out-of-order tolerance")
        mapping.append(
            "no idleness setting: Spark's watermark is the maximum over all partitions, a "
            "silent partition does not hold it back"
        )
        rules, settings = spark, _spark(spark, source)
    else:
        idle = None if late is None else max(late, MS)
        rules = FlinkRules(
            event_time=column,
            window_ns=window_ns,
            out_of_orderness_ns=ooo,
            idleness_ns=idle,
            watermark_interval_ns=watermark_interval_ns,
        )
        mapping.append(f"out-of-orderness {format_duration(ooo)}: the out-of-order tolerance")
        mapping.append(
            "no idleness: the late arrival tolerance is unlimited, ASA waits for every partition"
            if idle is None
            else f"idleness {format_duration(idle)}: the late arrival tolerance (ASA stops "
            "waiting for a silent partition after it)"
        )
        settings = _flink_sql(rules, source) if target is Target.FLINK_SQL else _datastream(rules)
    mapping.append(f"window: tumbling {format_duration(window_ns)}")
    return Translation(target, rules, settings, tuple(mapping), _no_equivalent(policy, target))


def _no_equivalent(policy: OrderingPolicy, target: Target) -> tuple[str, ...]:
    engine = target.engine
    drop = "drops an event only when the window it belongs to has closed" + (
        " (a late side output can collect them)" if engine == "Flink" else ""
    )
    lines = []
    if policy.action is Action.ADJUST:
        lines.append(
            f"Adjust: ASA keeps late and out-of-order events, moved to the watermark; {engine} "
            f"never adjusts, it {drop}"
        )
    else:
        lines.append(f"Drop: ASA drops each event behind its watermark; {engine} {drop}")
    if policy.early_policy:
        lines.append(
            f"the {format_duration(EARLY_WINDOW_NS)} early window: ASA drops events whose time "
            f"is more than 5 minutes ahead of their arrival; {engine} keeps them, and they move "
            "its watermark forward"
        )
    if policy.effective_ooo_ns > 0:
        lines.append(
            "the out-of-order buffer's reordering: ASA sorts events within the out-of-order "
            f"tolerance before the query sees them; {engine} keeps arrival order (a window "
            "accepts any order, order-sensitive functions see arrival order)"
        )
    if policy.partition_by or policy.over:
        what = "TIMESTAMP BY ... OVER" if policy.over else "PARTITION BY PartitionId"
        merge = (
            "merges all splits into one watermark with a minimum"
            if engine == "Flink"
            else "keeps one global watermark"
        )
        lines.append(f"{what}'s independent timelines: {engine} {merge}")
    lines.append(
        "the late arrival tolerance compares an event's time with its arrival: ASA's "
        f"watermark also moves with processing time; {engine}'s moves with event time only"
    )
    return tuple(lines)


def sql_interval(ns: int) -> str:
    """Flink SQL's interval literal: ``INTERVAL '5' SECOND``, ``INTERVAL '0.5' SECOND``."""
    if ns % SECOND == 0:
        return f"INTERVAL '{ns // SECOND}' SECOND"
    return f"INTERVAL '{ns / SECOND:.3f}' SECOND"


def java_duration(ns: int) -> str:
    """``Duration.ofSeconds(5)``, ``Duration.ofMillis(200)``, ``Duration.ofMinutes(1)``."""
    if ns % MINUTE == 0 and ns:
        return f"Duration.ofMinutes({ns // MINUTE})"
    if ns % SECOND == 0:
        return f"Duration.ofSeconds({ns // SECOND})"
    return f"Duration.ofMillis({ns // MS})"


def config_duration(ns: int) -> str:
    """A Flink configuration duration: ``5 s``, ``200 ms``."""
    return f"{ns // SECOND} s" if ns % SECOND == 0 else f"{ns // MS} ms"


def spark_interval(ns: int) -> str:
    """A Spark interval string: ``5 seconds``, ``500 milliseconds``, ``1 minute``."""
    if ns == 0:
        return "0 seconds"
    for size, unit in ((MINUTE, "minute"), (SECOND, "second"), (MS, "millisecond")):
        if ns % size == 0:
            count = ns // size
            return f"{count} {unit}{'' if count == 1 else 's'}"
    return f"{ns // MS} milliseconds"


def _flink_sql(rules: FlinkRules, source: str) -> tuple[str, ...]:
    ts = rules.event_time
    lines = [
        f"CREATE TABLE {source} (",
        "  ...,",
        f"  {ts} TIMESTAMP(3),",
        f"  WATERMARK FOR {ts} AS {ts} - {sql_interval(rules.out_of_orderness_ns)}",
        ") WITH (...);",
    ]
    if rules.idleness_ns is not None:
        lines.append(
            f"SET 'table.exec.source.idle-timeout' = '{config_duration(rules.idleness_ns)}';"
        )
    lines.append(
        f"SET 'pipeline.auto-watermark-interval' = "
        f"'{config_duration(rules.watermark_interval_ns)}';"
    )
    lines.append(
        f"SELECT window_start, window_end, ... FROM TABLE(TUMBLE(TABLE {source}, "
        f"DESCRIPTOR({ts}), {sql_interval(rules.window_ns)})) GROUP BY window_start, window_end, ...;"
    )
    return tuple(lines)


def _datastream(rules: FlinkRules) -> tuple[str, ...]:
    strategy = (
        f"WatermarkStrategy.<Event>forBoundedOutOfOrderness("
        f"{java_duration(rules.out_of_orderness_ns)})"
    )
    lines = [
        f"env.getConfig().setAutoWatermarkInterval({rules.watermark_interval_ns // MS}L);",
        f"WatermarkStrategy<Event> strategy = {strategy}",
        f"    .withTimestampAssigner((event, ts) -> event.{rules.event_time}.toEpochMilli())",
    ]
    if rules.idleness_ns is not None:
        lines.append(f"    .withIdleness({java_duration(rules.idleness_ns)})")
    lines[-1] += ";"
    lines += [
        "stream.keyBy(...)",
        f"    .window(TumblingEventTimeWindows.of({java_duration(rules.window_ns)}))",
        f"    .allowedLateness({java_duration(rules.allowed_lateness_ns)})",
        "    .aggregate(...);",
    ]
    return tuple(lines)


def _spark(rules: SparkRules, source: str) -> tuple[str, ...]:
    ts = rules.event_time
    return (
        f'({source}.withWatermark("{ts}", "{spark_interval(rules.watermark_delay_ns)}")',
        f'    .groupBy(window("{ts}", "{spark_interval(rules.window_ns)}"), ...)',
        "    .agg(...)",
        '    .writeStream.outputMode("append")',
        f'    .trigger(processingTime="{spark_interval(rules.trigger_ns)}"))',
    )


@dataclass(frozen=True, slots=True)
class QueryWindow:
    """The tumbling window of the query's first windowed step that reads the input."""

    size_ns: int
    step: str
    text: str


def query_window(query: str | None, input_name: str) -> QueryWindow | None:
    """The first ``GROUP BY ... TumblingWindow`` of ``query`` over ``input_name``; ``None``
    when the query has none. A hopping, sliding or session window first is a
    :class:`UsageError` (the replay models tumbling windows)."""
    if query is None:
        return None
    from diagnostics.impact.model import WindowKind
    from diagnostics.impact.steps import read_steps

    for step in read_steps(query, input_name).steps:
        if step.window.kind is WindowKind.TUMBLING and step.window.offset == 0:
            return QueryWindow(step.window.size, step.name, step.window.describe())
        msg = (
            f"step {step.name} of the query groups by {step.window.describe()}: orderdoc "
            "replays tumbling windows; give --window SIZE to translate with a tumbling window"
        )
        raise UsageError(msg)
    return None
