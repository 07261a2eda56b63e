"""The aggregate tables a rule may read, with their columns (docs/schemas.md).

The definitions are those of :mod:`diagnostics.aggregates.schema` (the one place a table's
columns are defined); the rules read :attr:`TableSpec.columns` (name -> logical type) and
:attr:`TableSpec.time_column`.

Invariant: every column a rule names (in ``where``, the aggregate, ``group_by``) is checked
against :data:`TABLES` when the rules load, so evaluation never meets an unknown column in a
well-formed aggregate folder.
"""

from __future__ import annotations

from diagnostics.aggregates.schema import TABLES, ColumnType, TableName, TableSpec

__all__ = ["TABLES", "ColumnType", "TableName", "TableSpec"]
