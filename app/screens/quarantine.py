"""Quarantine: the log records that could not be read, with their reasons."""

from __future__ import annotations

import streamlit as st

from diagnostics.appdata import figures
from diagnostics.appdata.quarantine import reason_counts
from screens import cache
from screens.common import chart, table


def render() -> None:
    st.title("Quarantine")
    agg = cache.require()
    if agg is None:
        return
    records = cache.quarantine(*cache.key(agg))
    st.metric("Quarantined records", f"{records.height:,}")
    if cache.scoped() is not None:
        st.caption(
            "The whole folder's: a record that could not be read names no job. Job lifecycle "
            "records (starts, stops) are read as job events, never quarantined."
        )
    if records.is_empty():
        st.success("Every log record was read: nothing is quarantined.")
        return
    chart(figures.reason_bars(reason_counts(records)), "quarantine_reasons")
    st.caption("Each record as read (at most 500 characters shown; its size is its full size).")
    table(records)
