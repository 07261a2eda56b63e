"""Editing a query in place: the clauses a new policy needs, inserted at token boundaries.

Only the source clauses that read the chosen input change; every other character of the
query stays as it was (comments, layout, case, other steps). A ``TIMESTAMP BY`` expression
(``CASE ... END``, ``CAST(...)``) is one unit: ``OVER`` goes after all of it. The edited
query is parsed again before it is handed back, so a rewrite never yields a query that reads
the input differently from the policy.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from diagnostics.engine.policy import OrderingPolicy
from diagnostics.errors import InputError
from diagnostics.jobdef.query import ParsedQuery, SourceRef, parse_query
from diagnostics.words import plural

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


def _lower(keys: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(k.lower() for k in keys)


def _timestamp_edit(ref: SourceRef, policy: OrderingPolicy, unify: bool) -> Edit | None:
    """With ``unify``: the policy's column in place of this read's ``TIMESTAMP BY`` (another
    column, or an expression), when they differ."""
    column, start, end = policy.timestamp_by, ref.timestamp_start, ref.timestamp_end
    if not unify or column is None or start is None or end is None:
        return None
    if (ref.timestamp_by or "").lower() == column.lower():
        return None
    return Edit(start, end, identifier(column))


def _edits_for(ref: SourceRef, policy: OrderingPolicy, unify: bool) -> list[Edit]:
    edits: list[Edit] = []
    over = f"OVER {', '.join(identifier(k) for k in policy.over)}" if policy.over else ""
    if ref.timestamp_end is None:
        if policy.timestamp_by is not None:
            clause = f" TIMESTAMP BY {identifier(policy.timestamp_by)}"
            edits.append(Edit(ref.alias_end, ref.alias_end, clause + (f" {over}" if over else "")))
    else:
        if (replaced := _timestamp_edit(ref, policy, unify)) is not None:
            edits.append(replaced)
        if ref.over_span is not None:
            start, end = ref.over_span
            if _lower(ref.over) != _lower(policy.over):
                if over:
                    edits.append(Edit(start, end, over))
                else:  # remove the OVER clause and the blank before it
                    edits.append(Edit(ref.timestamp_end, end, ""))
        elif over:
            edits.append(Edit(ref.timestamp_end, ref.timestamp_end, f" {over}"))
    if policy.partition_by and ref.partition_by is None:
        edits.append(Edit(ref.clause_end, ref.clause_end, " PARTITION BY PartitionId"))
    return edits


def _check(
    old: ParsedQuery, new: str, input_name: str, policy: OrderingPolicy, unify: bool
) -> None:
    """The edited query reads ``input_name`` as ``policy`` says, in as many places as before."""
    before = old.reads(input_name)
    try:
        after = parse_query(new).reads(input_name)
    except InputError as exc:
        msg = f"query: editing the reads of {input_name} would break the query ({exc})"
        raise InputError(msg) from exc
    problems: list[str] = []
    if len(after) != len(before):
        problems.append(f"it reads the input {plural(len(after), 'time')}, not {len(before)}")
    for old_ref, ref in zip(before, after, strict=False):
        if policy.timestamp_by is None:
            continue
        if ref.timestamp_text is None:
            problems.append("a read lost its TIMESTAMP BY")
        elif unify and (ref.timestamp_by or "").lower() != policy.timestamp_by.lower():
            problems.append(f"a read says TIMESTAMP BY {ref.timestamp_text}")
        elif not unify and old_ref.timestamp_text not in (None, ref.timestamp_text):
            problems.append(f"TIMESTAMP BY {old_ref.timestamp_text} changed")
        if _lower(ref.over) != _lower(policy.over):
            problems.append(f"a read has OVER {', '.join(ref.over) or '(none)'}")
        if policy.partition_by and ref.partition_by is None:
            problems.append("a read has no PARTITION BY")
    if problems:
        msg = (
            f"query: orderdoc cannot edit how the query reads {input_name} safely "
            f"({'; '.join(dict.fromkeys(problems))}); change the query by hand"
        )
        raise InputError(msg)


def rewrite_query(
    parsed: ParsedQuery, input_name: str, policy: OrderingPolicy, *, unify: bool = False
) -> str:
    """The query with every read of ``input_name`` carrying ``policy``'s clauses.

    A read's ``TIMESTAMP BY`` stays as written (an expression too: the policy's column stood
    in for it) unless ``unify``: then every read says ``TIMESTAMP BY <the policy's column>``,
    for an input the query read with different clauses. An edit that would not parse back to
    the policy is an :class:`InputError` instead of a broken query."""
    edits: list[Edit] = []
    for ref in parsed.reads(input_name):
        edits += _edits_for(ref, policy, unify)
    text = parsed.text
    # Right to left, so offsets stay valid; at one offset the later edit goes in first, so
    # that the earlier one ends up before it (OVER before PARTITION BY).
    for _, edit in sorted(enumerate(edits), key=lambda p: (p[1].start, p[0]), reverse=True):
        text = text[: edit.start] + edit.new + text[edit.end :]
    _check(parsed, text, input_name, policy, unify)
    return text
