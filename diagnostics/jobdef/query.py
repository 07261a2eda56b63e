"""What an ASA query says about each input's time handling.

For every place an input is read (``FROM input`` or ``JOIN input``, in any ``WITH`` step or
``SELECT ... INTO``) the parser records the ``TIMESTAMP BY`` column, the ``OVER`` keys and
``PARTITION BY PartitionId [INTO n]``, with the character offsets of each clause so that
:mod:`diagnostics.jobdef.rewrite` can edit the text in place. It works on tokens
(:mod:`diagnostics.jobdef.tokens`), so comments and string literals that contain these
words are never mistaken for clauses.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from diagnostics.errors import InputError
from diagnostics.jobdef.tokens import Kind, Token, tokenize

#: Words that end a source clause, a ``TIMESTAMP BY`` expression or an ``OVER`` key (an
#: alias is any other word): what ASA lets follow ``FROM input [alias] TIMESTAMP BY ts OVER k``.
#: Inside parentheses and ``CASE ... END`` none of them ends anything (``BETWEEN a AND b``).
_CLAUSE_WORDS = frozenset(
    {
        "TIMESTAMP", "PARTITION", "OVER", "WHERE", "GROUP", "HAVING", "JOIN", "INNER",
        "LEFT", "RIGHT", "FULL", "OUTER", "CROSS", "ON", "UNION", "SELECT", "INTO", "ORDER",
        "WITH", "LIMIT", "WINDOW", "APPLY", "AND", "OR", "EXCEPT", "MATCH_RECOGNIZE", "AS",
        "FROM",
    }
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class SourceRef:
    """One place the query reads a source.

    ``name`` is the source as the query names it (brackets removed); ``step`` the ``WITH``
    step it sits in (``None`` in a top-level statement). Offsets: ``name_end`` and
    ``alias_end`` just past the name and the optional alias; ``timestamp_start`` and
    ``timestamp_end`` at and just past the ``TIMESTAMP BY`` expression; ``over_span`` covers ``OVER key, ...``; ``clause_end`` is
    just past the whole source clause.
    """

    name: str
    step: str | None
    alias_end: int
    clause_end: int
    timestamp_by: str | None = None
    timestamp_text: str | None = None
    timestamp_is_column: bool = True
    timestamp_start: int | None = None
    timestamp_end: int | None = None
    over: tuple[str, ...] = ()
    over_span: tuple[int, int] | None = None
    partition_by: str | None = None
    partition_into: int | None = None


@dataclass(frozen=True, slots=True)
class ParsedQuery:
    """The query text and every source it reads, in text order."""

    text: str
    sources: tuple[SourceRef, ...]
    steps: tuple[str, ...]

    def reads(self, name: str) -> list[SourceRef]:
        """The places the query reads ``name`` (ASA names are case-insensitive)."""
        return [ref for ref in self.sources if ref.name.lower() == name.lower()]


def column_path(tokens: Sequence[Token]) -> str | None:
    """``a.b.c`` when ``tokens`` are a column reference (parts joined by dots), else None."""
    if not tokens or len(tokens) % 2 == 0:
        return None
    parts: list[str] = []
    for i, tok in enumerate(tokens):
        if i % 2 == 1:
            if not tok.is_punct("."):
                return None
        elif tok.kind in (Kind.WORD, Kind.QUOTED):
            parts.append(tok.value)
        else:
            return None
    return ".".join(parts)


def _ends_expression(tok: Token) -> bool:
    return (tok.kind is Kind.WORD and tok.value.upper() in _CLAUSE_WORDS) or (
        tok.kind is Kind.PUNCT and tok.text in "),;"
    )


class _Reader:
    """A cursor over the tokens."""

    def __init__(self, text: str, tokens: list[Token]) -> None:
        self.text = text
        self.tokens = tokens

    def at(self, i: int) -> Token | None:
        return self.tokens[i] if i < len(self.tokens) else None

    def word(self, i: int, *words: str) -> bool:
        tok = self.at(i)
        return tok is not None and tok.is_word(*words)

    def expression(self, i: int) -> int:
        """Index just past the expression starting at ``i``: it stops at a clause word, ``,``,
        ``;`` or an unmatched ``)`` outside parentheses and ``CASE ... END``, which are read
        as one unit whatever they hold (``CASE WHEN a BETWEEN 1 AND 2 OR b THEN ... END``)."""
        nesting: list[str] = []  # the open "(" and "CASE", innermost last
        while (tok := self.at(i)) is not None:
            if tok.is_punct("("):
                nesting.append("(")
            elif tok.is_word("CASE"):
                nesting.append("CASE")
            elif tok.is_punct(")"):
                while nesting and nesting[-1] == "CASE":  # a CASE left open inside (...)
                    nesting.pop()
                if not nesting:
                    break
                nesting.pop()
            elif tok.is_word("END") and nesting and nesting[-1] == "CASE":
                nesting.pop()
            elif not nesting and _ends_expression(tok):
                break
            i += 1
        return i

    def source(self, i: int, step: str | None) -> tuple[SourceRef, int]:
        """The source clause whose name token is at ``i``; returns it and the next index."""
        name = self.tokens[i]
        alias_end, i = name.end, i + 1
        if self.word(i, "AS"):
            i += 1
        tok = self.at(i)
        if tok is not None and tok.kind in (Kind.WORD, Kind.QUOTED) and not _ends_expression(tok):
            alias_end, i = tok.end, i + 1
        fields: dict[str, object] = {}
        clause_end = alias_end
        while True:
            if self.word(i, "TIMESTAMP") and self.word(i + 1, "BY") and "ts" not in fields:
                start, stop = i + 2, self.expression(i + 2)
                if stop == start:
                    msg = f"query: TIMESTAMP BY after {name.text} has no expression"
                    raise InputError(msg)
                expr = self.tokens[start:stop]
                column = column_path(expr)
                fields["ts"] = True
                fields["timestamp_text"] = self.text[expr[0].start : expr[-1].end]
                fields["timestamp_by"] = column
                fields["timestamp_is_column"] = column is not None
                fields["timestamp_start"] = expr[0].start
                fields["timestamp_end"] = clause_end = expr[-1].end
                i = stop
                if self.word(i, "OVER"):
                    over_start = self.tokens[i].start
                    keys, i = self._keys(i + 1, name.text)
                    fields["over"] = tuple(k for k, _ in keys)
                    fields["over_span"] = (over_start, keys[-1][1])
                    clause_end = keys[-1][1]
            elif self.word(i, "PARTITION") and self.word(i + 1, "BY") and "pb" not in fields:
                column_tok = self.at(i + 2)
                if column_tok is None or column_tok.kind not in (Kind.WORD, Kind.QUOTED):
                    msg = f"query: PARTITION BY after {name.text} names no column"
                    raise InputError(msg)
                fields["pb"] = True
                fields["partition_by"] = column_tok.value
                clause_end, i = column_tok.end, i + 3
                count = self.at(i + 1)
                if self.word(i, "INTO") and count is not None and count.kind is Kind.NUMBER:
                    fields["partition_into"] = int(count.value)
                    clause_end, i = count.end, i + 2
            else:
                break
        ref = SourceRef(
            name=name.value,
            step=step,
            alias_end=alias_end,
            clause_end=clause_end,
            **{k: v for k, v in fields.items() if k not in ("ts", "pb")},  # type: ignore[arg-type]
        )
        return ref, i

    def _keys(self, i: int, source: str) -> tuple[list[tuple[str, int]], int]:
        keys: list[tuple[str, int]] = []
        while True:
            stop = self.expression(i)
            column = column_path(self.tokens[i:stop])
            if column is None:
                msg = f"query: OVER after {source} must list columns"
                raise InputError(msg)
            keys.append((column, self.tokens[stop - 1].end))
            i = stop
            if not (tok := self.at(i)) or not tok.is_punct(","):
                return keys, i
            i += 1


def parse_query(text: str) -> ParsedQuery:
    """Every source the query reads, with its time-handling clauses (see :class:`SourceRef`)."""
    reader = _Reader(text, tokenize(text))
    sources: list[SourceRef] = []
    steps: list[str] = []
    open_steps: list[tuple[str, int]] = []  # (step name, paren depth of its body)
    depth, i = 0, 0
    tokens = reader.tokens
    while i < len(tokens):
        tok = tokens[i]
        if tok.is_punct("("):
            depth += 1
        elif tok.is_punct(")"):
            depth -= 1
            if open_steps and open_steps[-1][1] == depth + 1:
                open_steps.pop()
        elif (
            tok.kind in (Kind.WORD, Kind.QUOTED)
            and reader.word(i + 1, "AS")
            and (nxt := reader.at(i + 2)) is not None
            and nxt.is_punct("(")
            and i > 0
            and (tokens[i - 1].is_word("WITH") or tokens[i - 1].is_punct(","))
        ):
            steps.append(tok.value)
            open_steps.append((tok.value, depth + 1))
        elif tok.is_word("FROM", "JOIN"):
            nxt = reader.at(i + 1)
            if nxt is not None and nxt.kind in (Kind.WORD, Kind.QUOTED):
                after = reader.at(i + 2)
                if after is None or not after.is_punct("("):
                    step = open_steps[-1][0] if open_steps else None
                    ref, i = reader.source(i + 1, step)
                    sources.append(ref)
                    continue
        i += 1
    return ParsedQuery(text=text, sources=tuple(sources), steps=tuple(steps))
