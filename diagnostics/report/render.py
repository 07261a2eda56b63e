"""The demo report as Markdown and as one self-contained HTML page with plotly charts.

Charts: release delay against events adjusted or dropped for each what-if sweep
(:func:`diagnostics.whatif.chart`), and per scenario the lateness (arrival − application)
of every event by partition, from the replay's outcomes.
"""

from __future__ import annotations

import difflib
import html
from collections.abc import Sequence
from typing import Any

import polars as pl

from diagnostics.explain.model import SnippetForm, SuggestionKind
from diagnostics.explain.readable import (
    cause_label,
    evidence_lines,
    impact_sentence,
    plural,
    suggestion_label,
)
from diagnostics.explain.render import text_finding, to_markdown
from diagnostics.jobdef.fix import query_diff, settings_text, source_clause
from diagnostics.jobdef.roundtrip import RoundTrip
from diagnostics.report.pipeline import ScenarioRun
from diagnostics.whatif import chart
from diagnostics.whatif.report import format_table, recommendation

#: Suggestions that change the job's ordering policy: where the capture's one recommended
#: setting says them all at once.
_POLICY_KINDS = frozenset(
    {
        SuggestionKind.LATE_ARRIVAL_TOLERANCE,
        SuggestionKind.OUT_OF_ORDER_TOLERANCE,
        SuggestionKind.PARTITION_BY,
        SuggestionKind.TIMESTAMP_BY_OVER,
    }
)


def _best(run: ScenarioRun) -> str:
    """The top finding's fix: when its first suggestion changes the policy and the capture gave
    a recommended setting, that setting whole (tolerances, OVER, PARTITION BY: one suggestion
    alone may be only part of it); else its first suggestion."""
    top = run.report.top
    if top is None or not top.suggestions:
        return "-"
    rec = run.report.recommended
    if rec is not None and top.suggestions[0].kind in _POLICY_KINDS:
        return f"recommended setting: {rec.setting}"
    return top.suggestions[0].snippet


def summary_rows(runs: Sequence[ScenarioRun]) -> list[dict[str, Any]]:
    """One row per scenario: top cause (with the capture and from logs alone), fix, alerts."""
    rows = []
    for run in runs:
        top, logs_top = run.report.top, run.logs_report.top
        rows.append(
            {
                "scenario": run.scenario,
                "top cause": cause_label(top.cause.value) if top else "-",
                "severity": top.severity.value if top else "-",
                "top cause (logs only)": cause_label(logs_top.cause.value) if logs_top else "-",
                "fix": _best(run),
                "alerts": len(run.alerts),
                "aggregate folder": str(run.agg_dir),
            }
        )
    return rows


def to_text(runs: Sequence[ScenarioRun]) -> str:
    """The console report: each scenario's most important finding in full, then a summary."""
    lines = [""]
    for run in runs:
        lines.append(f"== {run.scenario} " + "=" * max(0, 76 - len(run.scenario)))
        if run.report.top is not None:
            lines += text_finding(1, run.report.top)
        if run.whatif is not None:
            lines.append(f"   what-if {recommendation(run.whatif)} ({run.folder / 'whatif'})")
        if run.fix is not None:
            lines += [f"   {line}" for line in fix_lines(run.fix)]
        others = len(run.report.findings) - 1
        if others > 0:
            more = plural(others, "more finding", "more findings")
            lines.append(f"   (+{more} in {run.folder / 'explain.json'})")
        lines.append("")
    lines += ["orderdoc demo: what each scenario's analysis found", ""]
    for row in summary_rows(runs):
        lines.append(
            f"  {row['scenario']:<22} {row['severity']:<8} {row['top cause']:<18} "
            f"(logs only: {row['top cause (logs only)']}; alerts: {row['alerts']})"
        )
        lines.append(f"  {'':<22} -> {row['fix']}")
    return "\n".join(lines) + "\n"


def to_markdown_report(runs: Sequence[ScenarioRun], app_hint: str) -> str:
    """report.md: the summary table, then each scenario's findings, alerts and sweep."""
    rows = summary_rows(runs)
    out = [
        "# orderdoc demo report",
        "",
        "Each bundled scenario (sample_logs/scenarios) was generated, replayed under ASA's "
        "default policy (TIMESTAMP BY event_time, late 5 s, out-of-order 0 s, Adjust), "
        "aggregated, explained (from the logs alone and with the capture) and checked "
        "against the alert rules.",
        "",
        f"Open the app on a result: `{app_hint}`",
        "",
        "| scenario | severity | top cause | logs only | fix | alerts |",
        "|---|---|---|---|---|---|",
    ]
    out += [
        f"| {r['scenario']} | {r['severity']} | {r['top cause']} | {r['top cause (logs only)']} "
        f"| `{r['fix']}` | {r['alerts']} |"
        for r in rows
    ]
    for run in runs:
        out += ["", f"## {run.scenario}", "", f"Aggregate folder: `{run.agg_dir}`", ""]
        out.append(to_markdown(run.report, level=3))
        out += ["", "### Alerts", ""]
        out += [f"- **{a['severity']}** {a['title']} ({a['state']})" for a in run.alerts] or [
            "No alert fired."
        ]
        if run.fix is not None:
            out += ["", *fix_markdown(run.fix)]
        if run.whatif is not None:
            out += ["", "### What-if sweep", "", "```", format_table(run.whatif), "```"]
            out.append(f"Charts: `{run.folder / 'whatif'}` (whatif.html, whatif.csv, whatif.json).")
    return "\n".join(out) + "\n"


