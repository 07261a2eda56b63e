"""Which input a query reads, and its TIMESTAMP BY column, when no job definition says so."""

from __future__ import annotations

from diagnostics.jobdef.query import parse_query


def inputs_read(text: str) -> list[str]:
    """The sources the query reads that are not its own WITH steps (case-insensitive,
    sorted)."""
    parsed = parse_query(text)
    steps = {s.lower() for s in parsed.steps}
    names: dict[str, str] = {}
    for ref in parsed.sources:
        if ref.name.lower() not in steps:
            names.setdefault(ref.name.lower(), ref.name)
    return sorted(names.values(), key=str.lower)


def timestamp_column(text: str, input_name: str) -> str | None:
    """The query's TIMESTAMP BY column for ``input_name`` when every read says the same."""
    columns = {r.timestamp_by for r in parse_query(text).reads(input_name)}
    return columns.pop() if len(columns) == 1 else None
