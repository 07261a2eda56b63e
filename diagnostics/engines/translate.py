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
from diagnostics.engines.job_plan import JobPlan, plan_job
from diagnostics.engines.policy import (
    NEWEST_FLINK,
    EngineRules,
    FlinkRules,
    FlinkVersion,
    SparkRules,
)
from diagnostics.engines.script_spark import spark_script
from diagnostics.engines.sql_flink import flink_sql_script
from diagnostics.engines.sql_text import java_duration
from diagnostics.errors import UsageError
from diagnostics.impact.model import WindowKind


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
    """The job in ``target``'s terms: ``script`` (the lines to paste or run), ``mapping`` (how
    each ASA setting became one), ``no_equivalent`` (ASA features the target lacks),
    ``not_translated`` (query steps left out, with the reason) and the ``rules`` orderdoc
    replays the translated job with."""

    target: Target
    rules: EngineRules
    script: tuple[str, ...]
    mapping: tuple[str, ...]
    no_equivalent: tuple[str, ...]
    not_translated: tuple[str, ...] = ()


def translate(
    policy: OrderingPolicy,
    window_ns: int | None,
    target: Target,
    *,
    plan: JobPlan | None = None,
    title: str = "an ASA job",
    trigger_ns: int = SECOND,
    watermark_interval_ns: int = 200 * MS,
    input_type: str | None = None,
    output_type: str | None = None,
    flink_version: FlinkVersion = NEWEST_FLINK,
) -> Translation:
    """Translate ``policy`` and the query steps of ``plan`` for ``target`` (``window_ns``: the
    tumbling window the replay measures with, ``None`` when nothing is measured: the rules
    then hold a 1-minute window that no script uses); ``title`` names the job in the script."""
    column = policy.timestamp_by
    if column is None:
        msg = (
            "the job reads its input on arrival time (no TIMESTAMP BY): Flink and Spark would "
            "run it on processing time, with no watermark and nothing dropped as late; "
            "there is nothing to translate"
        )
        raise UsageError(msg)
    plan = plan or plan_job(None, "input", column)
    measured = window_ns is not None
    window_ns = window_ns if window_ns is not None else MINUTE
    ooo = policy.effective_ooo_ns
    late = policy.late_arrival_ns
    mapping = [f"event time: TIMESTAMP BY {column}"]
    rules: EngineRules
    if target is Target.SPARK:
        rules = SparkRules(
            event_time=column, window_ns=window_ns, watermark_delay_ns=ooo, trigger_ns=trigger_ns
        )
        mapping.append(f"watermark delay {format_duration(ooo)}: the out-of-order tolerance")
        mapping.append(
            "no idleness setting: Spark's watermark follows the largest event time over all "
            "partitions, a silent partition does not hold it back"
        )
        mapping.append(f"trigger every {format_duration(trigger_ns)}: one micro-batch each")
    else:
        idle = None if late is None else max(late, MS)
        rules = FlinkRules(
            event_time=column,
            window_ns=window_ns,
            out_of_orderness_ns=ooo,
            idleness_ns=idle,
            watermark_interval_ns=watermark_interval_ns,
            version=flink_version,
        )
        bound = format_duration(ooo)
        mapping.append(
            f"out-of-orderness {bound}: the out-of-order tolerance"
            + (
                f" (WATERMARK ... - {format_duration(ooo + MS)}: SQL's watermark is the "
                "expression itself, forBoundedOutOfOrderness subtracts 1 ms more)"
                if target is Target.FLINK_SQL
                else ""
            )
        )
        mapping.append(
            "no idleness: the late arrival tolerance is unlimited, ASA waits for every partition"
            if idle is None
            else f"idleness {format_duration(idle)}: the late arrival tolerance (ASA stops "
            "waiting for a silent partition after it)"
        )
    not_translated = tuple(f"step {n.step}: {n.reason}" for n in plan.not_translated)
    if target is Target.FLINK_DATASTREAM:
        # the DataStream settings carry no query: --to flink-sql writes the steps
        not_translated = ()
        mapping.append("the query's steps: --to flink-sql writes them (as SQL)")
    header = [
        *mapping,
        *(["not translated:"] if not_translated else []),
        *(f"  {n}" for n in not_translated),
    ]
    if target is Target.SPARK:
        assert isinstance(rules, SparkRules)
        script = spark_script(plan, rules, title=title, header=header, input_type=input_type)
    elif target is Target.FLINK_SQL:
        assert isinstance(rules, FlinkRules)
        script = flink_sql_script(
            plan, rules, title=title, header=header, input_type=input_type, output_type=output_type
        )
    else:
        assert isinstance(rules, FlinkRules)
        script = _datastream(rules)
    if measured:
        mapping.append(f"measured with: tumbling {format_duration(window_ns)} windows")
    no_equivalent = _no_equivalent(policy, target) + _window_differences(plan, target)
    return Translation(target, rules, script, tuple(mapping), no_equivalent, not_translated)


def _window_differences(plan: JobPlan, target: Target) -> tuple[str, ...]:
    """What the translated windows do differently from ASA's."""
    if not plan.steps:
        return ()
    engine = target.engine
    lines = [
        "window bounds: an ASA window holds the events after its start up to and including "
        f"its end; {engine}'s from its start up to but not including its end, so an event "
        "exactly on a boundary is counted in the next window"
    ]
    if any(s.step.window.kind is WindowKind.SESSION for s in plan.steps):
        lines.append(
            "SessionWindow's maximum duration: ASA closes a session at it; "
            f"{engine}'s session windows only close after the timeout without events"
            + (
                "; and Spark's sessions are per group key where ASA's (without OVER "
                "PARTITION BY) are over all events"
                if target is Target.SPARK
                else ""
            )
        )
    if target is Target.SPARK and len(plan.sinks()) > 1:
        lines.append(
            "one job: ASA runs every output in one job; Spark runs one query per output, each "
            "reading the input and keeping its own watermark"
        )
    return tuple(lines)


def _no_equivalent(policy: OrderingPolicy, target: Target) -> tuple[str, ...]:
    """ASA's time-handling features the target has no equivalent for."""
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


@dataclass(frozen=True, slots=True)
class QueryWindow:
    """The window the measurement replays with: a tumbling window of ``size_ns`` taken from
    query step ``step`` (``text`` describes that step's window)."""

    size_ns: int
    step: str
    text: str


def measure_window(plan: JobPlan) -> QueryWindow | None:
    """The window ``--events`` measures with: the first translated step's tumbling window,
    else the first hopping window's hop (an event leaves a hopping window's results when the
    window ending first after it closes, as with a tumbling window of the hop); ``None``
    when the query has neither."""
    steps = [s.step for s in plan.steps]
    for step in steps:
        if step.window.kind is WindowKind.TUMBLING and step.window.offset == 0:
            return QueryWindow(step.window.size, step.name, step.window.describe())
    for step in steps:
        if step.window.kind is WindowKind.HOPPING and step.window.offset == 0:
            text = (
                f"{step.window.describe()}, measured per hop of {format_duration(step.window.hop)}"
            )
            return QueryWindow(step.window.hop, step.name, text)
    return None
