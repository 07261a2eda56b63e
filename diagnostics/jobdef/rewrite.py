"""Editing a query in place: the clauses a new policy needs, inserted at token boundaries.

Only the source clauses that read the chosen input change; every other character of the
query stays as it was (comments, layout, case, other steps).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from diagnostics.engine.policy import OrderingPolicy
from diagnostics.jobdef.query import ParsedQuery, SourceRef

_PLAIN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def identifier(path: str) -> str:
    """A column path as query text: each part bracketed unless it is a plain name."""
    return ".".join(
        p if _PLAIN.match(p) else "[" + p.replace("]", "]]") + "]" for p in path.split(".")
    )


@dataclass(frozen=True, slots=True)
class Edit:
    """Replace ``text[start:end]`` with ``new`` (``start == end``: an insertion)."""

    start: int
    end: int
    new: str


def _edits_for(ref: SourceRef, policy: OrderingPolicy) -> list[Edit]:
    edits: list[Edit] = []
    over = f"OVER {', '.join(identifier(k) for k in policy.over)}" if policy.over else ""
    if ref.timestamp_end is None:
        if policy.timestamp_by is not None:
            clause = f" TIMESTAMP BY {identifier(policy.timestamp_by)}"
            edits.append(Edit(ref.alias_end, ref.alias_end, clause + (f" {over}" if over else "")))
    elif ref.over_span is not None:
        start, end = ref.over_span
        if tuple(k.lower() for k in ref.over) != tuple(k.lower() for k in policy.over):
            if over:
                edits.append(Edit(start, end, over))
            else:  # remove the OVER clause and the blank before it
                edits.append(Edit(ref.timestamp_end, end, ""))
    elif over:
        edits.append(Edit(ref.timestamp_end, ref.timestamp_end, f" {over}"))
    if policy.partition_by and ref.partition_by is None:
        edits.append(Edit(ref.clause_end, ref.clause_end, " PARTITION BY PartitionId"))
    return edits


def rewrite_query(parsed: ParsedQuery, input_name: str, policy: OrderingPolicy) -> str:
    """The query with every read of ``input_name`` carrying ``policy``'s clauses."""
    edits: list[Edit] = []
    for ref in parsed.reads(input_name):
        edits += _edits_for(ref, policy)
    text = parsed.text
    # Right to left, so offsets stay valid; at one offset the later edit goes in first, so
    # that the earlier one ends up before it (OVER before PARTITION BY).
    for _, edit in sorted(enumerate(edits), key=lambda p: (p[1].start, p[0]), reverse=True):
        text = text[: edit.start] + edit.new + text[edit.end :]
    return text
