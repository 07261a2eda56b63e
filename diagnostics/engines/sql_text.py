"""Text shared by the Flink SQL and PySpark translations: quoted identifiers, literals,
WHERE/HAVING conditions, column types and durations in each engine's syntax.

Both Flink SQL and Spark SQL quote identifiers with backticks (a backtick inside doubled) and
write strings in single quotes (a quote inside doubled), so one rendering serves both; every
identifier is quoted, whatever it holds, so a name like ``telemetry-eh`` or a reserved word
(``value``, ``timestamp``) parses.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

from diagnostics.durations import DAY, HOUR, MINUTE, MS, SECOND
from diagnostics.impact.model import Aggregate, Comparison, Condition, Function, Logic, Operand


class ColumnType(StrEnum):
    """The column types a translated table declares (Flink SQL names)."""

    STRING = "STRING"
    DOUBLE = "DOUBLE"
    BIGINT = "BIGINT"
    BOOLEAN = "BOOLEAN"
    TIMESTAMP = "TIMESTAMP_LTZ(3)"
    #: a window's start or end (UTC, as the window functions give them)
    WINDOW_TIME = "TIMESTAMP(3)"

    @property
    def spark(self) -> str:
        """The PySpark type constructor (``pyspark.sql.types``)."""
        return {
            ColumnType.STRING: "StringType()",
            ColumnType.DOUBLE: "DoubleType()",
            ColumnType.BIGINT: "LongType()",
            ColumnType.BOOLEAN: "BooleanType()",
            ColumnType.TIMESTAMP: "TimestampType()",
            ColumnType.WINDOW_TIME: "TimestampType()",
        }[self]


@dataclass(frozen=True, slots=True)
class Column:
    """A column of a table: its name and type (``fields``: a record's fields)."""

    name: str
    type: ColumnType | None
    fields: tuple[Column, ...] = ()


def quoted(name: str) -> str:
    """```name``` (a dotted path quoted part by part: ```a`.`b```)."""
    return ".".join("`" + part.replace("`", "``") + "`" for part in name.split("."))


def string_literal(text: str) -> str:
    """``'text'`` with single quotes doubled."""
    return "'" + text.replace("'", "''") + "'"


def number_literal(value: float) -> str:
    """``5``, ``2.5``, ``-1``: whole numbers without a fraction."""
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def aggregate_sql(agg: Aggregate, column: Callable[[str], str]) -> str:
    """``COUNT(*)``, ``AVG(CAST(`v` AS DOUBLE))`` (ASA's AVG is a float; Flink's AVG of whole
    numbers is a whole number), ``SUM(`v`)``."""
    if agg.column is None:
        return "COUNT(*)"
    inner = column(agg.column)
    if agg.function is Function.AVG:
        inner = f"CAST({inner} AS DOUBLE)"
    return f"{agg.function.value}({inner})"


def condition_sql(
    condition: Condition | Comparison,
    column: Callable[[str], str],
    aggregate: Callable[[Aggregate], str] | None = None,
) -> str:
    """A WHERE or HAVING condition as SQL: ``column`` renders a column path, ``aggregate`` an
    aggregate of HAVING."""

    def operand(o: Operand) -> str:
        if o.column is not None:
            return column(o.column)
        if o.aggregate is not None:
            render = aggregate or (lambda a: aggregate_sql(a, column))
            return render(o.aggregate)
        if isinstance(o.literal, str):
            return string_literal(o.literal)
        assert o.literal is not None
        return number_literal(o.literal)

    if isinstance(condition, Comparison):
        left = operand(condition.left)
        if condition.op is None or condition.right is None:
            return f"{left} IS {'NOT ' if condition.negated else ''}NULL"
        return f"{left} {condition.op.value} {operand(condition.right)}"
    parts = [condition_sql(p, column, aggregate) for p in condition.parts]
    joiner = " AND " if condition.logic is Logic.AND else " OR "
    text = joiner.join(f"({p})" if " AND " in p or " OR " in p else p for p in parts)
    return f"NOT ({text})" if condition.negated else text


_UNITS = ((DAY, "DAY"), (HOUR, "HOUR"), (MINUTE, "MINUTE"), (SECOND, "SECOND"))


def sql_interval(ns: int) -> str:
    """Flink SQL's interval literal in the largest whole unit: ``INTERVAL '5' MINUTE``,
    ``INTERVAL '90' SECOND``, ``INTERVAL '0.001' SECOND``; past 99 of the unit with its leading
    precision (``INTERVAL '150' MINUTE(3)``: the default allows two digits); a negative one
    keeps its sign."""
    if ns == 0:
        return "INTERVAL '0' SECOND"
    sign = "-" if ns < 0 else ""
    ns = abs(ns)
    for size, unit in _UNITS:
        if ns and ns % size == 0:
            return _interval(f"{sign}{ns // size}", unit, ns // size)
    whole = ns // SECOND
    return _interval(f"{sign}{ns / SECOND:.3f}", "SECOND", whole)


def _interval(text: str, unit: str, whole: int) -> str:
    digits = len(str(whole))
    return f"INTERVAL '{text}' {unit}" + (f"({digits})" if digits > 2 else "")


def spark_interval(ns: int) -> str:
    """A Spark interval string: ``5 seconds``, ``500 milliseconds``, ``1 minute``."""
    if ns == 0:
        return "0 seconds"
    for size, unit in ((DAY, "day"), (HOUR, "hour"), (MINUTE, "minute"), (SECOND, "second")):
        if ns % size == 0:
            count = ns // size
            return f"{count} {unit}{'' if count == 1 else 's'}"
    count = ns // MS
    return f"{count} millisecond{'' if count == 1 else 's'}"


def config_duration(ns: int) -> str:
    """A Flink configuration duration: ``5 s``, ``200 ms``."""
    return f"{ns // SECOND} s" if ns % SECOND == 0 else f"{ns // MS} ms"


def java_duration(ns: int) -> str:
    """``Duration.ofSeconds(5)``, ``Duration.ofMillis(200)``, ``Duration.ofMinutes(1)``."""
    if ns % MINUTE == 0 and ns:
        return f"Duration.ofMinutes({ns // MINUTE})"
    if ns % SECOND == 0:
        return f"Duration.ofSeconds({ns // SECOND})"
    return f"Duration.ofMillis({ns // MS})"
