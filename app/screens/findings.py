"""Findings: each cause in plain words, its evidence chart, and the fix to copy."""

from __future__ import annotations

import polars as pl
import streamlit as st

from diagnostics.appdata import figures, insight, lateness, tables
from diagnostics.appdata.store import Aggregate
from diagnostics.errors import OrderdocError
from diagnostics.explain.model import Finding
from screens import cache, engine_view
from screens.common import chart, severity, suggestion

LATE_CAUSES = (
    "late_arrivals",
    "historical_replay",
    "tolerance_too_loose",
    "early_arrivals",
    "batching_senders",
    "slow_clocks",
    "fast_clocks",
)


def _tolerance(agg: Aggregate, finding: Finding) -> float | None:
    """The late-arrival tolerance a finding's chart draws: the capture's replay's, else the
    one the finding was judged with (its job's, or ASA's default, assumed)."""
    ctx = cache.capture(*cache.key(agg))
    if ctx is None:
        return insight.late_tolerance_of(finding)
    late = ctx.settings.policy.late_arrival_ns
    return None if late is None else late / 1e9


def _evidence_chart(agg: Aggregate, finding: Finding, index: int) -> None:
    key = cache.key(agg)
    kinds = insight.cause_kinds(finding.cause)
    job = finding.job if cache.capture(*key) is None else None
    if finding.cause == "idle_partition":
        episodes = cache.idle(*key, job)
        if episodes.height:
            chart(figures.idle_timeline(episodes), f"evidence_{index}")
            return
    if finding.cause == "hot_partition":
        table = cache.input_events_by_partition(*key, job)
        if table.height:
            chart(
                figures.partition_bars(table, "input_events", "Input events per partition"),
                f"evidence_{index}",
            )
            return
    if finding.cause in LATE_CAUSES:
        if cache.capture(*key) is not None:
            steps, span = cache.lateness_capture_ecdf(*key, "partition")
        else:
            frame = cache.lateness_aggregate(*key, kinds, job)
            steps, span = lateness.ecdf(frame), lateness.bulk(frame)
        if steps.height:
            chart(
                figures.lateness_ecdf(steps, _tolerance(agg, finding), span),
                f"evidence_{index}",
            )
            return
    if kinds:
        frame, bucket = cache.kinds_by_partition(*key, kinds, job)
        if frame.height:
            chart(
                figures.kinds_by_partition(frame, bucket, " / ".join(kinds)),
                f"evidence_{index}",
            )
            return
    over_time, bucket = cache.errors_over_time(*key, job)
    if over_time.height:
        chart(figures.errors_over_time(over_time, over_time.clear(), bucket), f"evidence_{index}")
    else:
        st.caption("No data errors to chart.")


def _change(what: str, diff: str, now: str, corrected: str, language: str) -> None:
    """One part of the corrected job: its highlighted diff, then both versions side by side."""
    st.markdown(f"**{what.capitalize()} change**")
    if diff:
        st.code(diff, language="diff")
    else:
        st.caption(f"The {what} does not change.")
    with st.expander(f"The {what} now and corrected, side by side"):
        left, right = st.columns(2)
        left.markdown(f"**{what.capitalize()} now**")
        left.code(now, language=language)
        right.markdown(f"**Corrected {what}**")
        right.code(corrected, language=language)


def _cell(value: object) -> str:
    """A before/after value as the table shows it (``—`` when the replay has none)."""
    return tables.MISSING if value is None else str(value)


def _job_fix(agg: Aggregate) -> None:
    """The corrected job definition: before/after, the diffs of query and definition, the
    texts side by side, downloads."""
    try:
        view = cache.job_fix(*cache.key(agg))
    except OrderdocError as exc:
        st.error(f"The corrected job could not be written: {exc}")
        return
    if view is None:
        return
    st.header("The corrected job")
    st.caption(f"Now: {view.policy_before} · corrected: {view.policy_after}")
    st.caption(f"The fix is {view.basis}.")
    if view.before is not None and view.after is not None:
        rows = [(k, _cell(v), _cell(view.after[k])) for k, v in view.before.items()]
        st.dataframe(
            pl.DataFrame(
                rows, schema=["replayed on the capture", "now", "corrected"], orient="row"
            ),
            hide_index=True,
            width="stretch",
        )
    new_query = view.new_query if view.new_query is not None else view.old_query
    _change("query", view.query_diff, view.old_query, new_query, "sql")
    _change("definition", view.definition_diff, view.old_definition, view.new_definition, "json")
    fix_md = dict(view.files).get("FIX.md")
    if fix_md is not None:
        with st.expander("FIX.md: what each change costs and gains, how to apply"):
            st.markdown(fix_md.decode("utf-8"))
    cols = st.columns(len(view.files))
    for col, (name, data) in zip(cols, view.files, strict=True):
        col.download_button(f"Download {name}", data, file_name=name, key=f"download_{name}")


def render() -> None:
    st.title("Findings")
    if engine_view.choice().rules.value != "asa":
        engine_view.findings_page()
        return
    agg = cache.require()
    if agg is None:
        return
    report = cache.report_or_error(agg)
    if report is None:
        return
    sources = ", ".join(report.sources) or "the aggregate tables"
    st.caption(f"From {sources}" + (f" · policy: {report.policy}" if report.policy else ""))
    for line in report.tolerances:
        st.caption(f"Tolerances: {line}.")
    senders = insight.senders_line(report)
    if senders:
        st.caption(senders)
    if report.recommended is not None:
        r = report.recommended
        st.info(f"**Recommended setting for this capture:** {r.setting} ({r.numbers}).")
        for note in r.notes:
            st.caption(f"{note[:1].upper()}{note[1:]}.")
    if not report.findings:
        st.success("No finding: nothing in this data points to an ordering problem.")
        return
    for i, f in enumerate(report.findings):
        with st.container(border=True):
            st.subheader(f"{i + 1}. {f'Job {f.job}: ' if f.job else ''}{f.title}")
            cols = st.columns(4)
            cols[0].markdown(f"**Severity** {severity(f.severity)}")
            cols[1].metric("Confidence", f"{f.confidence:.0%}")
            affected = f.impact.get("events_affected")
            minimum = "at least " if f.evidence.get("records_without_count") else ""
            cols[2].metric(
                "Events affected", "–" if affected is None else f"{minimum}{int(affected):,}"
            )
            label, value = insight.delay_metric(f)
            cols[3].metric(label, value)
            st.write(f.explanation)
            _evidence_chart(agg, f, i)
            if f.suggestions:
                st.markdown("**What to change**")
                for s in f.suggestions:
                    st.caption(insight.suggestion_heading(s))
                    suggestion(s)
                for why in f.left_out:
                    st.caption(f"Left out: {why}.")
            st.caption(f"Impact: {insight.impact_text(f.impact)}")
            values = insight.readable_evidence(f.evidence)
            if values.height:
                with st.expander("Evidence"):
                    st.dataframe(values, hide_index=True, width="stretch")
    _job_fix(agg)
