"""CSV as users export it: the separator (``,``, ``;`` or tab) and decimal commas, detected
or given (``--separator``, ``--decimal-comma``), and errors that name file, line and column.

Rule (docs/schemas.md, "Input contract"): ``.tsv`` files are tab-separated; otherwise the
header line decides: the one of ``,``, ``;`` and tab that occurs most often in it outside
quotes (``,`` on a tie or when none does). With ``;`` or tab (what European Excel writes),
a text column whose every value is a number with a decimal comma (``12,5``, ``-0,25``) is
read as a number; ``--decimal-comma`` does so whatever the separator. A row whose field
count differs from the header's is an error naming its line and column.
"""

from __future__ import annotations

import csv
import io
import sys
from dataclasses import dataclass

import polars as pl

from diagnostics.errors import InputError

SEPARATORS = (",", ";", "\t")
_DECIMAL_COMMA = r"^\s*[-+]?\d+(?:\.\d{3})*,\d+\s*$|^\s*[-+]?\d+\s*$"
_NAMES = {",": "comma", ";": "semicolon", "\t": "tab"}


@dataclass(frozen=True, slots=True)
class CsvOptions:
    """How to read a CSV capture: ``separator`` (``None``: detect) and ``decimal_comma``
    (``None``: only with ``;`` or tab; ``True``: always)."""

    separator: str | None = None
    decimal_comma: bool | None = None

    def __post_init__(self) -> None:
        if self.separator is not None and len(self.separator) != 1:
            msg = f"CSV separator {self.separator!r}: one character (',', ';' or tab)"
            raise InputError(msg)


def separator_name(sep: str) -> str:
    """``semicolon`` for ``;``, as messages say it."""
    return _NAMES.get(sep, repr(sep))


def detect_separator(header: str) -> str:
    """The separator the header line uses (see the module)."""
    outside, quoted = [], False
    for char in header:
        if char == '"':
            quoted = not quoted
        elif not quoted:
            outside.append(char)
    text = "".join(outside)
    counts = {sep: text.count(sep) for sep in SEPARATORS}
    best = max(SEPARATORS, key=lambda s: (counts[s], s == ","))
    return best if counts[best] else ","


def with_decimal_commas(
    frame: pl.DataFrame, sep: str, options: CsvOptions
) -> tuple[pl.DataFrame, tuple[str, ...]]:
    """Text columns holding only decimal-comma numbers, as Float64 (see the module), and
    their names."""
    if options.decimal_comma is False or (options.decimal_comma is None and sep == ","):
        return frame, ()
    changes = []
    for name, dtype in frame.schema.items():
        if dtype != pl.String:
            continue
        values = frame[name].drop_nulls()
        if values.is_empty() or not values.str.contains(",").any():
            continue
        if not values.str.contains(_DECIMAL_COMMA).all():
            continue
        number = (
            pl.col(name)
            .str.strip_chars()
            .str.replace_all(".", "", literal=True)
            .str.replace(",", ".", literal=True)
            .cast(pl.Float64, strict=False)
        )
        changes.append(number.alias(name))
    if not changes:
        return frame, ()
    return frame.with_columns(changes), tuple(c.meta.output_name() for c in changes)


def csv_notes(sep: str, given: bool, converted: tuple[str, ...]) -> tuple[str, ...]:
    """What the summary says about how a CSV was read (nothing for a plain comma CSV)."""
    notes = []
    if sep != ",":
        how = "--separator" if given else "detected from the header line"
        notes.append(f"CSV: {separator_name(sep)}-separated ({how})")
    if converted:
        names = ", ".join(f"'{c}'" for c in converted)
        notes.append(f"CSV: decimal commas read as numbers in {names}")
    return tuple(notes)


def locate_problem(data: bytes, sep: str, name: str) -> str:
    """The first reason ``data`` is not a table (file, line, column), in our words."""
    csv.field_size_limit(sys.maxsize)
    text = io.StringIO(data.decode("utf-8", errors="replace"), newline="")
    reader = csv.reader(text, delimiter=sep)
    width: int | None = None
    try:
        for row in reader:
            line = reader.line_num
            for column, cell in enumerate(row, start=1):
                if "\x00" in cell:
                    return f"{name}, line {line}, column {column}: a NUL byte (not a text CSV?)"
            if width is None:
                width = len(row)
                continue
            if row and len(row) != width:
                column = min(len(row), width) + 1
                return (
                    f"{name}, line {line}, column {column}: {len(row)} fields where the header "
                    f"has {width} ({separator_name(sep)}-separated; give --separator if that "
                    "is not the file's separator)"
                )
    except csv.Error:
        if "\x00" in text.getvalue():
            line = text.getvalue().count("\n", 0, text.getvalue().index("\x00")) + 1
            return f"{name}, line {line}: a NUL byte (not a text CSV?)"
        return f"{name}, line {reader.line_num}: a quoted field does not end (unbalanced quote)"
    return f"{name}: not readable as a {separator_name(sep)}-separated table"
