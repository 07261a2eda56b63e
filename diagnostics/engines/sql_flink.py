"""The job as a Flink SQL script for Flink's SQL client (docs/engines.md, "Translating an ASA
job"): the settings, the input table with its watermark, a view per WITH step, an output
table and an ``INSERT INTO`` per windowed output (in one statement set, one job), with
only the connector options left to fill in, each marked ``FILL IN``.

The watermark: Flink SQL's watermark is the ``WATERMARK FOR`` expression itself, where the
DataStream API's ``forBoundedOutOfOrderness(d)`` (what ``replay --rules flink`` models) is
the largest time seen − d − 1 ms; the script subtracts d + 1 ms, so both drop the same
events (Flink's docs: "ascending timestamps", ``- INTERVAL '0.001' SECOND``).
"""

from __future__ import annotations

from collections.abc import Sequence

from diagnostics.durations import MS
from diagnostics.engines.job_plan import JobPlan, View, WindowStep
from diagnostics.engines.join_plan import Join, Reference
from diagnostics.engines.policy import FlinkRules
from diagnostics.engines.sql_text import (
    Column,
    aggregate_sql,
    condition_sql,
    config_duration,
    quoted,
    sql_interval,
)
from diagnostics.impact.model import WindowKind

#: The text every connector option left to the user carries.
FILL_IN = "FILL IN"

#: A connector hint per ASA input or output type (the datasource's type).
_HINTS = {
    "microsoft.servicebus/eventhub": (
        "an event hub is read with the Kafka connector: 'connector' = 'kafka', 'topic' = "
        "'<event hub>', 'properties.bootstrap.servers' = '<namespace>.servicebus.windows.net:"
        "9093', 'properties.security.protocol' = 'SASL_SSL', 'properties.sasl.mechanism' = "
        "'PLAIN', 'properties.sasl.jaas.config' = '...', 'scan.startup.mode' = "
        "'latest-offset'"
    ),
    "microsoft.storage/blob": (
        "Blob storage is read with the filesystem connector: 'connector' = 'filesystem', "
        "'path' = 'abfss://<container>@<account>.dfs.core.windows.net/<folder>'"
    ),
}
_FORMAT = (
    "'format' = 'json', 'json.timestamp-format.standard' = 'ISO-8601' (ASA's JSON times; "
    "TIMESTAMP_LTZ reads the trailing Z)"
)


def connector_block(
    table: str, source_type: str | None, *, output: bool = False, reference: bool = False
) -> list[str]:
    """The ``WITH (...)`` of ``table``: only a marked placeholder and a hint."""
    hint = _HINTS.get((source_type or "").lower())
    what = "output" if output else "reference input" if reference else "input"
    lines = [") WITH (", f"  -- {FILL_IN}: the connector options of the {what} {quoted(table)}"]
    if hint:
        lines.append(f"  --   {hint}")
    lines.append("  --   'format' = 'json'" if output or reference else f"  --   {_FORMAT}")
    lines += [f"  'connector' = '{FILL_IN}'", ");"]
    return lines


def _columns(columns: Sequence[Column], indent: str = "  ") -> list[str]:
    return [f"{indent}{quoted(c.name)} {_type(c)}," for c in columns]


def _type(column: Column) -> str:
    if column.fields:
        inner = ", ".join(f"{quoted(f.name)} {_type(f)}" for f in column.fields)
        return f"ROW<{inner}>"
    assert column.type is not None
    return column.type.value


def _where(step: WindowStep) -> str | None:
    if not step.filters:
        return None
    parts = [condition_sql(c, lambda p: quoted(step.column(p))) for c in step.filters]
    return " AND ".join(f"({p})" if len(parts) > 1 else p for p in parts)


