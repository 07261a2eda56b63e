"""Input column names: input columns named like an outcome column, and CSV header cells
that are empty or repeated, get a new name (never dropped); every rename is reported.

The rule (docs/schemas.md, "Input contract"): an input column whose name is taken becomes
``input_<name>``, then ``input_<name>_2``, ``input_<name>_3``, ... whichever is free first.
An empty header cell in column N becomes ``column_N``; a repeated header cell ``<name>_2``,
``<name>_3``, ... An empty name elsewhere (a JSON key, an Avro body key, a Parquet column)
in position N (1-based) becomes ``column_N`` too.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum

import polars as pl

from diagnostics.engine.columns import OUTCOME_COLUMNS, EventColumns

#: Names an input column may not keep: the outcome columns and the replay's working columns.
RESERVED: tuple[str, ...] = (
    *OUTCOME_COLUMNS,
    EventColumns().row,
    EventColumns().parsed_arrival,
)


class RenameReason(StrEnum):
    """Why an input column was renamed."""

    OUTCOME = "named like an outcome column"
    PATTERN = "a name read as a wildcard or regular expression"
    CAPTURE = "named like an Event Hubs Capture column"
    EMPTY = "empty header cell"
    REPEATED = "repeated header cell"
    EMPTY_NAME = "empty name"


#: Renames that no setting can name the column by (its name is empty or repeated).
_UNNAMEABLE = (RenameReason.EMPTY, RenameReason.REPEATED, RenameReason.EMPTY_NAME)


@dataclass(frozen=True, slots=True)
class Rename:
    """Input column ``column`` is ``renamed`` in the outcomes, for ``reason``."""

    column: str
    renamed: str
    reason: RenameReason

    def to_dict(self) -> dict[str, str]:
        """``{"column", "renamed", "reason"}`` for JSON summaries."""
        return {"column": self.column, "renamed": self.renamed, "reason": self.reason.value}

    def describe(self) -> str:
        """``'late' -> 'input_late' (named like an outcome column)``."""
        return f"'{self.column}' -> '{self.renamed}' ({self.reason.value})"


def free_name(base: str, taken: set[str]) -> str:
    """``base`` if free, else ``base_2``, ``base_3``, ... (the first one not in ``taken``)."""
    if base not in taken:
        return base
    n = 2
    while f"{base}_{n}" in taken:
        n += 1
    return f"{base}_{n}"


def is_pattern(name: str) -> bool:
    """Whether polars reads column name ``name`` as a wildcard (``*``) or a regular
    expression (``^...$``) instead of a name."""
    return name == "*" or (len(name) > 1 and name.startswith("^") and name.endswith("$"))


def rename_taken(
    frame: pl.DataFrame,
    reserved: Iterable[str] = RESERVED,
    reason: RenameReason = RenameReason.OUTCOME,
) -> tuple[pl.DataFrame, tuple[Rename, ...]]:
    """``frame`` with every column named in ``reserved`` (or named like a pattern, see
    :func:`is_pattern`) renamed ``input_<name>`` (or the first free ``input_<name>_N``);
    order and values unchanged."""
    blocked = set(reserved)
    clashes = [c for c in frame.columns if c in blocked or is_pattern(c)]
    if not clashes:
        return frame, ()
    taken = set(frame.columns) | blocked
    renames = []
    for column in clashes:
        new = free_name(f"input_{column}", taken)
        taken.add(new)
        why = reason if column in blocked else RenameReason.PATTERN
        renames.append(Rename(column, new, why))
    return frame.rename({r.column: r.renamed for r in renames}), tuple(renames)


def unique_header(cells: Sequence[str]) -> tuple[list[str], tuple[Rename, ...]]:
    """Header cells made unique: empty cell N -> ``column_N``, repeats -> ``<name>_2``, ..."""
    taken = {c for c in cells if c}
    seen: set[str] = set()
    names: list[str] = []
    renames: list[Rename] = []
    for position, cell in enumerate(cells, start=1):
        if not cell:
            new = free_name(f"column_{position}", taken | seen)
            renames.append(Rename(cell, new, RenameReason.EMPTY))
        elif cell in seen:
            new = free_name(cell, taken | seen)
            renames.append(Rename(cell, new, RenameReason.REPEATED))
        else:
            new = cell
        seen.add(new)
        names.append(new)
    return names, tuple(renames)


def name_empty(names: Sequence[str], taken: Iterable[str] = ()) -> list[str]:
    """``names`` with each empty one, in position N (1-based), named ``column_N`` (or the
    first free ``column_N_2``, ...); the other names unchanged."""
    used = {n for n in names if n} | set(taken)
    out = []
    for position, name in enumerate(names, start=1):
        if not name:
            name = free_name(f"column_{position}", used)
            used.add(name)
        out.append(name)
    return out


def rename_empty(frame: pl.DataFrame) -> tuple[pl.DataFrame, tuple[Rename, ...]]:
    """``frame`` with a column of empty name renamed as :func:`name_empty` says."""
    if "" not in frame.columns:
        return frame, ()
    names = name_empty(frame.columns)
    renames = tuple(
        Rename("", new, RenameReason.EMPTY_NAME)
        for old, new in zip(frame.columns, names, strict=True)
        if old != new
    )
    frame = frame.clone()
    frame.columns = names
    return frame, renames


def renamed(name: str, renames: Iterable[Rename]) -> str:
    """The name input column ``name`` has after ``renames`` (the first rename of it wins:
    a repeated header cell's first occurrence keeps the name)."""
    for rename in renames:
        if rename.column == name and rename.reason not in _UNNAMEABLE:
            return rename.renamed
    return name
