"""A step that joins the input with reference data, read for the translations:
``SELECT a.x, r.y [AS n] ... INTO out FROM input|step a [INNER] JOIN reference r ON a.k =
r.k [AND ...] [WHERE ...]``, read with the tokens, lists and conditions of the query parser
(:mod:`diagnostics.impact.steps`, :mod:`diagnostics.impact.conditions`).

ASA joins each event with the reference data valid at the event's time (the blob whose
``{date}/{time}`` covers it); the Flink translation is an event-time temporal join on the
reference table's key, the Spark translation a stream-static join. Any other shape (a second
JOIN, an outer join, GROUP BY, an item that is not a column) is named with the reason.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from diagnostics.engines.sql_text import Column, ColumnType
from diagnostics.impact.conditions import ConditionReader, Unsupported, columns_in
from diagnostics.impact.model import Comparison, Condition, Logic, Operator
from diagnostics.impact.steps import item_alias, split_items, statements
from diagnostics.jobdef.query import column_path
from diagnostics.jobdef.tokens import Kind, Token

if TYPE_CHECKING:
    from diagnostics.engines.job_plan import View

#: Words that make a JOIN step a shape the translation does not write.
_OTHER = ("GROUP", "HAVING", "UNION", "LEFT", "RIGHT", "FULL", "OUTER", "CROSS", "APPLY",
          "ORDER", "LIMIT", "MATCH_RECOGNIZE")  # fmt: skip
_CLAUSES = ("SELECT", "INTO", "FROM", "JOIN", "ON", "WHERE")


@dataclass(frozen=True, slots=True)
class JoinStep:
    """The join: the table it reads (``left``, the input or a view) and the reference
    input, each with the alias the query gives it; ``keys``: (left column, reference column)
    equalities of ``ON``; ``on``: its other conditions; ``filters``: ``WHERE``; ``items``:
    (column path with its alias, output name); ``reference_columns``: the reference columns
    used; ``into``: the output (``None``: a WITH step)."""

    name: str
    into: str | None
    left: str
    left_alias: str
    reference: str
    reference_alias: str
    keys: tuple[tuple[str, str], ...]
    on: tuple[Condition, ...]
    filters: tuple[Condition, ...]
    items: tuple[tuple[str, str], ...]
    reference_columns: tuple[str, ...]

    def side(self, path: str) -> tuple[bool, str]:
        """(on the reference side, the column without its alias) of a column path."""
        head, _, rest = path.partition(".")
        if rest and head.lower() == self.reference_alias.lower():
            return True, rest
        if rest and head.lower() == self.left_alias.lower():
            return False, rest
        return False, path

    def left_columns(self) -> list[str]:
        """The left table's columns the step uses, in order."""
        paths = [p for p, _ in self.items] + [k for k, _ in self.keys]
        for cond in (*self.on, *self.filters):
            paths += columns_in(cond)
        found: dict[str, None] = {}
        for path in paths:
            reference, column = self.side(path)
            if not reference:
                found.setdefault(column)
        return list(found)


def _clauses(tokens: tuple[Token, ...]) -> dict[str, list[Token]]:
    found: dict[str, list[Token]] = {}
    current: list[Token] | None = None
    depth = 0
    for tok in tokens:
        if depth == 0 and tok.is_word(*_OTHER):
            raise Unsupported(f"{tok.value.upper()} in a JOIN step is not translated")
        if depth == 0 and tok.is_word("INNER"):
            continue
        if depth == 0 and tok.is_word(*_CLAUSES):
            word = tok.value.upper()
            if word in found:
                raise Unsupported(f"a second {word} in a JOIN step is not translated")
            current = found.setdefault(word, [])
            continue
        if tok.is_punct("(") or tok.is_punct(")"):
            depth += 1 if tok.is_punct("(") else -1
        if current is not None:
            current.append(tok)
    return found


def _named(tokens: list[Token], what: str) -> tuple[str, str]:
    """``name [AS] alias`` -> (name, alias; the name when there is none)."""
    words = [t for t in tokens if not t.is_word("AS")]
    if not words or any(t.kind not in (Kind.WORD, Kind.QUOTED) for t in words) or len(words) > 2:
        raise Unsupported(f"its {what} is not a named source; not translated")
    return words[0].value, words[-1].value


