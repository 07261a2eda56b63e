"""What of an ASA job's query the translations write, read with the query parser that
``impact`` replays with (:func:`diagnostics.impact.steps.read_steps`): the input table and
the columns the query uses (typed from a capture when one is given), each ``WITH`` step that
filters and projects as a view, each windowed aggregate (tumbling, hopping or session
window, ``COUNT``/``SUM``/``AVG``/``MIN``/``MAX``, ``WHERE``, ``HAVING``) as a view (a
``WITH`` step) or an output, and every other step with the reason it is not translated.
Engine-neutral: :mod:`diagnostics.engines.sql_flink` and :mod:`diagnostics.engines.script_spark`
write it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

import polars as pl

from diagnostics.engines.join_plan import (
    Join,
    JoinStep,
    Reference,
    compared_type,
    input_column,
    plan_joins,
    reference_tables,
)
from diagnostics.engines.sql_text import Column, ColumnType
from diagnostics.impact.conditions import aggregates_in, columns_in
from diagnostics.impact.model import (
    Aggregate,
    AggregateStep,
    Condition,
    Function,
    Projection,
    QuerySteps,
    WindowKind,
)
from diagnostics.impact.steps import read_steps
from diagnostics.jobdef.query import parse_query

#: The output columns a window step adds beside its keys and aggregates.
WINDOW_START, WINDOW_END = "window_start", "window_end"
_PLAIN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True, slots=True)
class View:
    """A WITH step that filters and projects the input: ``columns`` (its name, the input
    column) and its filters on the input's columns."""

    name: str
    columns: tuple[tuple[str, str], ...] | None
    filters: tuple[Condition, ...]
    computed: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class WindowStep:
    """A windowed aggregate: the step, the table it reads (the input or a view) and how that
    table names each input column, its own filters (the view's are applied by the view),
    the output's columns, and the output it writes into (``None``: a WITH step, a view)."""

    step: AggregateStep
    reads: str
    names: Mapping[str, str]
    filters: tuple[Condition, ...]
    output: tuple[Column, ...]
    into: str | None

    def column(self, input_column: str) -> str:
        """The name of ``input_column`` in the table the step reads."""
        return self.names.get(input_column, input_column)

    def aggregate_name(self, agg: Aggregate) -> str:
        """The output column of ``agg``: its alias, or ``count``/``avg_value`` for an
        aggregate written without one."""
        if _PLAIN.match(agg.name):
            return agg.name
        return f"{agg.function.value.lower()}_{(agg.column or 'all').replace('.', '_')}"


@dataclass(frozen=True, slots=True)
class NotTranslated:
    """A step the translation leaves out, and why."""

    step: str
    reason: str


@dataclass(frozen=True, slots=True)
class JobPlan:
    """The job as the translations write it."""

    input: str
    event_time: str
    columns: tuple[Column, ...]
    views: tuple[View, ...]
    steps: tuple[WindowStep, ...]
    not_translated: tuple[NotTranslated, ...]
    joins: tuple[Join, ...] = ()
    references: tuple[Reference, ...] = ()

    def sinks(self) -> list[WindowStep]:
        """The steps written into an output, in query order."""
        return [s for s in self.steps if s.into is not None]


def _reason(text: str) -> str:
    """A replay's reason for leaving a step out, in the translation's words."""
    text = text.replace("is not replayed", "is not translated")
    return text.replace("; events only", "").replace(" (events only)", "")


def plan_job(
    query: str | None,
    input_name: str,
    event_time: str,
    schema: Mapping[str, pl.DataType] | None = None,
    references: Mapping[str, str | None] | None = None,
) -> JobPlan:
    """The plan of ``query`` over ``input_name`` (its event time ``event_time``); ``schema``:
    a capture's columns and types, to type the input table; ``references``: the job's
    reference inputs (name -> datasource type), which a JOIN step may read."""
    if query is None:
        return JobPlan(
            input_name, event_time, (Column(event_time, ColumnType.TIMESTAMP),), (), (), ()
        )
    found: QuerySteps = read_steps(query, input_name)
    with_steps = {s.lower() for s in parse_query(query).steps}
    views = tuple(_view(p, event_time) for p in found.projections)
    by_name = {v.name.lower(): v for v in views}
    projections = {p.name.lower(): p for p in found.projections}
    steps: list[WindowStep] = []
    skipped = [NotTranslated(s.name, _reason(s.reason)) for s in found.skipped]
    for step in found.steps:
        if step.window.kind is WindowKind.SLIDING:
            skipped.append(
                NotTranslated(
                    step.name,
                    f"{step.window.describe()} has no equivalent: ASA emits a sliding window "
                    "whenever an event enters or leaves it; Flink's and Spark's windows are "
                    "emitted at fixed times",
                )
            )
            continue
        view = by_name.get((step.reads or "").lower())
        own = step.filters
        if view is not None:
            own = step.filters[len(projections[view.name.lower()].filters) :]
        names = _names(view)
        into = None if step.name.lower() in with_steps else step.name
        steps.append(WindowStep(step, view.name if view else input_name, names, own, (), into))
    joins: list[JoinStep] = []
    if any(n.reason.startswith("JOIN") for n in skipped):
        kept, joins = plan_joins(
            query, input_name, views, references or {}, [(n.step, n.reason) for n in skipped]
        )
        skipped = [NotTranslated(step, reason) for step, reason in kept]
    left = [(j, c) for j in joins for c in j.left_columns()]
    types = _types(
        found, views, steps, event_time, schema or {}, [input_column(j, c, views) for j, c in left]
    )
    steps = [_with_output(s, types) for s in steps]
    tables, planned = reference_tables(joins, references or {}, views, types)
    order = {name.lower(): i for i, name in enumerate(_statement_order(query))}
    skipped.sort(key=lambda n: order.get(n.step.lower(), len(order)))
    return JobPlan(
        input_name, event_time, _tree(types), views, tuple(steps), tuple(skipped), planned, tables
    )


