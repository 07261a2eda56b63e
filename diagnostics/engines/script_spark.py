"""The job as a PySpark Structured Streaming script (docs/engines.md, "Translating an ASA
job"): the input read with its schema and ``withWatermark``, a function per WITH step and per
windowed aggregate, one streaming query per output in append mode, with only the connector
options left to fill in (``SOURCE``, ``SINKS``, ``CHECKPOINTS``, each marked ``FILL IN``).

The script is plain Python that ``spark-submit`` runs; ``start(spark)`` starts the queries
and returns them (a test or a notebook can call it after setting the options).
"""

from __future__ import annotations

import keyword
import re
from collections.abc import Sequence

from diagnostics.engines.job_plan import JobPlan, View, WindowStep
from diagnostics.engines.join_plan import Join
from diagnostics.engines.policy import SparkRules
from diagnostics.engines.sql_text import (
    Column,
    aggregate_sql,
    condition_sql,
    quoted,
    spark_interval,
)
from diagnostics.impact.model import Aggregate, WindowKind

FILL_IN = "FILL IN"

_HINTS = {
    "microsoft.servicebus/eventhub": (
        'an event hub through its Kafka endpoint: "kafka" with "kafka.bootstrap.servers": '
        '"<namespace>.servicebus.windows.net:9093", "subscribe": "<event hub>", '
        '"kafka.security.protocol": "SASL_SSL", "kafka.sasl.mechanism": "PLAIN", '
        '"kafka.sasl.jaas.config": "..."'
    ),
    "microsoft.storage/blob": (
        'Blob storage as files: "json" with "path": '
        '"abfss://<container>@<account>.dfs.core.windows.net/<folder>"'
    ),
}


def function_name(step: str) -> str:
    """A Python name for a step: ``step_device_stats``."""
    return "step_" + re.sub(r"\W+", "_", step).strip("_").lower()


def variable(step: str) -> str:
    """The Python variable holding a WITH step's frame: ``readings``; ``view_...`` where the
    name would be a keyword, start with a digit or clash with the script's own names."""
    name = function_name(step).removeprefix("step_")
    taken = {"events", "spark", "F", "frame", "name", "output", "sink"}
    if keyword.iskeyword(name) or not name.isidentifier() or name in taken:
        name = f"view_{name}"
    return name


def query_name(output: str) -> str:
    """The streaming query's name (and a memory sink's table): ``device_stats``."""
    return re.sub(r"\W+", "_", output).strip("_").lower() or "output"


def _schema(columns: Sequence[Column], indent: str) -> list[str]:
    lines = []
    for c in columns:
        if c.fields:
            inner = _schema(c.fields, indent + "    ")
            lines.append(f"{indent}StructField({c.name!r}, StructType([")
            lines += inner
            lines.append(f"{indent}])),")
        else:
            assert c.type is not None
            lines.append(f"{indent}StructField({c.name!r}, {c.type.spark}),")
    return lines


def _expr(text: str) -> str:
    return f"F.expr({text!r})"


def _view(view: View) -> list[str]:
    lines = [f"def {function_name(view.name)}(frame: DataFrame) -> DataFrame:"]
    lines.append(f'    """WITH step {quoted(view.name)}."""')
    body = "frame"
    for cond in view.filters:
        body += f".where({_expr(condition_sql(cond, quoted))})"
    if view.columns is not None:
        items = [
            quoted(col) if col == name else f"{quoted(col)} AS {quoted(name)}"
            for name, col in view.columns
        ]
        body += ".selectExpr(" + ", ".join(repr(i) for i in items) + ")"
    lines.append(f"    return {body}")
    return lines


def _window(step: WindowStep, event_time: str) -> str:
    w = step.step.window
    ts = f"F.col({quoted(step.column(event_time))!r})"
    if w.kind is WindowKind.SESSION:
        return f'F.session_window({ts}, "{spark_interval(w.size)}").alias("window")'
    size = spark_interval(w.size)
    every = w.hop if w.kind is WindowKind.HOPPING else w.size
    start = w.offset % every
    hop = f', "{spark_interval(every)}"' if w.kind is WindowKind.HOPPING or start else ""
    offset = f', "{spark_interval(start)}"' if start else ""
    return f'F.window({ts}, "{size}"{hop}{offset}).alias("window")'