def _why_no_change(trip: RoundTrip) -> str:
    """What to do when a job with findings keeps its definition: their advice (a sender's
    clock, a separate backfill job, scaling out), which FIX.md lists too."""
    if not trip.fix.advice:
        return ""
    return " to its event ordering settings or query; do the advice above instead (FIX.md)"


def fix_lines(trip: RoundTrip) -> list[str]:
    """The corrected job in a few lines: before, after, measured effect, where it is."""
    fix = trip.fix
    if not fix.changes_anything:
        return [f"fix: {fix.job.definition.path.name} needs no change{_why_no_change(trip)}"]
    lines = [
        f"fix: {fix.job.definition.path.name}: {source_clause(fix.before_policy)}, "
        f"{settings_text(fix.before_policy)}",
        f"  -> {source_clause(trip.replayed.policy)}, {settings_text(trip.replayed.policy)}",
    ]
    if fix.before is not None and trip.after is not None:
        b, a = fix.before, trip.after
        lines.append(
            f"  replayed: late {b.late} -> {a.late}, out of order {b.out_of_order} -> "
            f"{a.out_of_order}, held back {b.held_back} -> {a.held_back}, release delay p95 "
            f"{b.delay_p95_s:g} s -> {a.delay_p95_s:g} s"
        )
    lines.append(f"  files: {trip.written['definition'].parent}")
    return lines


def fix_markdown(trip: RoundTrip) -> list[str]:
    """The corrected job as Markdown: settings, measured effect and the query diff."""
    fix = trip.fix
    out = ["### The corrected job", ""]
    if not fix.changes_anything:
        return [
            *out,
            f"`{fix.job.definition.path.name}` needs no change{_why_no_change(trip)}.",
            "",
        ]
    out += [
        f"From `{fix.job.definition.path.name}`; written to `{trip.written['definition'].parent}` "
        "(definition, query.asaql, apply.sh, FIX.md).",
        "",
        "| | now | corrected |",
        "|---|---|---|",
        f"| query | `{source_clause(fix.before_policy)}` | `{source_clause(trip.replayed.policy)}` |",
        f"| settings | {settings_text(fix.before_policy)} | {settings_text(trip.replayed.policy)} |",
    ]
    if fix.before is not None and trip.after is not None:
        b, a = fix.before, trip.after
        out += [
            f"| late events | {b.late} | {a.late} |",
            f"| out-of-order events | {b.out_of_order} | {a.out_of_order} |",
            f"| events held back > 5 s by another partition | {b.held_back} | {a.held_back} |",
            f"| release delay, p95 | {b.delay_p95_s:g} s | {a.delay_p95_s:g} s |",
        ]
    diff = query_diff(fix)
    if diff:
        out += ["", "```diff", diff.rstrip("\n"), "```"]
    return [*out, ""]


def _lateness_figure(run: ScenarioRun) -> Any:
    import plotly.express as px

    frame = run.outcomes.select(
        pl.col("partition").cast(pl.String).alias("partition"),
        ((pl.col("arrival") - pl.col("application_time")).dt.total_milliseconds() / 1000).alias(
            "lateness_s"
        ),
        pl.col("status").cast(pl.String).alias("status"),
    ).drop_nulls("lateness_s")
    fig = px.histogram(
        frame.to_pandas(), x="lateness_s", color="status", facet_row=None, nbins=80,
        title=f"{run.scenario}: lateness (arrival − application time) by outcome",
        labels={"lateness_s": "lateness (s); negative = early"},
    )  # fmt: skip
    fig.update_layout(template="plotly_white", height=320, bargap=0.05)
    return fig


#: The alert fields the report shows, with their column headers.
ALERT_COLUMNS = {
    "severity": "severity",
    "title": "alert",
    "state": "state",
    "starts_at": "firing since",
}


