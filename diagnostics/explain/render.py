"""A :class:`Report` as text (terminal), JSON or Markdown."""

from __future__ import annotations

import json
import textwrap
from enum import StrEnum
from typing import Any

from diagnostics.explain.model import Finding, Report


class Format(StrEnum):
    """Output formats of ``orderdoc explain``."""

    TEXT = "text"
    JSON = "json"
    MARKDOWN = "markdown"


_MARK = {"critical": "[CRITICAL]", "warning": "[WARNING]", "info": "[info]"}


def _short(value: Any, limit: int = 160) -> str:
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _job(finding: Finding) -> str:
    """``"Job MYJOB: "`` for a finding about a named job, else nothing."""
    return f"Job {finding.job}: " if finding.job else ""


def text_finding(number: int, finding: Finding) -> list[str]:
    data = finding.to_dict()
    lines = [
        f"{number}. {_MARK[data['severity']]} {_job(finding)}{finding.title}  "
        f"({finding.cause.value}, "
        f"confidence {data['confidence']:.0%})"
    ]
    lines += textwrap.wrap(finding.explanation, 96, initial_indent="   ", subsequent_indent="   ")
    lines.append("   evidence:")
    lines += [
        f"     {k}: {_short(v)}" for k, v in data["evidence"].items() if v not in (None, {}, [])
    ]
    lines.append(f"   impact: {_short(data['impact'], 200)}")
    if finding.suggestions:
        lines.append("   do this:")
        lines += [f"     - [{s.kind.value}] {s.snippet}" for s in finding.suggestions]
    return lines


def to_text(report: Report) -> str:
    """A readable report for the terminal."""
    head = f"orderdoc explain: {len(report.findings)} finding(s) from {', '.join(report.sources)}"
    if report.policy:
        head += f"\npolicy: {report.policy}"
    body: list[str] = [head, ""]
    for i, finding in enumerate(report.findings, start=1):
        body += [*text_finding(i, finding), ""]
    return "\n".join(body).rstrip() + "\n"


def to_markdown(report: Report, *, level: int = 2) -> str:
    """The report as Markdown (findings as sections, evidence as a table)."""
    h = "#" * level
    out = [f"{h} Findings", "", f"Sources: {', '.join(report.sources)}."]
    if report.policy:
        out.append(f"Policy: `{report.policy}`.")
    out.append("")
    for i, finding in enumerate(report.findings, start=1):
        data = finding.to_dict()
        out += [
            f"{h}# {i}. {_job(finding)}{finding.title}",
            "",
            f"**{data['severity']}** · cause `{data['cause']}` · confidence {data['confidence']:.0%}",
            "",
            finding.explanation,
            "",
            "| evidence | value |",
            "|---|---|",
        ]
        out += [
            f"| {k} | `{_short(v).replace('|', '/')}` |"
            for k, v in data["evidence"].items()
            if v not in (None, {}, [])
        ]
        out += ["", f"Impact: `{_short(data['impact'], 300)}`", ""]
        if finding.suggestions:
            out.append("Suggested changes:")
            out.append("")
            out += [f"- **{s.kind.value}**: `{s.snippet}`" for s in finding.suggestions]
            out.append("")
    return "\n".join(out)


def render(report: Report, fmt: Format | str = Format.TEXT) -> str:
    """``report`` in ``fmt``."""
    chosen = Format(fmt)
    if chosen is Format.JSON:
        return json.dumps(report.to_dict(), indent=2, default=str) + "\n"
    if chosen is Format.MARKDOWN:
        return to_markdown(report)
    return to_text(report)
