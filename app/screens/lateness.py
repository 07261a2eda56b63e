"""Lateness: ECDF or histogram of lateness against the tolerance, per partition or device."""

from __future__ import annotations

import streamlit as st

from diagnostics.appdata import figures, lateness, scope
from diagnostics.kinds import ErrorKind
from screens import cache
from screens.common import chart, table

KINDS = (ErrorKind.LATE.value, ErrorKind.OUT_OF_ORDER.value, ErrorKind.EARLY.value)


def render() -> None:
    st.title("Lateness")
    agg = cache.require()
    if agg is None:
        return
    key = cache.key(agg)
    ctx = cache.capture(*key)
    c1, c2, c3 = st.columns(3)
    if ctx is not None:
        device = lateness.device_column(cache.outcomes(*key), ctx.settings.policy.over)
        groups = ["partition"] + ([device] if device else [])
        by = c1.radio("Group by", groups, horizontal=True, key="late_by")
        frame = cache.lateness_capture(*key, by)
        late_ns = ctx.settings.policy.late_arrival_ns
        tolerance = None if late_ns is None else late_ns / 1e9
        c3.metric(
            "Configured late-arrival tolerance",
            "unlimited" if tolerance is None else f"{tolerance:g} s",
        )
        st.caption(
            f"Every event of the capture: arrival − application time ({frame.height:,} events). "
            f"Policy: {ctx.settings.policy.describe()}."
        )
    else:
        c1.radio(
            "Group by",
            ["partition"],
            horizontal=True,
            key="late_by",
            help="Devices are not in the logs; upload a capture to group by device.",
        )
        job = cache.scoped()
        kinds = c2.multiselect("Kinds", KINDS, default=list(KINDS), key="late_kinds")
        given = scope.job_tolerances(agg.path, job)
        tolerance = c3.number_input(
            "Late-arrival tolerance (s)",
            0.0,
            1_814_399.0,
            given.late_s,
            key=f"late_tol_{job}",
            help=given.words,
        )
        frame = cache.lateness_aggregate(*key, tuple(kinds), job)
        st.caption(
            "The example event of each diagnostic record (arrival − application time), weighted "
            "by the record's event count. Negative values are early events."
            + (f" Job {job}." if job else "")
        )
        st.caption(f"Late-arrival tolerance: {given.words}")
    if frame.is_empty():
        st.info("No lateness values in this data (no late, early or out-of-order records).")
        return
    style = (
        c2.radio("Chart", ["ECDF", "Histogram"], horizontal=True, key="late_chart")
        if ctx is not None
        else st.radio("Chart", ["ECDF", "Histogram"], horizontal=True, key="late_chart")
    )
    span = lateness.bulk(frame)
    if style == "ECDF":
        chart(figures.lateness_ecdf(lateness.ecdf(frame), tolerance, span), "lateness_chart")
    else:
        chart(
            figures.lateness_histogram(lateness.top_groups(frame, 8), tolerance, span=span),
            "lateness_chart",
        )
    if span is not None:
        st.caption(span.note())
    groups = lateness.by_group(frame, tolerance if tolerance is not None else float("inf"))
    table(
        groups,
        config={
            "share_beyond": st.column_config.NumberColumn(
                "share beyond tolerance", format="percent"
            )
        },
    )
