"""Overview: the KPI row, errors by kind over time with alert markers, and the top finding."""

from __future__ import annotations

import streamlit as st

from diagnostics.appdata import figures, insight
from diagnostics.appdata.alerts import alert_markers
from diagnostics.errors import OrderdocError
from diagnostics.kinds import ErrorKind
from diagnostics.rules import AlertState
from screens import cache
from screens.common import chart, seconds, severity

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
    agg = cache.require()
    if agg is None:
        return
    k = cache.kpis(*cache.key(agg))
    st.caption(
        f"`{agg.path}` · jobs: {', '.join(k.jobs) or '–'} · "
        f"{k.time_from or '?'} → {k.time_to or '?'}"
    )
    try:
        view = cache.evaluate(agg)
        firing: int | None = view.count(AlertState.FIRING)
        alert_note = f"{view.count(AlertState.RESOLVED)} resolved"
    except OrderdocError as exc:
        view, firing, alert_note = None, None, f"rules failed: {exc}"
    top = st.columns(4)
    top[0].metric("Events with data errors", f"{k.data_errors:,}")
    top[1].metric(
        "Quarantined records",
        f"{k.records_quarantined:,}",
        help=f"{k.records_total:,} log records read, {k.records_parsed:,} parsed",
    )
    top[2].metric("Alerts firing", "–" if firing is None else f"{firing:,}", help=alert_note)
    top[3].metric(
        "Worst watermark delay",
        seconds(k.worst_watermark_delay_s),
        help=(
            f"job {k.worst_watermark_job}, minute {k.worst_watermark_minute:%Y-%m-%d %H:%M} UTC"
            if k.worst_watermark_minute
            else "no metrics in this folder"
        ),
    )
    kinds = [(name, n) for name, n in k.events_by_kind.items()]
    if kinds:
        row = st.columns(min(len(kinds), 6))
        for i, (name, n) in enumerate(sorted(kinds, key=lambda kv: (-kv[1], kv[0]))[:6]):
            row[i].metric(SHORT.get(name, name), f"{n:,}", help=name)
    else:
        st.success("No data errors and no idle notices in this folder.")
    over_time, bucket = cache.errors_over_time(*cache.key(agg))
    markers = alert_markers(view.alerts) if view is not None else None
    if over_time.height:
        chart(
            figures.errors_over_time(
                over_time, markers if markers is not None else over_time.clear(), bucket
            ),
            "overview_errors",
        )
    if k.idle_partitions:
        st.warning(
            f"Idle partitions: {', '.join(map(str, k.idle_partitions))} "
            "(InputPartitionNotProgressing; see the Partitions page)."
        )
    _top_finding()


def _top_finding() -> None:
    problem = insight.explainer_status()
    if problem is not None:
        st.caption(f"Findings are not available: {problem}.")
        return
    agg, _ = cache.current()
    assert agg is not None
    try:
        report = cache.report(*cache.key(agg))
    except OrderdocError as exc:
        st.error(f"The explainer could not read this folder: {exc}")
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
            st.code(f.suggestions[0].snippet, language="sql")
        st.caption("All findings with their evidence: the Findings page.")