def _equalities(
    condition: Condition, left_alias: str, reference_alias: str
) -> tuple[list[tuple[str, str]], list[Condition]]:
    """The ``left.k = reference.k`` parts of ``ON``'s top-level AND, and the other parts."""
    parts = (
        list(condition.parts)
        if condition.logic is Logic.AND and not condition.negated
        else [condition]
    )
    keys: list[tuple[str, str]] = []
    rest: list[Condition] = []
    for part in parts:
        if (
            isinstance(part, Comparison)
            and part.op is Operator.EQ
            and part.right is not None
            and part.left.column
            and part.right.column
        ):
            sides = {}
            for path in (part.left.column, part.right.column):
                head, _, column = path.partition(".")
                sides[head.lower()] = column
            if left_alias.lower() in sides and reference_alias.lower() in sides:
                keys.append((sides[left_alias.lower()], sides[reference_alias.lower()]))
                continue
        rest.append(part if isinstance(part, Condition) else Condition(Logic.AND, (part,)))
    return keys, rest


def read_join(
    name: str,
    tokens: tuple[Token, ...],
    is_with: bool,
    input_name: str,
    views: Mapping[str, str],
    references: Mapping[str, str | None],
) -> JoinStep:
    """The JOIN step ``name`` (its ``tokens``); ``views``: the WITH steps that filter and
    project the input (lower-cased name -> name); :class:`Unsupported` names any other shape."""
    clauses = _clauses(tokens)
    if "JOIN" not in clauses or "ON" not in clauses:
        raise Unsupported("JOIN without ON is not translated")
    left, left_alias = _named(clauses.get("FROM", []), "FROM")
    reference, reference_alias = _named(clauses["JOIN"], "JOIN")
    known = {r.lower(): r for r in references}
    if reference.lower() not in known:
        raise Unsupported(f"JOIN with {reference}, not a reference input, is not translated")
    if left.lower() != input_name.lower() and left.lower() not in views:
        raise Unsupported(
            f"JOIN reading {left}, not the input or a WITH step over it, is not translated"
        )
    left = input_name if left.lower() == input_name.lower() else views[left.lower()]
    on = ConditionReader(clauses["ON"]).read()
    keys, rest = _equalities(on, left_alias, reference_alias)
    if not keys:
        raise Unsupported(
            "JOIN ... ON without an equality of the two sides' columns is not translated"
        )
    filters = (ConditionReader(clauses["WHERE"]).read(),) if "WHERE" in clauses else ()
    items: list[tuple[str, str]] = []
    for item in split_items(clauses.get("SELECT", [])):
        expr, alias = item_alias(item)
        path = column_path(expr)
        if path is None:
            shown = " ".join(t.text for t in expr)
            raise Unsupported(f"{shown} in a JOIN step's SELECT is not translated (columns only)")
        items.append((path, alias or path.split(".")[-1]))
    step = JoinStep(
        name,
        None if is_with else name,
        left,
        left_alias,
        known[reference.lower()],
        reference_alias,
        tuple(keys),
        tuple(rest),
        filters,
        tuple(items),
        (),
    )
    used: dict[str, None] = {r: None for _, r in keys}
    paths = [p for p, _ in items]
    for cond in (*rest, *filters):
        paths += columns_in(cond)
    for path in paths:
        on_reference, column = step.side(path)
        if on_reference:
            used.setdefault(column)
    return replace(step, reference_columns=tuple(used))


@dataclass(frozen=True, slots=True)
class Reference:
    """A reference input a JOIN reads: its columns, its key (the columns the joins match
    on) and its datasource type."""

    name: str
    columns: tuple[Column, ...]
    key: tuple[str, ...]
    source_type: str | None


@dataclass(frozen=True, slots=True)
class Join:
    """A JOIN step with the reference data, and its output's columns."""

    step: JoinStep
    output: tuple[Column, ...]


