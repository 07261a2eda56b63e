"""WHERE and HAVING: simple comparisons combined by AND, OR, NOT and parentheses.

Read from the query's tokens (:mod:`diagnostics.jobdef.tokens`); evaluated as polars
expressions. Anything else (``BETWEEN``, ``LIKE``, ``IN``, functions, arithmetic) is a
:class:`Unsupported` naming it, so the step is named as not replayed rather than guessed at.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

import polars as pl

from diagnostics.impact.model import (
    Aggregate,
    Comparison,
    Condition,
    Function,
    Logic,
    Operand,
    Operator,
)
from diagnostics.jobdef.query import column_path
from diagnostics.jobdef.tokens import Kind, Token


class Unsupported(Exception):
    """A query shape replay does not evaluate; the message names it in a few words."""


_OPERATORS = {"=": Operator.EQ, "<": Operator.LT, ">": Operator.GT}
_TWO_CHAR = {"<=": Operator.LE, ">=": Operator.GE, "<>": Operator.NE, "!=": Operator.NE}
_FUNCTIONS = {f.value for f in Function}


def aggregate_call(tokens: Sequence[Token], name: str) -> Aggregate | None:
    """``COUNT(*)``, ``SUM(col)``, ... as an :class:`Aggregate` called ``name``; None when
    ``tokens`` are not an aggregate call at all; :class:`Unsupported` for other arguments."""
    if len(tokens) < 3 or not tokens[0].is_word(*_FUNCTIONS) or not tokens[1].is_punct("("):
        return None
    if not tokens[-1].is_punct(")"):
        return None
    function = Function(tokens[0].value.upper())
    inner = tokens[2:-1]
    if function is Function.COUNT and len(inner) == 1 and inner[0].is_punct("*"):
        return Aggregate(function, None, name)
    column = column_path(inner)
    if column is None:
        shown = " ".join(t.text for t in tokens)
        msg = f"aggregate {shown} is not replayed (only COUNT(*) and {function.value}(column))"
        raise Unsupported(msg)
    return Aggregate(function, column, name)


class ConditionReader:
    """Reads one condition from ``tokens``; ``aggregates``: HAVING (aggregate calls and the
    SELECT list's aggregate names allowed as operands)."""

    def __init__(self, tokens: Sequence[Token], aggregates: dict[str, Aggregate] | None = None):
        self.tokens = list(tokens)
        self.i = 0
        self.aggregates = aggregates

    def read(self) -> Condition:
        """The whole condition; :class:`Unsupported` if anything is left over."""
        condition = self._or()
        if self.i < len(self.tokens):
            raise Unsupported(f"condition at '{self.tokens[self.i].text}' is not replayed")
        return condition

    def _peek(self, offset: int = 0) -> Token | None:
        j = self.i + offset
        return self.tokens[j] if j < len(self.tokens) else None

    def _or(self) -> Condition:
        parts: list[Comparison | Condition] = [self._and()]
        while (tok := self._peek()) is not None and tok.is_word("OR"):
            self.i += 1
            parts.append(self._and())
        if len(parts) == 1 and isinstance(parts[0], Condition):
            return parts[0]
        return Condition(Logic.OR, tuple(parts))

    def _and(self) -> Condition:
        parts: list[Comparison | Condition] = [self._not()]
        while (tok := self._peek()) is not None and tok.is_word("AND"):
            self.i += 1
            parts.append(self._not())
        return Condition(Logic.AND, tuple(parts))

    def _not(self) -> Comparison | Condition:
        tok = self._peek()
        if tok is not None and tok.is_word("NOT"):
            self.i += 1
            inner = self._not()
            return Condition(Logic.AND, (inner,), negated=True)
        if tok is not None and tok.is_punct("("):
            self.i += 1
            inner = self._or()
            close = self._peek()
            if close is None or not close.is_punct(")"):
                raise Unsupported("condition: '(' is not closed")
            self.i += 1
            return inner
        return self._comparison()

    def _comparison(self) -> Comparison:
        left = self._operand()
        tok = self._peek()
        if tok is not None and tok.is_word("IS"):
            self.i += 1
            negated = bool((n := self._peek()) is not None and n.is_word("NOT"))
            self.i += int(negated)
            null = self._peek()
            if null is None or not null.is_word("NULL"):
                raise Unsupported("condition: IS must be followed by [NOT] NULL")
            self.i += 1
            return Comparison(left, None, None, negated=negated)
        op = self._operator()
        return Comparison(left, op, self._operand())

    def _operator(self) -> Operator:
        tok, nxt = self._peek(), self._peek(1)
        if tok is None or tok.kind is not Kind.PUNCT:
            shown = "the end" if tok is None else f"'{tok.text}'"
            raise Unsupported(f"condition: {shown} is not a comparison (=, <>, <, <=, >, >=)")
        if nxt is not None and nxt.kind is Kind.PUNCT and nxt.start == tok.end:
            two = tok.text + nxt.text
            if two in _TWO_CHAR:
                self.i += 2
                return _TWO_CHAR[two]
        if tok.text in _OPERATORS:
            self.i += 1
            return _OPERATORS[tok.text]
        raise Unsupported(f"condition: '{tok.text}' is not a comparison (=, <>, <, <=, >, >=)")

    def _operand(self) -> Operand:
        tok = self._peek()
        if tok is None:
            raise Unsupported("condition ends where a value is expected")
        if tok.kind is Kind.STRING:
            self.i += 1
            return Operand(literal=tok.value)
        sign = 1.0
        if tok.is_punct("-") and (n := self._peek(1)) is not None and n.kind is Kind.NUMBER:
            sign, self.i, tok = -1.0, self.i + 1, n
        if tok.kind is Kind.NUMBER:
            try:
                value = float(tok.value) * sign
            except ValueError as exc:
                raise Unsupported(f"condition: '{tok.text}' is not a number") from exc
            self.i += 1
            return Operand(literal=value)
        if tok.is_word("NULL"):
            raise Unsupported("condition: compare with NULL using IS NULL")
        if tok.is_word(*_FUNCTIONS) and (p := self._peek(1)) is not None and p.is_punct("("):
            if self.aggregates is None:
                raise Unsupported(f"{tok.value.upper()} in WHERE is not replayed")
            end = self._closing(self.i + 1)
            call = self.tokens[self.i : end + 1]
            self.i = end + 1
            agg = aggregate_call(call, "".join(t.text for t in call))
            assert agg is not None
            return Operand(aggregate=agg)
        j = self.i
        while j + 2 < len(self.tokens) and self.tokens[j + 1].is_punct("."):
            j += 2
        path = column_path(self.tokens[self.i : j + 1])
        after = self._peek(j + 1 - self.i)
        if path is None or (after is not None and after.is_punct("(")):
            raise Unsupported(f"condition: '{tok.text}' is not a column, a number or a string")
        self.i = j + 1
        if self.aggregates is not None and path.lower() in self.aggregates:
            return Operand(aggregate=self.aggregates[path.lower()])
        return Operand(column=path)

    def _closing(self, open_at: int) -> int:
        depth = 0
        for j in range(open_at, len(self.tokens)):
            if self.tokens[j].is_punct("("):
                depth += 1
            elif self.tokens[j].is_punct(")"):
                depth -= 1
                if depth == 0:
                    return j
        raise Unsupported("condition: '(' is not closed")


def columns_in(condition: Condition | Comparison) -> list[str]:
    """Every column a condition compares, in order."""
    if isinstance(condition, Comparison):
        return [o.column for o in (condition.left, condition.right) if o and o.column]
    return [c for part in condition.parts for c in columns_in(part)]


def aggregates_in(condition: Condition | Comparison) -> list[Aggregate]:
    """Every aggregate a HAVING condition uses, in order."""
    if isinstance(condition, Comparison):
        found = [o.aggregate for o in (condition.left, condition.right) if o and o.aggregate]
        return found
    return [a for part in condition.parts for a in aggregates_in(part)]


def to_expr(condition: Condition | Comparison, operand: Callable[[Operand], pl.Expr]) -> pl.Expr:
    """The polars expression of ``condition`` (``operand`` turns a column or aggregate into
    an expression). SQL's three values: a comparison with NULL is not true."""
    if isinstance(condition, Comparison):
        left = operand(condition.left)
        if condition.op is None or condition.right is None:
            return left.is_not_null() if condition.negated else left.is_null()
        right = operand(condition.right)
        compared = {
            Operator.EQ: left == right,
            Operator.NE: left != right,
            Operator.LT: left < right,
            Operator.LE: left <= right,
            Operator.GT: left > right,
            Operator.GE: left >= right,
        }[condition.op]
        return compared
    exprs = [to_expr(part, operand) for part in condition.parts]
    combined = exprs[0]
    for expr in exprs[1:]:
        combined = (combined & expr) if condition.logic is Logic.AND else (combined | expr)
    return ~combined if condition.negated else combined


def map_columns(condition: Condition, column: Callable[[str], str]) -> Condition:
    """``condition`` with every column (and every aggregate's column) mapped by ``column``."""

    def operand(o: Operand) -> Operand:
        if o.column is not None:
            return replace(o, column=column(o.column))
        agg = o.aggregate
        if agg is not None and agg.column is not None:
            return replace(o, aggregate=replace(agg, column=column(agg.column)))
        return o

    def part(p: Comparison | Condition) -> Comparison | Condition:
        if isinstance(p, Comparison):
            right = None if p.right is None else operand(p.right)
            return replace(p, left=operand(p.left), right=right)
        return replace(p, parts=tuple(part(q) for q in p.parts))

    mapped = part(condition)
    assert isinstance(mapped, Condition)
    return mapped
