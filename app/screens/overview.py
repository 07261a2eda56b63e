"""Overview: the KPI row, errors by kind over time with alert markers, and the top finding."""

from __future__ import annotations

from pathlib import Path

import plotly.graph_objects as go
import polars as pl
import streamlit as st

from diagnostics.appdata import figures, loaded, scope, timeline
from diagnostics.appdata.alerts import alert_markers
from diagnostics.appdata.overview import watermark_text
from diagnostics.appdata.watching import WAITING, overview_alerts, waiting
from diagnostics.errors import OrderdocError
from diagnostics.kinds import ErrorKind
from diagnostics.words import partitions
from screens import cache
from screens.common import chart, plain, seconds, severity, suggestion, table

SHORT = {
    ErrorKind.LATE.value: "Late events",
    ErrorKind.OUT_OF_ORDER.value: "Out-of-order events",
    ErrorKind.EARLY.value: "Early events",
    ErrorKind.INVALID_TIMESTAMP.value: "Invalid timestamps",
    ErrorKind.INVALID_KEY.value: "Invalid OVER keys",
    ErrorKind.PARTITION_NOT_PROGRESSING.value: "Idle notices",
    ErrorKind.CTI_VIOLATION.value: "CTI violations",
}


def render() -> None:
    st.title("Overview")
    state = st.session_state.get(cache.WATCH_KEY)
    if state and waiting(Path(state)):
        st.info(WAITING.format(state=state))
        return
    agg = cache.require()
    if agg is None:
        return
    job = cache.scoped()
    k = cache.kpis(*cache.key(agg), job)
    who = f"Job {job}" if job is not None else cache.job_words(*cache.key(agg))
    st.caption(
        f"{plain(who)} · "
        f"{plain(loaded.shown_path(agg.path, cache.label()))} · "
        f"records {k.time_range_text}"
    )
    for line in k.warnings:
        st.warning(line)
    top = st.columns(4)
    top[0].metric(
        "Events with data errors",
        k.data_errors_text,
        help=k.data_errors_help,
    )
    top[1].metric(
        "Quarantined records",
        f"{k.records_quarantined:,}",
        help=f"{k.records_total:,} log records read, {k.records_parsed:,} parsed"
        + (", in the whole folder (a quarantined record names no job)" if job else ""),
    )
    alerts_slot = top[2].empty()
    alerts_slot.metric("Alerts firing", "…", help="evaluating the rules")
    delay = k.watermark
    top[3].metric(
        "Worst watermark delay",
        seconds(None if delay is None else delay.worst_s),
        help="The output watermark delay metric: how far the job's output lags behind "
        "the input, per minute; the worst minute, and the others beside it.",
    )
    top[3].caption(watermark_text(delay, seconds))
    kinds = sorted(k.events_by_kind.items(), key=lambda kv: (-kv[1], kv[0]))[:6]
    if kinds:
        row = st.columns(len(kinds))
        for i, (name, _events) in enumerate(kinds):
            row[i].metric(SHORT.get(name, name), k.events_text(name), help=name)
    else:
        st.success("No data errors and no idle notices in what was loaded.")
    over_time, bucket = cache.errors_over_time(*cache.key(agg), job)
    events = cache.job_events(*cache.key(agg), job)
    chart_slot = st.empty()
    if over_time.height:
        # first without alert markers: the rules take longer than the tables
        with chart_slot.container():
            chart(_timeline(over_time, over_time.clear(), bucket, events), "overview_0")
    if k.idle_partitions:
        st.warning(
            f"Idle: {partitions(k.idle_partitions)} "
            "(InputPartitionNotProgressing; see the Partitions page)."
        )
    try:  # the watcher's store when watching (as the Alerts page shows it), else the rules
        shown = overview_alerts(Path(state) if state else None, lambda: cache.evaluate(agg))
    except OrderdocError as exc:
        alerts_slot.metric("Alerts firing", "–", help=f"the alerts could not be shown: {exc}")
        st.error(f"The alerts could not be shown: {exc}")
    except Exception as exc:  # a bug elsewhere must not show a traceback here
        alerts_slot.metric("Alerts firing", "–", help=f"the rules failed: {exc}")
    else:
        alerts = scope.alerts_of(shown.alerts, job)
        firing, resolved = (
            (shown.firing, shown.resolved) if job is None else scope.alert_counts(alerts)
        )
        alerts_slot.metric(
            "Alerts firing",
            f"{firing:,}",
            help=f"{resolved:,} resolved; {shown.note}"
            + (f"; of job {job} and the folder's own" if job else "")
            + "; see the Alerts page",
        )
        if over_time.height and alerts.height:
            markers = alert_markers(alerts, bucket)
            with chart_slot.container():
                chart(_timeline(over_time, markers, bucket, events), "overview_1")
    if events.height:
        st.caption(
            "Job events (the Authoring and activity logs: starts, stops, scales, updates), "
            "dotted on the chart:"
        )
        table(events.select("time", "action", "status", "operation", "category"))
    _top_finding()


def _timeline(
    over_time: pl.DataFrame, markers: pl.DataFrame, bucket: str, events: pl.DataFrame
) -> go.Figure:
    """The errors-over-time chart with the alert markers and the job events."""
    return timeline.with_job_events(figures.errors_over_time(over_time, markers, bucket), events)


def _top_finding() -> None:
    agg, _ = cache.current()
    assert agg is not None
    report = cache.report_or_error(agg)
    if report is None:
        return
    if not report.findings:
        return
    f = report.findings[0]
    with st.container(border=True):
        st.markdown(
            f"**Most likely cause** · {severity(f.severity)} · confidence {f.confidence:.0%}"
        )
        st.markdown(f"### {f.title}")
        st.write(f.explanation)
        if f.suggestions:
            suggestion(f.suggestions[0])
        st.caption("All findings with their evidence: the Findings page.")
