"""Writing the corrected job: the definition in the input's shape, the new query, the ``az``
commands that apply it and FIX.md (what changes, what it costs and gains).

Only the three policy properties and the query change; every other value of the document is
copied as read (the same JSON value, keys in the same order).
"""

from __future__ import annotations

import copy
import difflib
import json
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from diagnostics.durations import SECOND, format_duration
from diagnostics.engine.policy import OrderingPolicy
from diagnostics.errors import InputError, Setting
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
from diagnostics.words import noun, plural

DEFINITION_SUFFIX = ".fixed.json"


@dataclass(frozen=True, slots=True)
class Outcome:
    """Counts of a replay: events adjusted or dropped per kind, and the output delay."""

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


def _seconds(value: int | None) -> str:
    return "unlimited (-1)" if value is None else f"{value} s"


def apply_script(fix: Fix) -> str:
    """``apply.sh``: the ``az`` commands that apply the fix to the running job."""
    d = fix.job.definition
    group = d.resource_group or "<resource group>"
    name = d.name if d.name and not d.name.startswith("[") else "<job name>"
    if not fix.changes_properties and fix.query is None:
        return "#!/usr/bin/env bash\n# Nothing to apply: the job's settings and query stay as they are.\n"
    lines = [
        "#!/usr/bin/env bash",
        f"# Applies the fix orderdoc wrote for {name} (see FIX.md). Needs the Azure CLI",
        "# with the stream-analytics extension, signed in. Stop the job first if it runs:",
        '#   az stream-analytics job stop --resource-group "$RESOURCE_GROUP" --name "$JOB_NAME"',
        "set -euo pipefail",
        f"RESOURCE_GROUP=${{RESOURCE_GROUP:-{shlex.quote(group)}}}",
        f"JOB_NAME=${{JOB_NAME:-{shlex.quote(name)}}}",
        'HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"',
    ]
    if fix.changes_properties:
        lines += [
            "",
            'az stream-analytics job update --resource-group "$RESOURCE_GROUP" --name "$JOB_NAME" \\',
            f"    --arrival-max-delay {-1 if fix.late_seconds is None else fix.late_seconds} "
            f"--order-max-delay {fix.ooo_seconds} "
            f"--out-of-order-policy {fix.policy.action.value.capitalize()}",
        ]
    if fix.query is not None:
        lines += [
            "",
            'az stream-analytics transformation update --resource-group "$RESOURCE_GROUP" \\',
            f'    --job-name "$JOB_NAME" --name {shlex.quote(d.transformation_name)} \\',
            '    --saql "$(cat "$HERE/query.asaql")"',
        ]
    return "\n".join(lines) + "\n"


def query_diff(fix: Fix) -> str:
    """The unified diff of the query (empty when unchanged)."""
    old = fix.job.query.text if fix.job.query else ""
    if fix.query is None:
        return ""
    lines = difflib.unified_diff(
        old.splitlines(), fix.query.splitlines(), "query (before)", "query (after)", lineterm=""
    )
    return "\n".join(lines) + "\n"


#: How to measure a fix written without a capture, in words (the command line says it with
#: its flags, the app with its Load page).
MEASURE_HINT = "explain a capture of the input with the job definition and write the fix again"


def _outcome_rows(fix: Fix, measure_hint: str = MEASURE_HINT) -> list[str]:
    b, a = fix.before, fix.after
    if b is None or a is None:
        return [
            f"No capture was given, so the change is not measured: {measure_hint} to measure it.",
            "",
        ]
    rows = [
        ("late events (LateInputEvent)", b.late, a.late),
        ("out-of-order events (OutOfOrderEvent)", b.out_of_order, a.out_of_order),
        ("early events (EarlyInputEvent, dropped)", b.early, a.early),
        ("events dropped", b.dropped, a.dropped),
        ("events held back more than 5 s by another partition", b.held_back, a.held_back),
        ("output delay, 95th percentile", f"{b.delay_p95_s:g} s", f"{a.delay_p95_s:g} s"),
    ]
    out = ["| measured on the capture | before | after |", "|---|---:|---:|"]
    out += [f"| {what} | {x} | {y} |" for what, x, y in rows]
    out.append("")
    if not fix.changes_anything:
        out += ["The job is left as it is: nothing is gained or lost.", ""]
        return out
    if b.targeted:
        kept = b.targeted - a.targeted
        out.append(
            f"Gain: {kept} of {b.targeted} late or out-of-order events ({kept / b.targeted:.0%}) "
            "keep the time they were sent with instead of being adjusted or dropped."
        )
    if b.held_back:
        freed = b.held_back - a.held_back
        out.append(
            f"Gain: {freed} of {b.held_back} events ({freed / b.held_back:.0%}) are no longer "
            "held back by a slower or silent partition."
        )
    cost = a.delay_p95_s - b.delay_p95_s
    out.append(
        f"Cost: the output delay (95th percentile of arrival to output) goes from "
        f"{b.delay_p95_s:g} s to {a.delay_p95_s:g} s"
        + (f" ({cost:+g} s)." if cost > 0 else " (no added delay).")
    )
    if a.held_back > b.held_back:
        out.append(
            f"Cost: {a.held_back - b.held_back} more events are held back more than 5 s "
            f"(from {b.held_back} to {a.held_back}): their output waits for other partitions."
        )
    if a.dropped > b.dropped:
        out.append(f"Cost: {a.dropped - b.dropped} more events are dropped.")
    out.append("")
    return out