def _aggregate_step(step: WindowStep, event_time: str, reads: str, name: str) -> list[str]:
    s = step.step
    lines = [f"def {name}({reads}: DataFrame) -> DataFrame:"]
    lines.append(f'    """{s.describe()}."""')

    def column(path: str) -> str:
        return quoted(step.column(path))

    chain = [reads]
    for cond in step.filters:
        chain.append(f".where({_expr(condition_sql(cond, column))})")
    keys = [
        f"{_expr(column(k))}.alias({label!r})"
        for k, label in zip(s.keys, s.key_labels(), strict=True)
    ]
    chain.append(f".groupBy({', '.join([*keys, _window(step, event_time)])})")
    names: dict[tuple[object, object], str] = {}
    aggs = []
    for agg in s.aggregates:
        name = step.aggregate_name(agg)
        names.setdefault((agg.function, agg.column), name)
        aggs.append(f"{_expr(aggregate_sql(agg, column))}.alias({name!r})")
    hidden = []
    for i, agg in enumerate(s.hidden):
        if (agg.function, agg.column) not in names:
            names[(agg.function, agg.column)] = f"__having_{i}"
            hidden.append(f"__having_{i}")
            aggs.append(f"{_expr(aggregate_sql(agg, column))}.alias('__having_{i}')")
    chain.append(f".agg({', '.join(aggs)})")
    if s.having is not None:
        labels = dict(zip(s.keys, s.key_labels(), strict=True))

        def named(agg: Aggregate) -> str:
            return quoted(names[(agg.function, agg.column)])

        having = condition_sql(s.having, lambda p: quoted(labels.get(p, p)), named)
        chain.append(f".where({_expr(having)})")
    out = [repr(label) for label in s.key_labels()]
    out += [
        'F.col("window.start").alias("window_start")',
        'F.col("window.end").alias("window_end")',
    ]
    out += [repr(step.aggregate_name(a)) for a in s.aggregates]
    chain.append(f".select({', '.join(out)})")
    lines.append("    return (")
    lines += [f"        {part}" for part in chain]
    lines.append("    )")
    return lines


def spark_script(
    plan: JobPlan,
    rules: SparkRules,
    *,
    title: str,
    header: Sequence[str],
    input_type: str | None = None,
) -> tuple[str, ...]:
    """The whole script, one line per item; ``header`` lines go into its docstring."""
    lines = ['"""' + title, "", *header, '"""', ""]
    lines += [
        "from pyspark.sql import DataFrame, SparkSession",
        "from pyspark.sql import functions as F",
        "from pyspark.sql.streaming import StreamingQuery",
        "from pyspark.sql.types import (",
        "    BooleanType, DoubleType, LongType, StringType, StructField, StructType, TimestampType,",
        ")",
        "",
        f"# ---- {FILL_IN}: the connector options, the only thing left to fill in ----",
        f"#: the input {quoted(plan.input)}: its format and options"
        + (
            f"; {_HINTS[input_type.lower()]}" if input_type and input_type.lower() in _HINTS else ""
        ),
        f'SOURCE = {{"format": "{FILL_IN}", "options": {{}}}}',
        "#: each output: its format and options",
        "SINKS = {",
    ]
    joins = [j for j in plan.joins if j.step.into is not None]
    for into in dict.fromkeys([*(s.into for s in plan.sinks()), *(j.step.into for j in joins)]):
        lines.append(f'    {into!r}: {{"format": "{FILL_IN}", "options": {{}}}},')
    lines += [
        "}",
        *_reference_options(plan),
        "#: a folder for the queries' checkpoints (one subfolder per output)",
        f'CHECKPOINTS = "{FILL_IN}"',
        "# ---------------------------------------------------------------------------",
        "",
        "#: the processing-time trigger: a micro-batch every so often",
        f'TRIGGER = "{spark_interval(rules.trigger_ns)}"',
        f"#: the watermark delay: withWatermark({plan.event_time!r}, ...)",
        f'WATERMARK_DELAY = "{spark_interval(rules.watermark_delay_ns)}"',
        "",
        "SCHEMA = StructType([",
        *_schema(plan.columns, "    "),
        "])",
        "",
        "",
        "def read_input(spark: SparkSession) -> DataFrame:",
        f'    """The input {quoted(plan.input)} with its event time and watermark."""',
        '    reader = spark.readStream.format(SOURCE["format"]).options(**SOURCE["options"])',
        '    if SOURCE["format"] == "kafka":  # the JSON body of each message',
        '        body = F.from_json(F.col("value").cast("string"), SCHEMA).alias("e")',
        '        frame = reader.load().select(body).select("e.*")',
        "    else:",
        "        frame = reader.schema(SCHEMA).load()",
        f"    return frame.withWatermark({plan.event_time!r}, WATERMARK_DELAY)",
    ]
    for view in plan.views:
        lines += ["", "", *_view(view)]
    functions: list[str] = []
    for step in plan.sinks():
        arg = "events" if step.reads == plan.input else variable(step.reads)
        name = function_name(step.step.name)
        while name in functions:
            name += "_"
        functions.append(name)
        lines += ["", "", *_aggregate_step(step, plan.event_time, arg, name)]
    if plan.references:
        lines += ["", "", *_reference_reader(plan)]
    for join in joins:
        name = function_name(join.step.name)
        while name in functions:
            name += "_"
        functions.append(name)
        lines += ["", "", *_join_step(join, plan, name)]
    lines += [
        "",
        "",
        "def write(frame: DataFrame, output: str, name: str) -> StreamingQuery:",
        '    """One streaming query writing ``frame`` to ``output``, in append mode: each window',
        '    once, when the watermark has passed its end."""',
        "    sink = SINKS[output]",
        "    return (",
        '        frame.writeStream.format(sink["format"]).options(**sink["options"])',
        '        .outputMode("append")',
        "        .trigger(processingTime=TRIGGER)",
        '        .option("checkpointLocation", f"{CHECKPOINTS}/{name}")',
        "        .queryName(name)",
        "        .start()",
        "    )",
        "",
        "",
        "def start(spark: SparkSession) -> list[StreamingQuery]:",
        '    """Start one query per output; each reads the input on its own."""',
        "    events = read_input(spark)",
    ]
    for view in plan.views:
        lines.append(f"    {variable(view.name)} = {function_name(view.name)}(events)")
    for ref in plan.references:
        lines.append(f"    {_ref_variable(ref.name)} = read_reference(spark, {ref.name!r})")
    lines.append("    return [")
    taken: set[str] = set()
    sinks = plan.sinks()
    for step, fn in zip(sinks, functions[: len(sinks)], strict=True):
        arg = "events" if step.reads == plan.input else variable(step.reads)
        assert step.into is not None
        name = query_name(step.into)
        while name in taken:
            name += "_"
        taken.add(name)
        lines.append(f"        write({fn}({arg}), {step.into!r}, {name!r}),")
    for join, fn in zip(joins, functions[len(sinks) :], strict=True):
        j = join.step
        assert j.into is not None
        left = "events" if j.left == plan.input else variable(j.left)
        name = query_name(j.into)
        while name in taken:
            name += "_"
        taken.add(name)
        lines.append(
            f"        write({fn}({left}, {_ref_variable(j.reference)}), {j.into!r}, {name!r}),"
        )
    lines += [
        "    ]",
        "",
        "",
        "def main() -> None:",
        f"    spark = SparkSession.builder.appName({'asa-' + plan.input!r}).getOrCreate()",
        '    spark.conf.set("spark.sql.session.timeZone", "UTC")',
        "    start(spark)",
        "    spark.streams.awaitAnyTermination()",
        "",
        "",
        'if __name__ == "__main__":',
        "    main()",
    ]
    return tuple(lines)


