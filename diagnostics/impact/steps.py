"""The aggregating steps of an ASA query, read from its tokens.

A step is a ``WITH name AS (SELECT ...)`` or a top-level ``SELECT ... INTO output``. A step is
replayed when it reads the job's input, directly or through ``WITH`` steps that only filter
(``WHERE``) or project (``SELECT col [AS name]``), and groups by ``[keys,]`` one windowing
function (:mod:`diagnostics.impact.window_spec`) with ``COUNT``/``SUM``/``AVG``/``MIN``/``MAX``
and an optional ``HAVING``. Every other step is named with the reason in one line.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import pairwise

from diagnostics.errors import InputError
from diagnostics.impact.conditions import (
    ConditionReader,
    Unsupported,
    aggregate_call,
    aggregates_in,
    columns_in,
    map_columns,
)
from diagnostics.impact.model import (
    Aggregate,
    AggregateStep,
    Condition,
    Projection,
    QuerySteps,
    Skipped,
)
from diagnostics.impact.window_spec import OTHER_WINDOWS, WindowError, is_window, read_window
from diagnostics.jobdef.query import column_path
from diagnostics.jobdef.tokens import Kind, Token, tokenize

#: Top-level words that start a clause of a SELECT.
_CLAUSES = ("SELECT", "INTO", "FROM", "WHERE", "GROUP", "HAVING")
#: Words that make a step a shape replay does not evaluate.
_UNSUPPORTED = {
    "JOIN": "JOIN",
    "UNION": "UNION",
    "APPLY": "APPLY",
    "MATCH_RECOGNIZE": "MATCH_RECOGNIZE",
    "LIMIT": "LIMIT DURATION",
    "ORDER": "ORDER BY",
}


#: ASA's aggregate functions (the supported ones and the others, named when met).
_AGGREGATES = (
    "COUNT", "SUM", "AVG", "MIN", "MAX", "TOPONE", "COLLECT", "COLLECTTOP",
    "PERCENTILE_CONT", "PERCENTILE_DISC", "STDEV", "STDEVP", "VAR", "VARP",
)  # fmt: skip


def where(text: str, offset: int) -> str:
    """``line L, column C`` of ``offset`` in ``text``."""
    line = text.count("\n", 0, offset) + 1
    return f"line {line}, column {offset - (text.rfind(chr(10), 0, offset) + 1) + 1}"


@dataclass(frozen=True, slots=True)
class _Statement:
    name: str
    tokens: tuple[Token, ...]
    is_with: bool


@dataclass(slots=True)
class _Source:
    """What a WITH step offers the steps reading it: the input it reads (None: not the
    job's input), its columns (None: all of the source's), filters, or why it is no source."""

    reads_input: bool
    columns: dict[str, str | None] | None = None
    filters: list[Condition] = field(default_factory=list)
    problem: str | None = None
    results_of: str | None = None  # a WITH step that aggregates: its rows are its results
    name: str | None = None  # the WITH step (None: the input itself)


def _statements(tokens: list[Token]) -> list[_Statement]:
    """WITH steps and top-level SELECT statements, in order."""
    found: list[_Statement] = []
    i, n = 0, len(tokens)
    if n and tokens[0].is_word("WITH"):
        i = 1
        while i + 2 < n and tokens[i + 1].is_word("AS") and tokens[i + 2].is_punct("("):
            end = _closing(tokens, i + 2)
            found.append(_Statement(tokens[i].value, tuple(tokens[i + 3 : end]), True))
            i = end + 1
            if i < n and tokens[i].is_punct(","):
                i += 1
            else:
                break
    depth, start = 0, i
    for j in range(i, n + 1):
        tok = tokens[j] if j < n else None
        if tok is not None and (tok.is_punct("(") or tok.is_punct(")")):
            depth += 1 if tok.is_punct("(") else -1
        boundary = tok is None or (
            depth == 0
            and tok.is_word("SELECT")
            and j > start
            and not tokens[j - 1].is_word("UNION", "ALL")
        )
        if tok is not None and depth == 0 and tok.is_punct(";"):
            boundary = True
        if boundary:
            body = tuple(t for t in tokens[start:j] if not t.is_punct(";"))
            if body:
                found.append(_Statement(_into(body), body, False))
            start = j + 1 if tok is not None and tok.is_punct(";") else j
    return found


def _closing(tokens: Sequence[Token], open_at: int) -> int:
    depth = 0
    for j in range(open_at, len(tokens)):
        if tokens[j].is_punct("("):
            depth += 1
        elif tokens[j].is_punct(")"):
            depth -= 1
            if depth == 0:
                return j
    msg = "'(' is never closed"
    raise Unsupported(msg)


def _into(body: Sequence[Token]) -> str:
    for a, b in pairwise(body):
        if a.is_word("INTO") and b.kind in (Kind.WORD, Kind.QUOTED):
            return b.value
    return "SELECT"


def _clauses(body: Sequence[Token]) -> dict[str, list[Token]]:
    """Top-level clauses of one SELECT; :class:`Unsupported` names a shape not replayed."""
    clauses: dict[str, list[Token]] = {}
    current: list[Token] | None = None
    depth, i = 0, 0
    while i < len(body):
        tok = body[i]
        if depth == 0 and tok.kind is Kind.WORD and tok.value.upper() in _UNSUPPORTED:
            raise Unsupported(f"{_UNSUPPORTED[tok.value.upper()]} is not replayed; events only")
        if depth == 0 and tok.is_word(*_CLAUSES):
            word = tok.value.upper()
            if word in clauses:
                raise Unsupported(f"a second {word} is not replayed")
            current = clauses.setdefault(word, [])
            i += 2 if word == "GROUP" and i + 1 < len(body) and body[i + 1].is_word("BY") else 1
            continue
        if tok.is_punct("("):
            depth += 1
        elif tok.is_punct(")"):
            depth -= 1
        if current is not None:
            current.append(tok)
        i += 1
    return clauses


def _split(tokens: Sequence[Token]) -> list[list[Token]]:
    items: list[list[Token]] = [[]]
    depth = 0
    for tok in tokens:
        if tok.is_punct("(") or tok.is_punct(")"):
            depth += 1 if tok.is_punct("(") else -1
        if depth == 0 and tok.is_punct(","):
            items.append([])
        else:
            items[-1].append(tok)
    return [item for item in items if item]


def _alias(item: list[Token]) -> tuple[list[Token], str | None]:
    if len(item) >= 3 and item[-2].is_word("AS"):
        return item[:-2], item[-1].value
    last = item[-1]
    if (
        len(item) >= 2
        and last.kind in (Kind.WORD, Kind.QUOTED)
        and not item[-2].is_punct(".")
        and not item[-2].is_punct("(")
        and not last.is_word("END")
    ):
        return item[:-1], last.value
    return item, None


def _source(clauses: dict[str, list[Token]]) -> tuple[str, str | None]:
    """The FROM source and its alias."""
    tokens = clauses.get("FROM", [])
    if not tokens or tokens[0].kind not in (Kind.WORD, Kind.QUOTED):
        raise Unsupported("its FROM is not a named source; not replayed")
    if len(_split(tokens)) > 1:
        raise Unsupported("FROM with several sources is not replayed; events only")
    alias = None
    rest = tokens[1:]
    if rest and rest[0].is_word("AS"):
        rest = rest[1:]
    if (
        rest
        and rest[0].kind in (Kind.WORD, Kind.QUOTED)
        and not rest[0].is_word("TIMESTAMP", "PARTITION")
    ):
        alias = rest[0].value
    return tokens[0].value, alias


class _Reader:
    def __init__(self, text: str, input_name: str) -> None:
        self.text = text
        self.input = input_name.lower()
        self.sources: dict[str, _Source] = {}
        self.projections: list[Projection] = []

    def column(self, path: str, alias: str | None, source: _Source) -> str:
        """The input column a step's ``path`` names (alias prefix removed, renames undone)."""
        parts = path.split(".")
        if alias and len(parts) > 1 and parts[0].lower() == alias.lower():
            path = ".".join(parts[1:])
        if source.columns is None:
            return path
        found = source.columns.get(path.lower(), "")
        if found == "":
            raise Unsupported(f"column {path} is not among the columns its source selects")
        if found is None:
            raise Unsupported(f"column {path} is computed by an expression; not replayed")
        return found

    def source_of(self, name: str) -> _Source:
        if name.lower() == self.input:
            return _Source(reads_input=True)
        found = self.sources.get(name.lower())
        if found is None:
            return _Source(
                reads_input=False, problem=f"reads {name}, not the job's input; not replayed"
            )
        return found

    def condition(
        self,
        tokens: list[Token],
        alias: str | None,
        source: _Source,
        aggs: dict[str, Aggregate] | None = None,
    ) -> Condition:
        condition = ConditionReader(tokens, aggs).read()
        return map_columns(condition, lambda p: self.column(p, alias, source))

    def statement(self, st: _Statement) -> AggregateStep | Skipped | None:
        try:
            clauses = _clauses(st.tokens)
            name, alias = _source(clauses)
            source = self.source_of(name)
            group = clauses.get("GROUP")
            if group is None:
                if st.is_with:
                    projected = self.projection(clauses, alias, source)
                    projected.name = st.name
                    self.sources[st.name.lower()] = projected
                    if not projected.problem:
                        columns = projected.columns
                        shown = None if columns is None else tuple(columns.items())
                        self.projections.append(
                            Projection(st.name, shown, tuple(projected.filters))
                        )
                    return None
                if source.results_of:
                    why = f"no window aggregate; its rows are step {source.results_of}'s results"
                    return Skipped(st.name, why)
                return Skipped(
                    st.name, "no window aggregate; its rows are the events themselves (events only)"
                )
            if source.problem:
                raise Unsupported(source.problem)
            step = self.aggregate(st.name, clauses, group, alias, source)
            if st.is_with:
                self.sources[st.name.lower()] = _Source(
                    False,
                    problem=f"reads {st.name}'s windowed results; a window over results"
                    " is not replayed",
                    results_of=st.name,
                )
            return step
        except Unsupported as exc:
            if st.is_with:
                self.sources[st.name.lower()] = _Source(
                    False, problem=f"reads {st.name}, which is not replayed ({exc})"
                )
            return Skipped(st.name, str(exc))
        except WindowError as exc:
            at = where(self.text, st.tokens[0].start)
            msg = f"query step {st.name} ({at}): {exc}"
            raise InputError(msg) from exc

    def projection(
        self, clauses: dict[str, list[Token]], alias: str | None, source: _Source
    ) -> _Source:
        if source.problem:
            return _Source(False, problem=source.problem)
        columns: dict[str, str | None] = {}
        everything = False
        for item in _split(clauses.get("SELECT", [])):
            expr, name = _alias(item)
            if len(expr) == 1 and expr[0].is_punct("*"):
                everything = True
                continue
            path = column_path(expr)
            if path is None:
                if name:
                    columns[name.lower()] = None
                continue
            column = self.column(path, alias, source)
            columns[(name or path.split(".")[-1]).lower()] = column
        filters = list(source.filters)
        if "WHERE" in clauses:
            filters.append(self.condition(clauses["WHERE"], alias, source))
        return _Source(True, None if everything else columns, filters)

    def aggregate(
        self,
        name: str,
        clauses: dict[str, list[Token]],
        group: list[Token],
        alias: str | None,
        source: _Source,
    ) -> AggregateStep:
        keys: list[str] = []
        labels: list[str] = []
        window = None
        for item in _split(group):
            if is_window(item[0]):
                close = _closing(item, 1)
                window = read_window(item[: close + 1], item[close + 1 :])
                continue
            if item[0].kind is Kind.WORD and item[0].value.upper() in OTHER_WINDOWS:
                raise Unsupported(f"{item[0].value} is not replayed; events only")
            path = column_path(item)
            if path is None:
                raise Unsupported("GROUP BY an expression is not replayed")
            keys.append(self.column(path, alias, source))
            parts = path.split(".")
            labels.append(
                ".".join(parts[1:])
                if alias and len(parts) > 1 and parts[0].lower() == alias.lower()
                else path
            )
        if window is None:
            raise Unsupported("GROUP BY without a windowing function is not replayed")
        raw: list[Aggregate] = []
        for item in _split(clauses.get("SELECT", [])):
            expr, shown = _alias(item)
            written = self.text[expr[0].start : expr[-1].end]
            call = aggregate_call(expr, shown or written)
            if call is None:
                if any(t.is_word(*_AGGREGATES) for t in expr):
                    raise Unsupported(f"{written} is not replayed")
                continue
            raw.append(call)
        aggregates = [self.mapped(call, alias, source) for call in raw]
        if not aggregates:
            raise Unsupported("it selects no COUNT, SUM, AVG, MIN or MAX; not replayed")
        having = None
        hidden: list[Aggregate] = []
        if "HAVING" in clauses:
            named = {a.name.lower(): a for a in raw}
            having = self.condition(clauses["HAVING"], alias, source, named)
            for column in columns_in(having):
                if column.lower() not in {k.lower() for k in keys}:
                    msg = f"HAVING {column}: not an aggregate or a GROUP BY key of the step"
                    raise Unsupported(msg)
            for agg in aggregates_in(having):
                if agg not in aggregates and agg not in hidden:
                    hidden.append(agg)
        filters = list(source.filters)
        if "WHERE" in clauses:
            filters.append(self.condition(clauses["WHERE"], alias, source))
        return AggregateStep(
            name,
            window,
            tuple(keys),
            tuple(aggregates),
            tuple(filters),
            having,
            tuple(hidden),
            tuple(labels),
            source.name,
        )

    def mapped(self, agg: Aggregate, alias: str | None, source: _Source) -> Aggregate:
        if agg.column is None:
            return agg
        return Aggregate(agg.function, self.column(agg.column, alias, source), agg.name)


def read_steps(text: str, input_name: str) -> QuerySteps:
    """The steps of query ``text`` that aggregate input ``input_name`` over a window, and
    the others named with the reason. A malformed window is an :class:`InputError` naming
    the step, line and column."""
    try:
        statements = _statements(tokenize(text))
    except Unsupported as exc:
        msg = f"query: {exc}"
        raise InputError(msg) from exc
    reader = _Reader(text, input_name)
    steps: list[AggregateStep] = []
    skipped: list[Skipped] = []
    for st in statements:
        result = reader.statement(st)
        if isinstance(result, AggregateStep):
            steps.append(result)
        elif isinstance(result, Skipped):
            skipped.append(result)
    return QuerySteps(tuple(steps), tuple(skipped), tuple(reader.projections))


#: For readers of the step shapes replay leaves out (a JOIN with reference data,
#: :mod:`diagnostics.engines.join_plan`): a comma-separated list and an item's alias, read as
#: this module reads them.
split_items = _split
item_alias = _alias


def statements(text: str) -> list[tuple[str, tuple[Token, ...], bool]]:
    """The query's WITH steps and top-level statements: (name, tokens, is a WITH step)."""
    return [(s.name, s.tokens, s.is_with) for s in _statements(tokenize(text))]
