"""A :class:`Report` as text (terminal), JSON or Markdown."""

from __future__ import annotations

import json
import textwrap
from enum import StrEnum

from diagnostics.explain.model import Finding, Recommended, Report, SnippetForm, Suggestion
from diagnostics.explain.readable import (
    cause_label,
    evidence_lines,
    impact_sentence,
    plural,
    suggestion_label,
)


class Format(StrEnum):
    """Output formats of ``orderdoc explain``."""

    TEXT = "text"
    JSON = "json"
    MARKDOWN = "markdown"


_MARK = {"critical": "[CRITICAL]", "warning": "[WARNING]", "info": "[info]"}


def _job(finding: Finding) -> str:
    """``"Job MYJOB: "`` for a finding about a named job, else nothing."""
    return f"Job {finding.job}: " if finding.job else ""


def text_finding(number: int, finding: Finding) -> list[str]:
    data = finding.to_dict()
    lines = [
        f"{number}. {_MARK[data['severity']]} {_job(finding)}{finding.title}  "
        f"(cause: {cause_label(finding.cause.value)}, "
        f"confidence {data['confidence']:.0%})"
    ]
    lines += textwrap.wrap(finding.explanation, 96, initial_indent="   ", subsequent_indent="   ")
    lines.append("   evidence:")
    for label, value in evidence_lines(finding.evidence):
        lines += textwrap.wrap(
            f"{label}: {value}", 96, initial_indent="     ", subsequent_indent="       "
        )
    lines += textwrap.wrap(
        f"impact: {impact_sentence(finding.impact)}",
        96,
        initial_indent="   ",
        subsequent_indent="     ",
    )
    if finding.suggestions:
        lines.append("   do this:")
        lines += [
            f"     - {suggestion_label(s.kind.value)}: {s.snippet}" for s in finding.suggestions
        ]
    lines += [f"   left out: {why}" for why in finding.left_out]
    return lines


def recommended_lines(rec: Recommended) -> list[str]:
    """The one recommended setting, its numbers, why its clauses, what came close."""
    return [
        f"recommended setting for this capture: {rec.setting}",
        f"  measured: {rec.numbers}",
        *[f"  {n}" for n in rec.notes],
        *[f"  came close: {c}" for c in rec.close],
        f"  rule: {rec.rule}",
    ]


def to_text(report: Report) -> str:
    """A readable report for the terminal."""
    head = (
        f"orderdoc explain: {plural(len(report.findings), 'finding')} from "
        f"{', '.join(report.sources)}"
    )
    if report.policy:
        head += f"\npolicy: {report.policy}"
    for line in report.tolerances:
        head += "\n" + "\n".join(
            textwrap.wrap(line, 96, initial_indent="tolerances: ", subsequent_indent="  ")
        )
    if report.senders is not None:
        head += f"\n{report.senders.line}"
    body: list[str] = [head, ""]
    if report.recommended is not None:
        body += [*recommended_lines(report.recommended), ""]
    for i, finding in enumerate(report.findings, start=1):
        body += [*text_finding(i, finding), ""]
    return "\n".join(body).rstrip() + "\n"


def to_markdown(report: Report, *, level: int = 2) -> str:
    """The report as Markdown (findings as sections, evidence as a table)."""
    h = "#" * level
    out = [f"{h} Findings", "", f"Sources: {', '.join(report.sources)}."]
    if report.policy:
        out.append(f"Policy: `{report.policy}`.")
    out += [f"Tolerances: {line}." for line in report.tolerances]
    if report.senders is not None:
        out.append(f"Sender column: `{report.senders.column or 'none'}` ({report.senders.reason}).")
    out.append("")
    if report.recommended is not None:
        r = report.recommended
        out += [f"**Recommended setting for this capture:** {r.setting} ({r.numbers}).", ""]
        out += [f"- {n}." for n in r.notes] + [f"- Came close: {c}." for c in r.close]
        out += ["", f"Rule: {r.rule}.", ""]
    for i, finding in enumerate(report.findings, start=1):
        data = finding.to_dict()
        out += [
            f"{h}# {i}. {_job(finding)}{finding.title}",
            "",
            f"**{data['severity']}** · cause: {cause_label(data['cause'])} · confidence {data['confidence']:.0%}",
            "",
            finding.explanation,
            "",
            "| evidence | value |",
            "|---|---|",
        ]
        out += [
            f"| {label} | {value.replace('|', '/')} |"
            for label, value in evidence_lines(finding.evidence)
        ]
        out += ["", f"Impact: {impact_sentence(finding.impact)}", ""]
        if finding.suggestions:
            out.append("Suggested changes:")
            out.append("")
            out += [
                f"- **{suggestion_label(s.kind.value)}**: {_snippet_markdown(s)}"
                for s in finding.suggestions
            ]
            out += [f"- Left out: {why}." for why in finding.left_out]
            out.append("")
    return "\n".join(out)


def _snippet_markdown(s: Suggestion) -> str:
    """Query text and settings as code, sentences as text."""
    return s.snippet if s.form is SnippetForm.PROSE else f"`{s.snippet}`"


def render(report: Report, fmt: Format | str = Format.TEXT) -> str:
    """``report`` in ``fmt``."""
    chosen = Format(fmt)
    if chosen is Format.JSON:
        return json.dumps(report.to_dict(), indent=2, default=str) + "\n"
    if chosen is Format.MARKDOWN:
        return to_markdown(report)
    return to_text(report)
