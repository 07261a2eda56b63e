"""The SQL that DuckDB runs for a rule, built from the checked rule (never from raw text).

Identifiers are the table's known columns (checked when the rules load) and are quoted;
``where`` is the SQL sqlglot re-generated from the checked expression, with params bound as
literals. Times are epoch microseconds; ``e`` is the epoch minute at which a row enters the
window (its minute + 1).
"""

from __future__ import annotations

from diagnostics.durations import MINUTE
from diagnostics.rules.model import Aggregate, AggregateFn, Rule

_US = 1_000  # nanoseconds per microsecond
STEP_US = MINUTE // _US


def quote(name: str) -> str:
    """Quote a (validated) identifier for DuckDB."""
    return '"' + name.replace('"', '""') + '"'


def partials(agg: Aggregate) -> dict[str, tuple[str, str]]:
    """Per-bucket partial aggregates: name -> (bucket SQL, window combiner)."""
    cols = [quote(c) for c in agg.columns]
    fn = agg.fn
    if fn in (AggregateFn.COUNT, AggregateFn.RATE) and not cols:
        return {"n": ("count(*)", "sum")}
    if fn in (AggregateFn.SUM, AggregateFn.RATE):
        return {"s": (f"sum({cols[0]})", "sum")}
    if fn is AggregateFn.MAX:
        return {"mx": (f"max({cols[0]})", "max")}
    if fn is AggregateFn.MIN:
        return {"mn": (f"min({cols[0]})", "min")}
    if fn is AggregateFn.AVG:
        return {"s": (f"sum({cols[0]})", "sum"), "nx": (f"count({cols[0]})", "sum")}
    return {"sa": (f"sum({cols[0]})", "sum"), "sb": (f"sum({cols[1]})", "sum")}


def value_sql(agg: Aggregate, window_seconds: float | None) -> str:
    fn = agg.fn
    per = window_seconds or 1.0
    exprs = {
        AggregateFn.COUNT: "coalesce(n, 0)",
        AggregateFn.SUM: "coalesce(s, 0)",
        AggregateFn.MAX: "mx",
        AggregateFn.MIN: "mn",
        AggregateFn.AVG: "s / nullif(nx, 0)",
        AggregateFn.RATIO: "sa / nullif(sb, 0)",
    }
    if fn is AggregateFn.RATE:
        inner = "coalesce(s, 0)" if agg.columns else "coalesce(n, 0)"
        return f"CAST({inner} AS DOUBLE) / {per!r}"
    return f"CAST({exprs[fn]} AS DOUBLE)"


def weight_sql(agg: Aggregate) -> dict[str, str | None]:
    """Per-row weight of each partial (``None``: the row counts 1)."""
    cols = [f"src.{quote(c)}" for c in agg.columns]
    fn = agg.fn
    if fn in (AggregateFn.COUNT, AggregateFn.RATE) and not cols:
        return {"n": None}
    if fn in (AggregateFn.SUM, AggregateFn.RATE):
        return {"s": f"coalesce(CAST({cols[0]} AS DOUBLE), 0)"}
    if fn is AggregateFn.MAX:
        return {"mx": f"CAST({cols[0]} AS DOUBLE)"}
    if fn is AggregateFn.MIN:
        return {"mn": f"CAST({cols[0]} AS DOUBLE)"}
    if fn is AggregateFn.AVG:
        return {
            "s": f"coalesce(CAST({cols[0]} AS DOUBLE), 0)",
            "nx": f"CAST({cols[0]} IS NOT NULL AS DOUBLE)",
        }
    return {
        "sa": f"coalesce(CAST({cols[0]} AS DOUBLE), 0)",
        "sb": f"coalesce(CAST({cols[1]} AS DOUBLE), 0)",
    }


def _filtered(rule: Rule) -> str:
    assert rule.time_column is not None
    where = f" AND ({rule.where_sql})" if rule.where_sql else ""
    return f"SELECT * FROM t_{rule.table.value} WHERE {quote(rule.time_column)} IS NOT NULL{where}"


def groups_sql(rule: Rule) -> str:
    """The distinct groups of a windowed rule, numbered from 0 as ``gid`` in the order of their
    values (nulls last), so that alerts come out in the same order whatever the row order."""
    cols = ", ".join(quote(g) for g in rule.group_by)
    order = ", ".join(f"{quote(g)} ASC NULLS LAST" for g in rule.group_by)
    return (
        f"SELECT *, CAST(row_number() OVER (ORDER BY {order}) - 1 AS INTEGER) AS gid "
        f"FROM (SELECT DISTINCT {cols} FROM ({_filtered(rule)}))"
    )


def rows_sql(rule: Rule) -> str:
    """The filtered rows of a windowed rule: ``gid``, ``e`` (epoch minute at which the row
    enters the window: its minute + 1) and one weight column per partial."""
    assert rule.time_column is not None
    weights = [
        f"{sql} AS {name}" for name, sql in weight_sql(rule.aggregate).items() if sql is not None
    ]
    e = f"epoch_us(CAST(src.{quote(rule.time_column)} AS TIMESTAMPTZ)) // {STEP_US} + 1 AS e"
    select = ", ".join(["gid", e, *weights])
    if not rule.group_by:
        return f"SELECT CAST(0 AS INTEGER) AS {select} FROM ({_filtered(rule)}) AS src"
    on = " AND ".join(f"src.{quote(g)} IS NOT DISTINCT FROM grp.{quote(g)}" for g in rule.group_by)
    return f"SELECT grp.{select} FROM ({_filtered(rule)}) AS src JOIN grp ON {on}"


def instant_sql(rule: Rule) -> str:
    """The query of a rule on a table without time: one row per group whose value passes."""
    groups = [quote(g) for g in rule.group_by]
    part = partials(rule.aggregate)
    aggs = ", ".join(f"{sql} AS {name}" for name, (sql, _) in part.items())
    where = f" WHERE ({rule.where_sql})" if rule.where_sql else ""
    group = f" GROUP BY {', '.join(groups)}" if groups else ""
    gsel = "".join(f"{g}, " for g in groups)
    value = value_sql(rule.aggregate, None)
    order = f" ORDER BY {', '.join(f'{g} ASC NULLS LAST' for g in groups)}" if groups else ""
    return f"""
WITH a AS (SELECT {gsel}{aggs} FROM t_{rule.table.value}{where}{group}),
v AS (SELECT {gsel}{value} AS value FROM a)
SELECT * FROM v WHERE coalesce(value {rule.op.sql} {rule.threshold!r}, false){order}
"""