def alert_rows(alerts: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The alerts as table rows with headers in words (``starts_at`` is "firing since")."""
    return [{header: a.get(key, "") for key, header in ALERT_COLUMNS.items()} for a in alerts]


def _table(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return ""
    head = "".join(f"<th>{html.escape(k)}</th>" for k in rows[0])
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(str(v))}</td>" for v in row.values()) + "</tr>"
        for row in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


_STYLE = """
body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}
table{border-collapse:collapse;font-size:.9em;margin:1em 0}td,th{border:1px solid #ccc;padding:4px 8px;text-align:left;vertical-align:top}
code,pre{background:#f5f5f5;padding:2px 4px}pre{padding:8px;overflow-x:auto}
.critical{color:#b00020;font-weight:bold}.warning{color:#b36b00;font-weight:bold}.info{color:#2e7d32}
.finding{border-left:4px solid #ddd;padding-left:12px;margin:1em 0}
.diff_add{background:#e6ffe6}.diff_chg{background:#ffffcc}.diff_sub{background:#ffe6e6}
table.diff{font-family:monospace;font-size:12px}
"""


def _finding_html(number: int, finding: Any) -> str:
    data = finding.to_dict()
    suggestions = "".join(
        f"<li><b>{html.escape(suggestion_label(s['kind']))}</b>: "
        + (
            html.escape(s["snippet"])
            if s["form"] == SnippetForm.PROSE
            else f"<code>{html.escape(s['snippet'])}</code>"
        )
        + "</li>"
        for s in data["suggestions"]
    )
    evidence = "".join(
        f"<tr><td>{html.escape(label)}</td><td>{html.escape(value)}</td></tr>"
        for label, value in evidence_lines(finding.evidence)
    )
    return (
        f"<div class='finding'><h4>{number}. {html.escape(finding.title)}</h4>"
        f"<p><span class='{data['severity']}'>{data['severity']}</span> · cause: "
        f"{html.escape(cause_label(data['cause']))} · confidence {data['confidence']:.0%}</p>"
        f"<p>{html.escape(finding.explanation)}</p><table>{evidence}</table>"
        f"<p>Impact: {html.escape(impact_sentence(finding.impact))}</p>"
        + (f"<p>Suggested changes:</p><ul>{suggestions}</ul>" if suggestions else "")
        + "</div>"
    )


def _fix_html(trip: RoundTrip) -> str:
    """The corrected job: settings and counts, and the query diff side by side."""
    fix = trip.fix
    head = "<h3>The corrected job</h3>"
    if not fix.changes_anything:
        return (
            head + f"<p><code>{html.escape(fix.job.definition.path.name)}</code> needs no change"
            f"{html.escape(_why_no_change(trip))}.</p>"
        )
    rows: list[dict[str, Any]] = [
        {
            "": "query",
            "now": source_clause(fix.before_policy),
            "corrected": source_clause(trip.replayed.policy),
        },
        {
            "": "settings",
            "now": settings_text(fix.before_policy),
            "corrected": settings_text(trip.replayed.policy),
        },
    ]
    if fix.before is not None and trip.after is not None:
        b, a = fix.before, trip.after
        rows += [
            {"": "late events", "now": b.late, "corrected": a.late},
            {"": "out-of-order events", "now": b.out_of_order, "corrected": a.out_of_order},
            {"": "events held back > 5 s", "now": b.held_back, "corrected": a.held_back},
            {"": "release delay, p95 (s)", "now": b.delay_p95_s, "corrected": a.delay_p95_s},
        ]
    body = (
        f"<p>From <code>{html.escape(fix.job.definition.path.name)}</code>; written to "
        f"<code>{html.escape(str(trip.written['definition'].parent))}</code>.</p>" + _table(rows)
    )
    if fix.query is not None and fix.job.query is not None:
        body += difflib.HtmlDiff(wrapcolumn=80).make_table(
            fix.job.query.text.splitlines(),
            fix.query.splitlines(),
            "query now",
            "corrected query",
            context=True,
            numlines=2,
        )
    return head + body


def to_html_report(runs: Sequence[ScenarioRun], app_hint: str) -> str:
    """report.html: one page, plotly included once (works offline)."""
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'><title>orderdoc demo report</title>",
        f"<style>{_STYLE}</style></head><body><h1>orderdoc demo report</h1>",
        "<p>Each bundled scenario was generated, replayed under ASA's default policy "
        "(TIMESTAMP BY event_time, late 5 s, out-of-order 0 s, Adjust), aggregated, explained "
        "and checked against the alert rules.</p>",
        f"<p>Open the app on a result: <code>{html.escape(app_hint)}</code></p>",
        _table(summary_rows(runs)),
    ]
    first_chart = True
    for run in runs:
        parts.append(f"<h2 id='{run.scenario}'>{html.escape(run.scenario)}</h2>")
        parts += [_finding_html(i, f) for i, f in enumerate(run.report.findings, start=1)]
        alerts = alert_rows(run.alerts)
        parts.append("<h3>Alerts</h3>" + (_table(alerts) if alerts else "<p>No alert fired.</p>"))
        if run.fix is not None:
            parts.append(_fix_html(run.fix))
        figures = [_lateness_figure(run)]
        if run.whatif is not None:
            figures.append(chart(run.whatif))
            parts.append(
                f"<h3>What-if sweep</h3><pre>{html.escape(format_table(run.whatif))}</pre>"
            )
        for fig in figures:
            parts.append(
                fig.to_html(full_html=False, include_plotlyjs="inline" if first_chart else False)
            )
            first_chart = False
    parts.append("</body></html>")
    return "\n".join(parts)
