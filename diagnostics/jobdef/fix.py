"""The corrected job: the definition in the input's shape and the new query (the files a
person reads and runs, FIX.md and ``apply.sh``, are :mod:`diagnostics.jobdef.fixfiles`).

Only the three policy properties and the query change; every other value of the document is
copied as read (the same JSON value, keys in the same order).
"""

from __future__ import annotations

import copy
import difflib
from dataclasses import dataclass, field
from typing import Any

from diagnostics.durations import SECOND, format_duration
from diagnostics.engine.policy import OrderingPolicy
from diagnostics.errors import InputError
from diagnostics.jobdef.definition import (
    LATE,
    OUT_OF_ORDER,
    POLICY,
    JobDefinition,
    Shape,
    arm_literal,
    get_path,
)
from diagnostics.jobdef.job import JobPolicy
from diagnostics.jobdef.rewrite import identifier, rewrite_query

DEFINITION_SUFFIX = ".fixed.json"


@dataclass(frozen=True, slots=True)
class Outcome:
    """Counts of a replay: events adjusted or dropped per kind, and the release delay."""

    late: int
    out_of_order: int
    early: int
    dropped: int
    delay_p95_s: float
    held_back: int = 0
    #: events late or out of order, each once (an event can be both); ``None``: not
    #: counted, taken as late plus out-of-order
    late_or_out_of_order: int | None = None

    @property
    def targeted(self) -> int:
        """Events a policy can change: late or out of order, each event once."""
        if self.late_or_out_of_order is not None:
            return self.late_or_out_of_order
        return self.late + self.out_of_order


@dataclass(frozen=True, slots=True)
class Fix:
    """A corrected job: the policy to apply, the new query text (``None``: unchanged), why,
    and (with a capture) the measured before/after."""

    job: JobPolicy
    policy: OrderingPolicy
    query: str | None
    reasons: tuple[str, ...] = ()
    advice: tuple[str, ...] = ()
    before: Outcome | None = None
    after: Outcome | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)
    #: each change applied in turn, with the capture replayed after it
    steps: tuple[tuple[str, Outcome], ...] = ()
    #: the policy the "before" was replayed under, when not the definition's (overridden)
    current: OrderingPolicy | None = None
    #: why the setting is the one it is (what a finding proposed and it leaves out, ...)
    choice: tuple[str, ...] = ()
    #: the settings that came close, with their numbers and why they lost
    close: tuple[str, ...] = ()
    #: the recommendation rule, when the setting was searched on a capture
    rule: str | None = None
    #: the recommended setting and its measured numbers, in words
    recommended: str | None = None

    @property
    def before_policy(self) -> OrderingPolicy:
        """The policy in force before the fix: the definition's, with any override."""
        return self.current or self.job.policy

    @property
    def changes_anything(self) -> bool:
        """True when the fix changes the job's settings or its query."""
        return self.policy != self.before_policy or self.query is not None

    @property
    def late_seconds(self) -> int | None:
        late = self.policy.late_arrival_ns
        return None if late is None else -(-late // SECOND)

    @property
    def ooo_seconds(self) -> int:
        return -(-self.policy.out_of_order_ns // SECOND)

    @property
    def changes_properties(self) -> bool:
        d = self.job.definition
        return (
            self.late_seconds != d.late_seconds
            or self.ooo_seconds != d.out_of_order_seconds
            or self.policy.action.value.capitalize() != d.action
        )


def _clauses(policy: OrderingPolicy) -> tuple[object, ...]:
    """What a query says about an input: TIMESTAMP BY, OVER keys, PARTITION BY."""
    return (policy.timestamp_by, tuple(k.lower() for k in policy.over), policy.partition_by)


def unifies(job: JobPolicy, policy: OrderingPolicy) -> bool:
    """True when the corrected query must read the input with ``policy``'s ``TIMESTAMP BY``
    column everywhere: the query read it with different clauses and a column was chosen."""
    return job.reads_disagree and policy.timestamp_by is not None


def build_query(job: JobPolicy, policy: OrderingPolicy) -> str | None:
    """The query with the policy's clauses for the job's input, ``None`` when unchanged.

    A ``TIMESTAMP BY`` expression the caller's column stood in for is kept as written
    (``OVER`` goes after the whole expression); an input read with different clauses is
    read with the policy's column in every step, so the written job reads back as one."""
    unify = unifies(job, policy)
    if job.query is None or (not unify and _clauses(policy) == _clauses(job.policy)):
        return None  # nothing the query says changes: leave it as written
    try:
        new = rewrite_query(job.query, job.input.name, policy, unify=unify)
    except InputError as exc:
        msg = f"{job.definition.shown_as}: {exc}"
        raise InputError(msg) from exc
    return None if new == job.query.text else new


def corrected_document(definition: JobDefinition, fix: Fix) -> Any:
    """A deep copy of the definition with the policy properties and the query replaced."""
    document = copy.deepcopy(definition.document)
    props = get_path(document, definition.properties_path)
    # A property is written only when its value changes: an unchanged one stays as it was
    # (absent, a literal or an ARM parameter reference).
    if fix.late_seconds != definition.late_seconds:
        props[LATE] = -1 if fix.late_seconds is None else fix.late_seconds
    if fix.ooo_seconds != definition.out_of_order_seconds:
        props[OUT_OF_ORDER] = fix.ooo_seconds
    action = fix.policy.action.value.capitalize()
    if action != definition.action:
        props[POLICY] = action
    if fix.query is not None and definition.query_path is not None:
        parent = get_path(document, definition.query_path[:-1])
        query = arm_literal(fix.query) if definition.shape is Shape.ARM_TEMPLATE else fix.query
        parent[definition.query_path[-1]] = query
    return document


def source_clause(policy: OrderingPolicy) -> str:
    """``TIMESTAMP BY ts OVER key PARTITION BY PartitionId`` (what the query says)."""
    parts = []
    if policy.timestamp_by:
        parts.append(f"TIMESTAMP BY {identifier(policy.timestamp_by)}")
        if policy.over:
            parts.append(f"OVER {', '.join(identifier(k) for k in policy.over)}")
    if policy.partition_by:
        parts.append("PARTITION BY PartitionId")
    return " ".join(parts) or "arrival time (no TIMESTAMP BY)"


def settings_text(policy: OrderingPolicy) -> str:
    """``late 5s, out-of-order 0s, adjust`` (the job's settings, not its query)."""
    late = (
        "unlimited" if policy.late_arrival_ns is None else format_duration(policy.late_arrival_ns)
    )
    return (
        f"late {late}, out-of-order {format_duration(policy.out_of_order_ns)}, "
        f"{policy.action.value}"
    )


def query_diff(fix: Fix) -> str:
    """The unified diff of the query (empty when unchanged)."""
    old = fix.job.query.text if fix.job.query else ""
    if fix.query is None:
        return ""
    lines = difflib.unified_diff(
        old.splitlines(), fix.query.splitlines(), "query (before)", "query (after)", lineterm=""
    )
    return "\n".join(lines) + "\n"
