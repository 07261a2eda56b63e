"""Results: the query's windowed aggregates as the job emits them beside on time."""

from __future__ import annotations

import streamlit as st

from diagnostics.appdata import impact, lateness
from diagnostics.errors import OrderdocError
from screens import cache
from screens.common import chart, plain


def render() -> None:
    st.title("Results")
    loaded = cache.require_capture("The results need")
    if loaded is None:
        return
    agg, key, ctx = loaded
    policy = ctx.settings.policy
    outcomes = cache.outcomes(*key)
    device = lateness.device_column(outcomes, policy.over)
    start = impact.starting_query(agg.path, policy, device)
    st.caption(
        "Each window of the query's aggregates as the job emits it (events at their "
        "System.Timestamp, dropped events missing) beside the result had every event arrived "
        f"on time. Policy: {policy.describe()}. Query: {start.source}."
    )
    text = st.text_area("Query", start.text, height=160, key="results_query")
    try:
        result = cache.results(*key, text, impact.input_of(text, start.input_name))
    except OrderdocError as exc:
        st.error(str(exc))
        return
    summary = impact.summary(result)
    for line in summary["not_replayed"]:
        st.warning(f"Not replayed: {line}")
    if result.table.is_empty():
        st.info("No step of the query aggregates the input over a window: no results to compare.")
        return
    inside = summary["interior"]
    cols = st.columns(4)
    cols[0].metric("Windows compared", f"{summary['windows_compared']:,}")
    cols[1].metric("Windows changed", f"{summary['windows_changed']:,}")
    cols[2].metric(
        "Interior windows off by > 5 %",
        f"{inside['off']:,}",
        help="Windows away from the data's edges (its first and last windows, a silent "
        "partition, events dropped as early) whose result is off by more than 5 %",
    )
    cols[3].metric("Interior error, p95", "-" if inside["p95"] is None else f"{inside['p95']:.1%}")
    for line in impact.spread_lines(summary):
        st.caption(plain(line))
    pairs = impact.choices(result.table)
    c1, c2 = st.columns(2)
    shown = [f"{step}: {agg_name}" for step, agg_name in pairs]
    chosen = c1.selectbox("Aggregate", shown, key="results_aggregate")
    step, aggregate = pairs[shown.index(chosen)]
    keys = impact.keys_by_change(result.table, step, aggregate)
    group = c2.selectbox("Keys", keys, key="results_keys", format_func=lambda k: k or "(no keys)")
    frame = impact.series(result.table, step, aggregate, group)
    title = f"{aggregate} {group}".strip()
    chart(impact.figure(frame, title), key="results_chart")
    st.subheader("Worst windows")
    st.dataframe(impact.worst(result.table), hide_index=True, width="stretch")
    st.subheader("The change by cause")
    st.caption(plain("Events that sit in another window as emitted than on time, or are missing."))
    st.dataframe(impact.causes(summary), hide_index=True, width="stretch")
    st.download_button(
        "Download impact.parquet",
        impact.parquet_bytes(result.table),
        file_name="impact.parquet",
        mime="application/octet-stream",
        key="results_download",
    )
