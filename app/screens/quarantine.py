"""Quarantine: the log records that could not be read, with their reasons."""

from __future__ import annotations

import streamlit as st

from diagnostics.appdata import figures, tables
from diagnostics.appdata.quarantine import reason_counts
from screens import cache
from screens.common import chart


def render() -> None:
    st.title("Quarantine")
    agg = cache.require()
    if agg is None:
        return
    table = cache.quarantine(*cache.key(agg))
    st.metric("Quarantined records", f"{table.height:,}")
    if table.is_empty():
        st.success("Every log record was read: nothing is quarantined.")
        return
    chart(figures.reason_bars(reason_counts(table)), "quarantine_reasons")
    st.caption("Each record as read (at most 500 characters shown; raw_bytes is its full size).")
    st.dataframe(tables.shown(table), hide_index=True, width="stretch")
