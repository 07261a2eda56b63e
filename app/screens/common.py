"""Small rendering helpers shared by the pages."""

from __future__ import annotations

import plotly.graph_objects as go
import streamlit as st

SEVERITY_COLOURS = {"critical": "red", "warning": "orange", "info": "blue"}


def chart(fig: go.Figure, key: str) -> None:
    """Show a plotly figure across the page width."""
    st.plotly_chart(fig, key=key, width="stretch", config={"displaylogo": False})


def seconds(value: float | None) -> str:
    """``12.5 s``, ``3.2 min``, ``4.0 h`` or ``2.1 days`` (``–`` for ``None``)."""
    if value is None:
        return "–"
    size = abs(value)
    if size < 120:
        return f"{value:,.1f} s"
    if size < 7200:
        return f"{value / 60:,.1f} min"
    if size < 172_800:
        return f"{value / 3600:,.1f} h"
    return f"{value / 86400:,.1f} days"


def severity(name: str) -> str:
    """The severity name as coloured, bold markdown (no emoji: fonts may lack them)."""
    return f":{SEVERITY_COLOURS.get(name, 'gray')}[**{name}**]"