def _ref_variable(name: str) -> str:
    return "reference_" + re.sub(r"\W+", "_", name).strip("_").lower()


def _reference_options(plan: JobPlan) -> list[str]:
    if not plan.references:
        return []
    lines = ["#: each reference input: its format and options (read as a static DataFrame)"]
    lines.append("REFERENCES = {")
    for ref in plan.references:
        hint = _HINTS.get((ref.source_type or "").lower())
        lines.append(f"    # {hint}" if hint else "    # its format and options")
        lines.append(f'    {ref.name!r}: {{"format": "{FILL_IN}", "options": {{}}}},')
    return [*lines, "}"]


def _reference_reader(plan: JobPlan) -> list[str]:
    lines = ["REFERENCE_SCHEMAS = {"]
    for ref in plan.references:
        lines.append(f"    {ref.name!r}: StructType([")
        lines += _schema(ref.columns, "        ")
        lines.append("    ]),")
    return [
        *lines,
        "}",
        "",
        "",
        "def read_reference(spark: SparkSession, name: str) -> DataFrame:",
        '    """A reference input, read whole: a stream-static join looks each event up in it."""',
        "    spec = REFERENCES[name]",
        '    reader = spark.read.format(spec["format"]).options(**spec["options"])',
        "    return reader.schema(REFERENCE_SCHEMAS[name]).load()",
    ]


def _join_step(join: Join, plan: JobPlan, name: str) -> list[str]:
    """A JOIN with a reference input: a stream-static inner join."""
    j = join.step
    left = "events" if j.left == plan.input else variable(j.left)
    ref = _ref_variable(j.reference)
    on = [f"{quoted(j.left_alias)}.{quoted(a)} = {quoted(j.reference_alias)}.{quoted(b)}"
          for a, b in j.keys]  # fmt: skip
    on += [condition_sql(c, quoted) for c in j.on]
    chain = [
        f"{left}.alias({j.left_alias!r})",
        f'.join({ref}.alias({j.reference_alias!r}), {_expr(" AND ".join(on))}, "inner")',
    ]
    for cond in j.filters:
        chain.append(f".where({_expr(condition_sql(cond, quoted))})")
    items = ", ".join(f"{_expr(quoted(path))}.alias({out!r})" for path, out in j.items)
    chain.append(f".select({items})")
    return [
        f"def {name}({left}: DataFrame, {ref}: DataFrame) -> DataFrame:",
        f'    """step {quoted(j.name)}: a JOIN with the reference input {quoted(j.reference)}."""',
        "    return (",
        *(f"        {part}" for part in chain),
        "    )",
    ]
