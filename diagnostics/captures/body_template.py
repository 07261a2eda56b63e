"""Bodies written alike, read from their tokens: the usual Capture, where every event of a
device is written with the same keys in the same order. One pattern (``str.extract_groups``)
takes each key's JSON token from every body that holds exactly those keys in that order,
each with one scalar value (a string without escapes or control characters, a number,
``true``, ``false``, ``null``), in any JSON spacing. Such a body reads in Python exactly as its
tokens say (a number with a fraction or an exponent is a float, else an int), so it needs no
second check; the other bodies are read otherwise (:mod:`diagnostics.captures.bodies`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from diagnostics.captures.capture_maps import constant

#: JSON's whitespace, and one scalar value as JSON writes it.
_WS = r"[ \t\n\r]*"
_SCALAR = (
    r'("[^"\\\x00-\x1f]*"|-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?|true|false|null)'
)


@dataclass(frozen=True, slots=True)
class FieldValues:
    """Some rows' values of one field: as a column of one type (``column``, null where a
    row has none), or as Python values (``python()``, one a row); and the kinds they hold."""

    rows: np.ndarray
    kinds: frozenset[str]
    column: pl.Series | None
    python: Callable[[], Sequence[Any]]

    def values(self) -> list[Any]:
        """The Python values, one a row."""
        return list(self.python())


def usable_keys(keys: Sequence[str]) -> bool:
    """Whether a body's keys can make a pattern (none holds a quote, a backslash or a
    control character, which JSON writes escaped)."""
    return bool(keys) and not any(re.search(r'["\\\x00-\x1f]', k) for k in keys)


def template_tokens(text: pl.Series, keys: list[str]) -> tuple[np.ndarray, pl.DataFrame] | None:
    """The rows of the bodies that hold ``keys`` in this order, each with one scalar value,
    and each key's JSON token (column ``t<i>`` for ``keys[i]``); ``None`` when no body does."""
    pattern = (
        "^" + _WS + r"\{" + _WS
        + ("," + _WS).join('"' + re.escape(k) + '"' + _WS + ":" + _WS + _SCALAR + _WS for k in keys)
        + r"\}" + _WS + "$"
    )  # fmt: skip
    tokens = text.str.extract_groups(pattern).struct.unnest()
    tokens.columns = [_token(i) for i in range(len(keys))]  # keys may be any text ("*")
    tokens = tokens.with_row_index("row").filter(pl.col(_token(0)).is_not_null())
    if not tokens.height:
        return None
    return tokens["row"].to_numpy().astype(np.int64), tokens.drop("row")


def _token(index: int) -> str:
    """The column of the token of the template's key ``index``."""
    return f"t{index}"


def token_firsts(tokens: pl.DataFrame) -> dict[str, frozenset[str]]:
    """Each token column's distinct first characters (``"`` text, ``t``/``f`` a boolean,
    ``n`` null, else a number), all columns in one pass."""
    if not tokens.width:
        return {}
    firsts = tokens.select(pl.all().str.head(1).unique().implode()).row(0)
    return {
        name: frozenset(c for c in found if c is not None)
        for name, found in zip(tokens.columns, firsts, strict=True)
    }


def _token_kinds(
    tokens: pl.DataFrame, firsts: dict[str, frozenset[str]] | None = None
) -> dict[str, frozenset[str]]:
    """Each key's kinds of values, from its JSON tokens (``firsts``: :func:`token_firsts`)."""
    firsts = token_firsts(tokens) if firsts is None else firsts
    kinds = {}
    for key in tokens.columns:
        first = firsts[key]
        found = {"str"} if '"' in first else set()
        found |= {"bool"} if first & {"t", "f"} else set()
        if first - {'"', "t", "f", "n"}:  # numbers: with a fraction or an exponent, floats
            token = tokens[key]
            fraction = token.str.contains_any([".", "e", "E"])
            if first & {'"', "t", "f"}:  # text, true, false may hold those letters
                number = ~token.str.head(1).is_in(['"', "t", "f", "n"])
                fraction &= number
                whole = number & ~fraction
            else:  # numbers and nulls alone ("null" holds none of them)
                whole = ~fraction & (token != "null") if "n" in first else ~fraction
            found |= {"float"} if fraction.any() else set()
            found |= {"int"} if whole.any() else set()
        kinds[key] = frozenset(found)
    return kinds


def token_values(
    rows: np.ndarray,
    keys: Sequence[str],
    tokens: pl.DataFrame,
    firsts: dict[str, frozenset[str]] | None = None,
) -> dict[str, FieldValues] | None:
    """Each key's values from its JSON tokens (``None``: a whole number beyond 64 bits;
    ``firsts``: :func:`token_firsts`, when known)."""
    firsts = token_firsts(tokens) if firsts is None else firsts
    kinds = _token_kinds(tokens, firsts)
    typed = []
    for name, found in kinds.items():
        token = pl.col(name)
        nulls = "n" in firsts[name]

        def value(made: pl.Expr, token: pl.Expr = token, nulls: bool = nulls) -> pl.Expr:
            return pl.when(token != "null").then(made) if nulls else made

        if found == {"str"}:
            typed.append(value(token.str.slice(1).str.head(-1)).alias(name))
        elif found == {"bool"}:
            typed.append(value(token == "true").alias(name))
        elif found == {"float"}:
            typed.append(value(token).cast(pl.Float64).alias(name))
        elif found == {"int"}:
            typed.append(value(token).cast(pl.Int64, strict=False).alias(name))
    columns = tokens.select(typed) if typed else pl.DataFrame()
    values = {}
    for index, key in enumerate(keys):
        name = _token(index)
        found = kinds[name]
        column: pl.Series | None = None
        if not found:
            column = constant(None, len(rows), pl.Null)
        elif name in columns.columns:
            column = columns[name]
        if found == {"int"} and column is not None:  # beyond 64 bits: a null the cast made
            written = int((tokens[name] == "null").sum()) if "n" in firsts[name] else 0
            if column.null_count() > written:
                return None
        elif "int" in found:  # beyond 64 bits: Python's ints, read one by one
            numbers = tokens[name].filter(
                ~tokens[name].str.head(1).is_in(['"', "t", "f", "n"])
                & ~tokens[name].str.contains_any([".", "e", "E"])
            )
            if numbers.cast(pl.Int64, strict=False).null_count():
                return None

        def python(series: pl.Series = tokens[name]) -> list[Any]:
            return [json.loads(t) for t in series.to_list()]

        values[key] = FieldValues(rows, found, column, python)
    return values
