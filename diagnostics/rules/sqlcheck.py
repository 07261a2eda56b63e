"""Parse and check a rule's SQL: the ``where`` filter and the ``aggregate`` call.

Both are parsed by sqlglot (DuckDB dialect) and walked node by node against a whitelist: only
column references to the table's known columns, literals, bound params, comparisons, boolean
connectives, arithmetic and a few scalar functions pass. Subqueries, aggregates inside
``where``, several statements, unknown functions and qualified or unknown columns are refused.
The SQL that is run is re-generated from the checked tree, never the user's text.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import sqlglot
from sqlglot import exp

from diagnostics.rules.model import Aggregate, AggregateFn, ParamValue
from diagnostics.rules.tables import TableSpec
from diagnostics.words import noun

_ALLOWED_NODES: tuple[type[exp.Expr], ...] = (
    exp.Column,
    exp.Identifier,
    exp.Literal,
    exp.Boolean,
    exp.Null,
    exp.Paren,
    exp.Tuple,
    exp.And,
    exp.Or,
    exp.Not,
    exp.Xor,
    exp.EQ,
    exp.NEQ,
    exp.GT,
    exp.GTE,
    exp.LT,
    exp.LTE,
    exp.Is,
    exp.In,
    exp.Between,
    exp.Like,
    exp.ILike,
    exp.Add,
    exp.Sub,
    exp.Mul,
    exp.Div,
    exp.Mod,
    exp.Neg,
    exp.Coalesce,
    exp.Nullif,
    exp.Lower,
    exp.Upper,
    exp.Length,
    exp.Abs,
    exp.Round,
    exp.Floor,
    exp.Ceil,
    exp.StartsWith,
    exp.RegexpLike,
    exp.DPipe,
    exp.Cast,
    exp.TryCast,
    exp.DataType,
    exp.DataTypeParam,
    exp.Interval,
    exp.Var,
    exp.Case,
    exp.If,
    exp.Placeholder,
)

_BOOLEAN_ROOTS: tuple[type[exp.Expr], ...] = (
    exp.Predicate,
    exp.Connector,
    exp.Not,
    exp.Xor,
    exp.Boolean,
    exp.StartsWith,
    exp.RegexpLike,
)


class ExprError(ValueError):
    """An expression is not valid SQL, or uses something a rule may not use."""


def _parse(text: str, what: str) -> exp.Expr:
    """Parse exactly one SQL expression, or raise :class:`ExprError` locating the problem."""
    try:
        trees = sqlglot.parse(text, dialect="duckdb")
    except sqlglot.errors.ParseError as exc:
        first = exc.errors[0] if exc.errors else {}
        where = f" at column {first['col']}" if first.get("col") else ""
        desc = first.get("description", str(exc)).split("\n")[0]
        desc = re.sub(r"<class '(?:[\w]+\.)*(\w+)'>", r"\1", desc)
        msg = f"{what} {text!r} is not valid SQL{where}: {desc}"
        raise ExprError(msg) from exc
    except sqlglot.errors.SqlglotError as exc:
        msg = f"{what} {text!r} is not valid SQL: {str(exc).splitlines()[0]}"
        raise ExprError(msg) from exc
    found = [t for t in trees if t is not None]
    if len(found) != 1:
        msg = f"{what} {text!r} must be exactly one expression, found {len(found)} statements"
        raise ExprError(msg)
    tree = found[0]
    if isinstance(tree, exp.Alias):
        msg = f"{what} {text!r} must not carry an alias"
        raise ExprError(msg)
    return tree


def _check_column(node: exp.Column, spec: TableSpec, what: str) -> None:
    if node.table:
        msg = f"{what}: column '{node.sql()}' must not be qualified; write '{node.name}'"
        raise ExprError(msg)
    if node.name not in spec.columns:
        known = ", ".join(spec.columns)
        msg = f"{what}: unknown column '{node.name}' for table '{spec.name}' (columns: {known})"
        raise ExprError(msg)


def _literal(value: ParamValue) -> exp.Expr:
    if isinstance(value, bool):
        return exp.Boolean(this=value)
    if isinstance(value, int | float):
        return exp.Literal.number(value)
    return exp.Literal.string(str(value))


def _bind(tree: exp.Expr, params: Mapping[str, ParamValue], what: str) -> exp.Expr:
    """Replace every ``:name`` by the param's literal value (lists only inside ``IN (:name)``)."""

    def replace(node: exp.Expr) -> exp.Expr:
        if isinstance(node, exp.In):
            items = node.expressions
            if len(items) == 1 and isinstance(items[0], exp.Placeholder):
                name = items[0].name
                value = _param(params, name, what)
                if isinstance(value, tuple):
                    if not value:
                        return exp.Boolean(this=False)
                    bound = node.copy()
                    bound.set("expressions", [_literal(v) for v in value])
                    return bound
        if isinstance(node, exp.Placeholder):
            value = _param(params, node.name, what)
            if isinstance(value, tuple):
                msg = f"{what}: list param ':{node.name}' may only be used as 'IN (:{node.name})'"
                raise ExprError(msg)
            return _literal(value)
        return node

    return tree.transform(replace)