def window_tvf(step: WindowStep, event_time: str) -> str:
    """``TABLE(TUMBLE(TABLE `t`, DESCRIPTOR(`ts`), INTERVAL '1' MINUTE))`` and the others."""
    w = step.step.window
    table = f"TABLE {quoted(step.reads)}"
    time = f"DESCRIPTOR({quoted(step.column(event_time))})"
    offset = f", {sql_interval(w.offset)}" if w.offset else ""
    if w.kind is WindowKind.TUMBLING:
        call = f"TUMBLE({table}, {time}, {sql_interval(w.size)}{offset})"
    elif w.kind is WindowKind.HOPPING:
        call = f"HOP({table}, {time}, {sql_interval(w.hop)}, {sql_interval(w.size)}{offset})"
    else:
        if w.partition_key:
            table += f" PARTITION BY {quoted(step.column(w.partition_key))}"
        call = f"SESSION({table}, {time}, {sql_interval(w.size)})"
    return f"TABLE({call})"


def select_sql(step: WindowStep, event_time: str) -> list[str]:
    """The ``SELECT`` of a window step (no trailing semicolon)."""
    s = step.step
    items = []
    keys = []
    for key, label in zip(s.keys, s.key_labels(), strict=True):
        name = quoted(step.column(key))
        keys.append(name)
        items.append(name if step.column(key) == label else f"{name} AS {quoted(label)}")
    items += ["window_start", "window_end"]

    def column(path: str) -> str:
        return quoted(step.column(path))

    for agg in s.aggregates:
        items.append(f"{aggregate_sql(agg, column)} AS {quoted(step.aggregate_name(agg))}")
    lines = ["SELECT " + ",\n       ".join(items), f"FROM {window_tvf(step, event_time)}"]
    where = _where(step)
    if where:
        lines.append(f"WHERE {where}")
    lines.append("GROUP BY " + ", ".join([*keys, "window_start", "window_end"]))
    if s.having is not None:
        lines.append(f"HAVING {condition_sql(s.having, column)}")
    return lines


def view_sql(view: View, source: str) -> list[str]:
    """``CREATE TEMPORARY VIEW`` of a WITH step that filters and projects the input."""
    if view.columns is None:
        items = "*"
    else:
        items = ", ".join(
            quoted(col) if col == name else f"{quoted(col)} AS {quoted(name)}"
            for name, col in view.columns
        )
    lines = [
        f"CREATE TEMPORARY VIEW {quoted(view.name)} AS",
        f"SELECT {items}",
        f"FROM {quoted(source)}",
    ]
    if view.filters:
        parts = [condition_sql(c, quoted) for c in view.filters]
        lines.append("WHERE " + " AND ".join(f"({p})" if len(parts) > 1 else p for p in parts))
    lines[-1] += ";"
    return lines


def flink_sql_script(
    plan: JobPlan,
    rules: FlinkRules,
    *,
    title: str,
    header: Sequence[str],
    input_type: str | None = None,
    output_type: str | None = None,
) -> tuple[str, ...]:
    """The whole script, one line per item; ``header`` lines are written as comments."""
    lines = [f"-- {title}", *(f"-- {h}" if h else "--" for h in header), ""]
    lines.append("SET 'table.local-time-zone' = 'UTC';")
    lines.append(
        f"SET 'pipeline.auto-watermark-interval' = '{config_duration(rules.watermark_interval_ns)}';"
    )
    if rules.idleness_ns is not None:
        lines.append(
            f"SET 'table.exec.source.idle-timeout' = '{config_duration(rules.idleness_ns)}';"
        )
    ts = quoted(plan.event_time)
    bound = sql_interval(rules.out_of_orderness_ns + MS)
    lines += ["", f"-- the input {quoted(plan.input)}", f"CREATE TABLE {quoted(plan.input)} ("]
    lines += _columns(plan.columns)
    lines.append(f"  WATERMARK FOR {ts} AS {ts} - {bound}")
    lines += connector_block(plan.input, input_type)
    for view in plan.views:
        lines += ["", f"-- WITH step {quoted(view.name)}"]
        lines += [
            f"-- not translated: {quoted(c)}, computed by an expression" for c in view.computed
        ]
        lines += view_sql(view, plan.input)
    for step in plan.steps:
        if step.into is None:
            lines += ["", f"-- WITH step {quoted(step.step.name)}: {step.step.describe()}"]
            lines.append(f"CREATE TEMPORARY VIEW {quoted(step.step.name)} AS")
            body = select_sql(step, plan.event_time)
            lines += [*body[:-1], body[-1] + ";"]
    for ref in plan.references:
        lines += ["", *reference_sql(ref)]
    outputs: dict[str, tuple[Column, ...]] = {}
    inserts: list[str] = []
    for step in plan.sinks():
        assert step.into is not None
        outputs.setdefault(step.into, step.output)
        inserts += ["", f"-- {step.step.describe()}", f"INSERT INTO {quoted(step.into)}"]
        body = select_sql(step, plan.event_time)
        inserts += [*body[:-1], body[-1] + ";"]
    for join in plan.joins:
        j = join.step
        body = join_sql(join, plan)
        if j.into is None:
            lines += ["", f"-- WITH step {quoted(j.name)}: a JOIN with the reference input "
                      f"{quoted(j.reference)}", f"CREATE TEMPORARY VIEW {quoted(j.name)} AS"]  # fmt: skip
            lines += [*body[:-1], body[-1] + ";"]
            continue
        outputs.setdefault(j.into, join.output)
        inserts += ["", f"-- step {quoted(j.name)}: a JOIN with the reference input "
                    f"{quoted(j.reference)}", f"INSERT INTO {quoted(j.into)}"]  # fmt: skip
        inserts += [*body[:-1], body[-1] + ";"]
    for into, columns in outputs.items():
        lines += ["", f"-- the output {quoted(into)}", f"CREATE TABLE {quoted(into)} ("]
        cols = _columns(columns)
        cols[-1] = cols[-1].rstrip(",")
        lines += cols
        lines += connector_block(into, output_type, output=True)
    if not inserts:
        lines += ["", "-- no output to write: see the steps not translated above"]
        return tuple(lines)
    if inserts.count("") == 1:
        return tuple(lines + inserts)
    return (*lines, "", "EXECUTE STATEMENT SET", "BEGIN", *inserts[1:], "END;")