def plan_joins(
    query: str,
    input_name: str,
    views: Sequence[View],
    references: Mapping[str, str | None],
    skipped: Sequence[tuple[str, str]],
) -> tuple[list[tuple[str, str]], list[JoinStep]]:
    """The JOIN steps with reference data among the ``skipped`` (step, reason) read, and
    the steps left out with their reason (a JOIN step reader's where it gives one)."""
    names = {v.name.lower(): v.name for v in views}
    joins: list[JoinStep] = []
    left: list[tuple[str, str]] = []
    shapes = {name.lower(): (name, tokens, is_with) for name, tokens, is_with in statements(query)}
    for step, reason in skipped:
        shape = shapes.get(step.lower())
        if shape is None or not reason.startswith("JOIN"):
            left.append((step, reason))
            continue
        try:
            joins.append(read_join(*shape, input_name, names, references))
        except Unsupported as exc:
            left.append((step, str(exc)))
    return left, joins


def input_column(join: JoinStep, column: str, views: Sequence[View]) -> str:
    """The input column a left column of ``join`` is (through its view)."""
    view = next((v for v in views if v.name == join.left), None)
    if view is None or view.columns is None:
        return column
    return next((col for name, col in view.columns if name.lower() == column.lower()), column)


def reference_tables(
    joins: list[JoinStep],
    references: Mapping[str, str | None],
    views: Sequence[View],
    types: Mapping[str, ColumnType],
) -> tuple[tuple[Reference, ...], tuple[Join, ...]]:
    """The reference tables the joins read (typed from their use) and each join's output."""
    ref_types: dict[str, dict[str, ColumnType]] = {}
    keys: dict[str, dict[str, None]] = {}
    planned: list[Join] = []
    for join in joins:
        mine = ref_types.setdefault(join.reference, {})
        for column in join.reference_columns:
            mine.setdefault(column, ColumnType.STRING)
        keys.setdefault(join.reference, {}).update({r: None for _, r in join.keys})
        for left_key, ref_key in join.keys:
            mine[ref_key] = types.get(input_column(join, left_key, views), ColumnType.STRING)

        def typed(
            path: str, join: JoinStep = join, mine: dict[str, ColumnType] = mine
        ) -> ColumnType:
            on_reference, column = join.side(path)
            if on_reference:
                return mine.get(column, ColumnType.STRING)
            return types.get(input_column(join, column, views), ColumnType.STRING)

        for cond in (*join.on, *join.filters):
            for column in columns_in(cond):
                on_reference, name = join.side(column)
                if on_reference and compared_type(cond, column) is ColumnType.DOUBLE:
                    mine[name] = ColumnType.DOUBLE
            for a, b in _column_pairs(cond):
                for ref_path, other in ((a, b), (b, a)):
                    on_reference, name = join.side(ref_path)
                    if (
                        on_reference
                        and not join.side(other)[0]
                        and typed(other) is not ColumnType.STRING
                    ):
                        mine[name] = typed(other)
        output = tuple(Column(name, typed(path)) for path, name in join.items)
        planned.append(Join(join, output))
    tables = tuple(
        Reference(
            name,
            tuple(Column(c, t) for c, t in ref_types[name].items()),
            tuple(keys[name]),
            references.get(name),
        )
        for name in ref_types
    )
    return tables, tuple(planned)


def _column_pairs(cond: Condition) -> list[tuple[str, str]]:
    """(column, column) of every comparison of two columns in ``cond``."""
    from diagnostics.impact.model import Comparison

    found: list[tuple[str, str]] = []

    def walk(part: Condition | Comparison) -> None:
        if isinstance(part, Comparison):
            if part.left.column and part.right is not None and part.right.column:
                found.append((part.left.column, part.right.column))
            return
        for p in part.parts:
            walk(p)

    walk(cond)
    return found


def compared_type(cond: Condition, column: str) -> ColumnType:
    """DOUBLE when ``column`` is compared with a number anywhere in ``cond``."""
    from diagnostics.impact.model import Comparison

    def walk(part: Condition | Comparison) -> bool:
        if isinstance(part, Comparison):
            sides = (part.left, part.right)
            named = any(s is not None and s.column == column for s in sides)
            number = any(s is not None and isinstance(s.literal, float | int) for s in sides)
            return named and number
        return any(walk(p) for p in part.parts)

    return ColumnType.DOUBLE if walk(cond) else ColumnType.STRING