def _param(params: Mapping[str, ParamValue], name: str, what: str) -> ParamValue:
    if not name or name not in params:
        known = ", ".join(f":{p}" for p in params) or "none"
        msg = f"{what}: unknown param ':{name}' (params declared in 'params': {known})"
        raise ExprError(msg)
    return params[name]


def check_where(text: str, spec: TableSpec, params: Mapping[str, ParamValue]) -> str:
    """Parse and check a ``where`` filter; return the DuckDB SQL to run (params bound).

    Raises :class:`ExprError` naming the offending column, function or construct.
    """
    what = "where"
    tree = _parse(text, what)
    for node in tree.walk():
        if isinstance(node, exp.Column):
            _check_column(node, spec, what)
        elif isinstance(node, exp.Placeholder):
            _param(params, node.name, what)
        elif isinstance(node, exp.AggFunc):
            msg = f"{what}: aggregate '{node.sql(dialect='duckdb')}' is not allowed in a filter"
            raise ExprError(msg)
        elif isinstance(node, exp.Anonymous):
            msg = f"{what}: unknown or unsupported function '{node.name}'"
            raise ExprError(msg)
        elif not isinstance(node, _ALLOWED_NODES):
            sql = node.sql(dialect="duckdb")
            msg = f"{what}: '{sql}' ({type(node).__name__}) is not allowed in a rule filter"
            raise ExprError(msg)
    root = tree.unnest() if isinstance(tree, exp.Paren) else tree
    if not isinstance(root, _BOOLEAN_ROOTS):
        msg = f"{what} {text!r} is not a boolean expression (e.g. kind = 'LateInputEvent')"
        raise ExprError(msg)
    bound = _bind(tree, params, what)
    return bound.sql(dialect="duckdb")


_AGG_NODES: dict[type[exp.Expr], AggregateFn] = {
    exp.Count: AggregateFn.COUNT,
    exp.Sum: AggregateFn.SUM,
    exp.Max: AggregateFn.MAX,
    exp.Min: AggregateFn.MIN,
    exp.Avg: AggregateFn.AVG,
}


def check_aggregate(text: str, spec: TableSpec) -> Aggregate:
    """Parse an aggregate call (``count``, ``sum(col)``, ``rate``, ``ratio(a, b)``...).

    A rule's value is a number, so every column argument must be a numeric column.
    """
    what = "aggregate"
    stripped = text.strip()
    if stripped.lower() in ("count", "rate"):
        return Aggregate(AggregateFn(stripped.lower()))
    tree = _parse(stripped, what)
    fn: AggregateFn | None = None
    args: list[exp.Expr] = []
    if type(tree) in _AGG_NODES:
        fn = _AGG_NODES[type(tree)]
        inner = tree.this
        if isinstance(inner, exp.Distinct):
            msg = f"{what} {text!r}: DISTINCT is not supported"
            raise ExprError(msg)
        args = [] if inner is None or isinstance(inner, exp.Star) else [inner]
        args += list(tree.expressions)
    elif isinstance(tree, exp.Anonymous) and tree.name.lower() in ("rate", "ratio"):
        fn = AggregateFn(tree.name.lower())
        args = list(tree.expressions)
    if fn is None:
        names = ", ".join(f.value for f in AggregateFn)
        msg = f"{what} {text!r} is not one of {names} (e.g. sum(event_count))"
        raise ExprError(msg)
    if len(args) not in fn.arity:
        counts = " or ".join(str(n) for n in fn.arity)
        arguments = noun(fn.arity[-1], "column argument")
        msg = f"{what} {text!r}: {fn} takes {counts} {arguments}, got {len(args)}"
        raise ExprError(msg)
    columns: list[str] = []
    for arg in args:
        if not isinstance(arg, exp.Column):
            msg = f"{what} {text!r}: arguments must be plain column names, got '{arg.sql()}'"
            raise ExprError(msg)
        _check_column(arg, spec, what)
        if not spec.columns[arg.name].numeric:
            kind = spec.columns[arg.name].value
            msg = f"{what} {text!r}: column '{arg.name}' is {kind}, not numeric"
            raise ExprError(msg)
        columns.append(arg.name)
    return Aggregate(fn, tuple(columns))