#: The version time a reference table's rows are valid from.
VALID_FROM = "valid_from"


def reference_sql(ref: Reference) -> list[str]:
    """The reference table: its columns, key and version time for the temporal join."""
    names = {c.name.lower() for c in ref.columns}
    valid = VALID_FROM
    while valid in names:
        valid = "_" + valid
    lines = [
        f"-- the reference input {quoted(ref.name)}: ASA joins each event with the reference "
        "data valid at its time;",
        "-- here an event-time temporal join on its key. A snapshot read whole is valid from "
        f"the start of time ({quoted(valid)});",
        "-- for reference data that changes, take each row's time from the data (ASA: the "
        "{date}/{time} of its blob)",
        f"CREATE TABLE {quoted(ref.name)} (",
        *_columns(ref.columns),
        f"  {quoted(valid)} AS TO_TIMESTAMP_LTZ(0, 3),",
        f"  WATERMARK FOR {quoted(valid)} AS {quoted(valid)},",
        f"  PRIMARY KEY ({', '.join(quoted(k) for k in ref.key)}) NOT ENFORCED",
    ]
    return lines + connector_block(ref.name, ref.source_type, reference=True)


def join_sql(join: Join, plan: JobPlan) -> list[str]:
    """The ``SELECT`` of a JOIN step (no trailing semicolon)."""
    j = join.step
    view = next((v for v in plan.views if v.name == j.left), None)
    time = plan.event_time
    if view is not None and view.columns is not None:
        time = next((n for n, c in view.columns if c.lower() == time.lower()), time)
    items = [f"{quoted(path)} AS {quoted(name)}" for path, name in j.items]
    on = [f"{quoted(j.left_alias)}.{quoted(a)} = {quoted(j.reference_alias)}.{quoted(b)}"
          for a, b in j.keys]  # fmt: skip
    on += [condition_sql(c, quoted) for c in j.on]
    lines = [
        "SELECT " + ",\n       ".join(items),
        f"FROM {quoted(j.left)} AS {quoted(j.left_alias)}",
        f"JOIN {quoted(j.reference)} FOR SYSTEM_TIME AS OF "
        f"{quoted(j.left_alias)}.{quoted(time)} AS {quoted(j.reference_alias)}",
        "  ON " + " AND ".join(on),
    ]
    if j.filters:
        parts = [condition_sql(c, quoted) for c in j.filters]
        lines.append("WHERE " + " AND ".join(f"({p})" if len(parts) > 1 else p for p in parts))
    return lines
