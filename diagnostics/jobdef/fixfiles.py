"""The fix folder a person reads and runs: FIX.md (what changes, what it costs and gains),
``apply.sh`` (the ``az`` commands that apply it) and :func:`write_fix`, which writes them with
the corrected definition and query of :mod:`diagnostics.jobdef.fix`.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from diagnostics.errors import InputError, Setting
from diagnostics.jobdef.definition import LATE, OUT_OF_ORDER, POLICY
from diagnostics.jobdef.fix import (
    DEFINITION_SUFFIX,
    Fix,
    corrected_document,
    query_diff,
    source_clause,
)
from diagnostics.words import noun, plural


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
        ("release delay, 95th percentile", f"{b.delay_p95_s:g} s", f"{a.delay_p95_s:g} s"),
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
        f"Cost: the release delay (95th percentile of arrival to output) goes from "
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
            "| change | late | out of order | held back | release delay p95 |",
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