def _statement_order(query: str) -> list[str]:
    """Step names in the order the query writes them (WITH steps and INTO outputs)."""
    parsed = parse_query(query)
    names = list(parsed.steps)
    names += re.findall(r"(?i)\bINTO\s+\[?([^\]\s]+)\]?", query)
    return names


def _view(p: Projection, event_time: str) -> View:
    if p.columns is None:
        return View(p.name, None, p.filters)
    columns = tuple((name, col) for name, col in p.columns if col is not None)
    computed = tuple(name for name, col in p.columns if col is None)
    if not any(col.lower() == event_time.lower() for _, col in columns):
        taken = {name.lower() for name, _ in columns}
        if event_time.lower() not in taken:
            columns += ((event_time, event_time),)
    return View(p.name, columns, p.filters, computed)


def _names(view: View | None) -> dict[str, str]:
    """Input column -> its name in ``view`` (the first name that selects it)."""
    if view is None or view.columns is None:
        return {}
    names: dict[str, str] = {}
    for name, col in view.columns:
        names.setdefault(col, name)
        names.setdefault(col.lower(), name)
    return names


def _types(
    found: QuerySteps,
    views: tuple[View, ...],
    steps: list[WindowStep],
    event_time: str,
    schema: Mapping[str, pl.DataType],
    joined: list[str],
) -> dict[str, ColumnType]:
    """Every input column the translated steps read, with its type: the capture's where it
    says more than text, else what the query does with it (summed or compared with a
    number: DOUBLE; otherwise STRING)."""
    guessed: dict[str, ColumnType] = {event_time: ColumnType.TIMESTAMP}

    def note(column: str, kind: ColumnType) -> None:
        if guessed.get(column) in (None, ColumnType.STRING):
            guessed[column] = kind

    def conditions(conds: tuple[Condition, ...]) -> None:
        for cond in conds:
            for column in columns_in(cond):
                note(column, compared_type(cond, column))
            for agg in aggregates_in(cond):
                aggregate(agg)

    def aggregate(agg: Aggregate) -> None:
        if agg.column is not None:
            numeric = agg.function is not Function.COUNT
            note(agg.column, ColumnType.DOUBLE if numeric else ColumnType.STRING)

    for view in views:
        for _, column in view.columns or ():
            note(column, ColumnType.STRING)
        conditions(view.filters)
    for ws in steps:
        for key in ws.step.keys:
            note(key, ColumnType.STRING)
        for agg in (*ws.step.aggregates, *ws.step.hidden):
            aggregate(agg)
        conditions(ws.step.filters)
        if ws.step.window.partition_key:
            note(ws.step.window.partition_key, ColumnType.STRING)
    for column in joined:
        note(column, ColumnType.STRING)
    lowered = {name.lower(): dtype for name, dtype in schema.items()}
    out: dict[str, ColumnType] = {}
    for column, kind in guessed.items():
        dtype = lowered.get(column.lower())
        captured = None if dtype is None else _from_polars(dtype)
        out[column] = kind if captured in (None, ColumnType.STRING) else captured
    out[event_time] = ColumnType.TIMESTAMP
    return out


def _from_polars(dtype: pl.DataType) -> ColumnType | None:
    if dtype.is_integer():
        return ColumnType.BIGINT
    if dtype.is_float() or dtype.is_decimal():
        return ColumnType.DOUBLE
    if dtype == pl.Boolean:
        return ColumnType.BOOLEAN
    if dtype.is_temporal():
        return ColumnType.TIMESTAMP
    if dtype == pl.String:
        return ColumnType.STRING
    return None


def _tree(types: Mapping[str, ColumnType]) -> tuple[Column, ...]:
    """The input table's columns: a dotted path becomes a field of a record column."""
    root: dict[str, object] = {}
    for path, kind in types.items():
        node = root
        parts = path.split(".")
        for part in parts[:-1]:
            child = node.setdefault(part, {})
            node = child if isinstance(child, dict) else {}
        node.setdefault(parts[-1], kind)

    def build(node: dict[str, object]) -> tuple[Column, ...]:
        return tuple(
            Column(name, None, build(value)) if isinstance(value, dict) else Column(name, value)  # type: ignore[arg-type]
            for name, value in node.items()
        )

    return build(root)


def _with_output(ws: WindowStep, types: Mapping[str, ColumnType]) -> WindowStep:
    step = ws.step
    out = [
        Column(label, types.get(key, ColumnType.STRING))
        for key, label in zip(step.keys, step.key_labels(), strict=True)
    ]
    out += [
        Column(WINDOW_START, ColumnType.WINDOW_TIME),
        Column(WINDOW_END, ColumnType.WINDOW_TIME),
    ]
    for agg in step.aggregates:
        if agg.function is Function.COUNT:
            kind = ColumnType.BIGINT
        elif agg.function is Function.AVG:
            kind = ColumnType.DOUBLE
        else:
            kind = types.get(agg.column or "", ColumnType.DOUBLE)
        out.append(Column(ws.aggregate_name(agg), kind))
    return WindowStep(step, ws.reads, ws.names, ws.filters, tuple(out), ws.into)
