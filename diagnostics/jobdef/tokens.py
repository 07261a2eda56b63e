"""A small tokenizer for the ASA query language (a T-SQL dialect).

It knows exactly what the query parser needs and nothing more: words, numbers, string
literals (``'it''s'``), bracketed (``[my input]``) and double-quoted (``"ts"``) identifiers,
comments (``-- ...`` to the end of the line, ``/* ... */`` nested as in T-SQL) and single
punctuation characters. Every token keeps its character offsets into the text, so that an
edit can insert at a token boundary and leave every other byte as it was. Comments and
whitespace produce no token; text inside them and inside string literals is never read as
a keyword.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from diagnostics.errors import InputError


class Kind(StrEnum):
    """Token kinds."""

    WORD = "word"  # keyword or plain identifier
    QUOTED = "quoted"  # [identifier] or "identifier"
    STRING = "string"  # 'literal'
    NUMBER = "number"
    PUNCT = "punct"


@dataclass(frozen=True, slots=True)
class Token:
    """One token: ``text`` as written, ``value`` the identifier or literal it denotes
    (brackets and quotes removed, doubled quotes undone), ``start``/``end`` offsets
    (``text == query[start:end]``)."""

    kind: Kind
    text: str
    value: str
    start: int
    end: int

    def is_word(self, *words: str) -> bool:
        """True for an unquoted word equal (case-insensitively) to one of ``words``."""
        return self.kind is Kind.WORD and self.value.upper() in words

    def is_punct(self, char: str) -> bool:
        """True for the punctuation character ``char``."""
        return self.kind is Kind.PUNCT and self.text == char


def _where(text: str, offset: int) -> str:
    line = text.count("\n", 0, offset) + 1
    column = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return f"line {line}, column {column}"


def _closing(text: str, start: int, quote: str) -> int:
    """Offset just past the quote closing the literal opened at ``start`` (doubled quote = one)."""
    i = start + 1
    while True:
        j = text.find(quote, i)
        if j < 0:
            msg = f"query {_where(text, start)}: {quote!r} is never closed"
            raise InputError(msg)
        if text.startswith(quote * 2, j):
            i = j + 2
            continue
        return j + 1


def _block_comment_end(text: str, start: int) -> int:
    depth, i = 0, start
    while i < len(text):
        if text.startswith("/*", i):
            depth, i = depth + 1, i + 2
        elif text.startswith("*/", i):
            depth, i = depth - 1, i + 2
            if depth == 0:
                return i
        else:
            i += 1
    msg = f"query {_where(text, start)}: '/*' comment is never closed"
    raise InputError(msg)


def tokenize(text: str) -> list[Token]:
    """The tokens of ``text``; an unclosed literal or comment is an :class:`InputError`
    naming its line and column."""
    tokens: list[Token] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch.isspace():
            i += 1
        elif text.startswith("--", i):
            end = text.find("\n", i)
            i = n if end < 0 else end
        elif text.startswith("/*", i):
            i = _block_comment_end(text, i)
        elif ch in "'[\"":
            close = {"'": "'", "[": "]", '"': '"'}[ch]
            end = _closing(text, i, close)
            value = text[i + 1 : end - 1].replace(close * 2, close)
            kind = Kind.STRING if ch == "'" else Kind.QUOTED
            tokens.append(Token(kind, text[i:end], value, i, end))
            i = end
        elif ch.isalpha() or ch in "_@#":
            j = i + 1
            while j < n and (text[j].isalnum() or text[j] in "_@#$"):
                j += 1
            tokens.append(Token(Kind.WORD, text[i:j], text[i:j], i, j))
            i = j
        elif ch.isdigit():
            j = i + 1
            while j < n and (text[j].isalnum() or text[j] == "."):
                j += 1
            tokens.append(Token(Kind.NUMBER, text[i:j], text[i:j], i, j))
            i = j
        else:
            tokens.append(Token(Kind.PUNCT, ch, ch, i, i + 1))
            i += 1
    return tokens