def _input_line(fix: Fix) -> str:
    """``Input telemetry: Stream (Microsoft.ServiceBus/EventHub); the query reads it 1 time,
    in step Readings.``"""
    job = fix.job
    kind = job.input.kind + (f" ({job.input.source})" if job.input.source else "")
    steps = sorted({r.step for r in job.reads if r.step})
    where = f", in {noun(len(steps), 'step')} {', '.join(steps)}" if steps else ""
    reads = plural(len(job.reads), "time")
    return f"Input {job.input.name}: {kind}; the query reads it {reads}{where}."


def fix_markdown(fix: Fix, definition_file: str, measure_hint: str = MEASURE_HINT) -> str:
    """FIX.md: before/after settings, the measured effect, the query diff, how to apply
    (``measure_hint``: how to measure it, when no capture was given)."""
    d = fix.job.definition
    before = fix.before_policy
    out = [
        f"# Fix for {fix.job.describe_source()}",
        "",
        _input_line(fix),
        "",
        "| setting | before | after |",
        "|---|---|---|",
        f"| Events that arrive late ({LATE}) | {_seconds(d.late_seconds)} | {_seconds(fix.late_seconds)} |",
        f"| Out of order events ({OUT_OF_ORDER}) | {d.out_of_order_seconds} s | {fix.ooo_seconds} s |",
        f"| Handle other events ({POLICY}) | {d.action} | {fix.policy.action.value.capitalize()} |",
        f"| query: how {fix.job.input.name} is read | {source_clause(before)} | {source_clause(fix.policy)} |",
        "",
        "## Why",
        "",
        *(
            [f"- {r}" for r in fix.reasons]
            or ["- No finding asks for a change of the job's settings or query."]
        ),
        *[f"- Note: {n}." for n in fix.notes],
        "",
        "## Effect",
        "",
        *_outcome_rows(fix, measure_hint),
    ]
    if fix.rule is not None:
        out += [
            "## How the setting was chosen",
            "",
            "The capture was searched for the best setting it allows (every late-arrival "
            "tolerance its own lateness calls for, with the least out-of-order tolerance "
            "within the budget, OVER each sender column, PARTITION BY on and off), each "
            "replayed by the engine. Rule: " + fix.rule + ".",
            "",
            *([f"Recommended: {fix.recommended}.", ""] if fix.recommended else []),
            *[f"- {c.rstrip('.')}." for c in fix.choice],
            "",
        ]
        if fix.close:
            out += ["Settings that came close:", "", *[f"- {c}." for c in fix.close], ""]
    if fix.steps and fix.before is not None:
        out += [
            "## What each change costs and gains",
            "",
            "Each change applied on top of the ones above it, the capture replayed after it:",
            "",
            "| change | late | out of order | held back | output delay p95 |",
            "|---|---:|---:|---:|---:|",
            f"| (the job as it is) | {fix.before.late} | {fix.before.out_of_order} | "
            f"{fix.before.held_back} | {fix.before.delay_p95_s:g} s |",
        ]
        out += [
            f"| {change} | {o.late} | {o.out_of_order} | {o.held_back} | {o.delay_p95_s:g} s |"
            for change, o in fix.steps
        ]
        out.append("")
    if fix.advice:
        out += [
            "## Also do (no setting can do it for you)",
            "",
            *[f"- {a}" for a in fix.advice],
            "",
        ]
    diff = query_diff(fix)
    if diff:
        out += ["## Query change", "", "```diff", diff.rstrip("\n"), "```", ""]
    out += [
        "## Apply",
        "",
        f"- Deploy `{definition_file}` the way you deployed the original, or",
        "- run `apply.sh` (set RESOURCE_GROUP and JOB_NAME first; stop the job before).",
        "",
        "See docs/explain.md (Job definitions) for how every field is read and written.",
    ]
    return "\n".join(out) + "\n"


def write_fix(
    fix: Fix, out_dir: Path | str, *, measure_hint: str = MEASURE_HINT
) -> dict[str, Path]:
    """Write the corrected definition, ``query.asaql`` (when the query changed),
    ``query.diff``, ``apply.sh`` and ``FIX.md`` into ``out_dir``; returns what was written.
    ``measure_hint``: FIX.md's words for how to measure a fix made without a capture."""
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        msg = f"fix folder {out}: exists and is not a folder"
        raise InputError(msg, Setting.FIX_FOLDER)
    d = fix.job.definition
    stem = d.path.name.removesuffix(".json")
    written = {"definition": out / f"{stem}{DEFINITION_SUFFIX}"}
    try:
        out.mkdir(parents=True, exist_ok=True)
        document = corrected_document(d, fix)
        written["definition"].write_text(
            json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
        )
        if fix.query is not None:
            written["query"] = out / "query.asaql"
            written["query"].write_text(fix.query, encoding="utf-8")
            written["diff"] = out / "query.diff"
            written["diff"].write_text(query_diff(fix), encoding="utf-8")
        written["apply"] = out / "apply.sh"
        written["apply"].write_text(apply_script(fix), encoding="utf-8")
        written["apply"].chmod(0o755)
        written["fix"] = out / "FIX.md"
        text = fix_markdown(fix, written["definition"].name, measure_hint)
        written["fix"].write_text(text, encoding="utf-8")
    except OSError as exc:
        msg = f"fix folder {out}: cannot write ({exc.strerror})"
        raise InputError(msg, Setting.FIX_FOLDER) from exc
    return written
