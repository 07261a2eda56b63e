"""One aggregating step evaluated over one placement of the events (as emitted or on time).

The step's input columns are resolved against the replay's outcome frame (ASA column names
are case-insensitive; a dotted name is a column of that name or a field of a record column),
its WHERE filters applied, every event placed in its windows (:mod:`.windows`) and the
aggregates computed per group keys and window, then HAVING.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import polars as pl

from diagnostics.errors import InputError
from diagnostics.impact.conditions import to_expr
from diagnostics.impact.model import Aggregate, AggregateStep, Function, Operand
from diagnostics.impact.windows import END, ID, PART, TIME, assign

#: Event columns the comparison needs besides the step's own.
SYS, APP = "__sys", "__app"


def column_expr(name: str, schema: pl.Schema, step: str) -> pl.Expr:
    """The expression reading column ``name`` of a frame with ``schema``."""
    lowered = {c.lower(): c for c in schema.names()}
    if name in schema.names():
        return pl.col(name)
    if name.lower() in lowered:
        return pl.col(lowered[name.lower()])
    parts = name.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        head = ".".join(parts[:cut]).lower()
        if head in lowered and isinstance(schema[lowered[head]], pl.Struct):
            expr = pl.col(lowered[head])
            for field in parts[cut:]:
                expr = expr.struct.field(field)
            return expr
    shown = ", ".join(c for c in schema.names() if not c.startswith("__"))
    msg = f"query step {step}: column '{name}' is not in the capture (columns: {shown})"
    raise InputError(msg)


def _check_numbers(outcomes: pl.DataFrame, expr: pl.Expr, agg: Aggregate, step: str) -> None:
    """An :class:`InputError` naming the first value of ``agg``'s column that is not a
    number (SUM, AVG, MIN and MAX are computed on numbers)."""
    values = outcomes.select(expr.alias("v"))["v"]
    if values.dtype.is_numeric() or values.dtype == pl.Boolean:
        return
    numbers = values.cast(pl.Float64, strict=False)
    bad = numbers.is_null() & values.is_not_null()
    if bad.any():
        i = int(bad.arg_true()[0])
        msg = (
            f"query step {step}: {agg.describe()}: row {i + 1} of the capture has "
            f"{agg.column} = {values[i]!r}, not a number"
        )
        raise InputError(msg)


def key_names(step: AggregateStep) -> list[str]:
    """The working names of the step's group keys (``__k0``, ``__k1``, ...)."""
    return [f"__k{i}" for i in range(len(step.keys))]


def _value_names(step: AggregateStep) -> dict[Aggregate, str]:
    names: dict[Aggregate, str] = {}
    for agg in (*step.aggregates, *step.hidden):
        names.setdefault(agg, f"__agg{len(names)}")
    return names


def prepare(outcomes: pl.DataFrame, step: AggregateStep) -> pl.LazyFrame:
    """The step's working frame: event id, both times (Int64 ns), flags, keys, the columns
    its aggregates read, its WHERE filters applied."""
    schema = outcomes.schema
    columns: dict[str, pl.Expr] = {}
    for i, key in enumerate(step.keys):
        columns[f"__k{i}"] = column_expr(key, schema, step.name)
    for agg in (*step.aggregates, *step.hidden):
        if agg.column is not None:
            columns.setdefault(f"__c:{agg.column}", column_expr(agg.column, schema, step.name))
    if step.window.partition_key:
        columns[PART] = column_expr(step.window.partition_key, schema, step.name)

    def operand(o: Operand) -> pl.Expr:
        if o.column is not None:
            return column_expr(o.column, schema, step.name)
        return pl.lit(o.literal)

    for agg in (*step.aggregates, *step.hidden):
        if agg.column is not None and agg.function is not Function.COUNT:
            _check_numbers(outcomes, column_expr(agg.column, schema, step.name), agg, step.name)
    frame = outcomes.lazy()
    for condition in step.filters:
        frame = frame.filter(to_expr(condition, operand))
    return frame.select(
        pl.col("event_id").alias(ID),
        pl.col("system_timestamp").dt.epoch("ns").alias(SYS),
        pl.col("application_time").dt.epoch("ns").alias(APP),
        pl.col("late", "early", "out_of_order", "dropped", "invalid_timestamp", "invalid_key"),
        *(expr.alias(name) for name, expr in columns.items()),
    )


def placed(frame: pl.LazyFrame, step: AggregateStep, time: str) -> pl.LazyFrame:
    """(event, window) rows with the events at ``time`` (``SYS`` or ``APP``; events without
    one are left out: dropped, or with no valid application time)."""
    timed = frame.filter(pl.col(time).is_not_null()).with_columns(pl.col(time).alias(TIME))
    return assign(timed, step.window, key_names(step))


def _numeric(expr: pl.Expr) -> pl.Expr:
    return expr.cast(pl.Float64, strict=True)


def _aggregate(agg: Aggregate) -> pl.Expr:
    if agg.column is None:
        return pl.len().cast(pl.Float64)
    col = pl.col(f"__c:{agg.column}")
    if agg.function is Function.COUNT:
        return col.count().cast(pl.Float64)
    value = _numeric(col)
    some = col.count() > 0  # SQL: SUM/AVG/MIN/MAX of no values is NULL
    computed = {
        Function.SUM: value.sum(),
        Function.AVG: value.mean(),
        Function.MIN: value.min(),
        Function.MAX: value.max(),
    }[agg.function]
    return pl.when(some).then(computed)


def results(pairs: pl.LazyFrame, step: AggregateStep) -> pl.LazyFrame:
    """Per group keys and window end: every aggregate (``__agg0``, ...), HAVING applied."""
    names = _value_names(step)
    grouped = pairs.group_by([*key_names(step), END]).agg(
        *(_aggregate(agg).alias(name) for agg, name in names.items())
    )
    if step.having is not None:
        keys = {k.lower(): f"__k{i}" for i, k in enumerate(step.keys)}
        grouped = grouped.filter(to_expr(step.having, lambda o: _having_operand(o, names, keys)))
    return grouped.select([*key_names(step), END, *(names[a] for a in step.aggregates)])


def _having_operand(o: Operand, names: dict[Aggregate, str], keys: dict[str, str]) -> pl.Expr:
    if o.aggregate is not None:
        return pl.col(names[o.aggregate])
    if o.column is not None:  # a GROUP BY key (steps.py checks)
        return pl.col(keys[o.column.lower()])
    return pl.lit(o.literal)


@dataclass(frozen=True, slots=True)
class Placement:
    """One side: (event, window) rows and the step's results."""

    pairs: pl.LazyFrame
    results: pl.LazyFrame


def value_columns(step: AggregateStep) -> Sequence[tuple[Aggregate, str]]:
    """The output aggregates and their working column names."""
    names = _value_names(step)
    return [(agg, names[agg]) for agg in step.aggregates]
