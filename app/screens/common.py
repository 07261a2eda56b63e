"""Small rendering helpers shared by the pages."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import plotly.graph_objects as go
import polars as pl
import streamlit as st

from diagnostics.appdata import tables
from diagnostics.explain.model import SnippetForm, Suggestion

SEVERITY_COLOURS = {"critical": "red", "warning": "orange", "info": "blue"}

#: How each form of suggestion text is shown: a code block's language, or ``None`` for text.
CODE_LANGUAGE: dict[SnippetForm, str | None] = {
    SnippetForm.PROSE: None,
    SnippetForm.SETTING: "text",
    SnippetForm.QUERY: "sql",
    SnippetForm.CODE: "csharp",
}

_MARKDOWN = re.compile(r"([\\`*_{}\[\]<>#|~$])")


def plain(text: str) -> str:
    """``text`` as markdown that shows it as it is (no emphasis, links or formulas)."""
    return _MARKDOWN.sub(r"\\\1", text)


def suggestion(s: Suggestion) -> None:
    """A suggestion's text as it is meant: sentences as text, whole; query text and
    settings in a code block (wrapped, never cut off)."""
    language = CODE_LANGUAGE[s.form]
    if language is None:
        st.markdown(plain(s.snippet))
    else:
        st.code(s.snippet, language=language, wrap_lines=True)


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


def table(
    frame: pl.DataFrame,
    words: Mapping[str, str] | None = None,
    config: Mapping[str, Any] | None = None,
) -> None:
    """A table across the page: headings in words, no ``None`` cell (``words``: what a
    column's missing values mean; see :func:`diagnostics.appdata.tables.shown`);
    ``config``: column settings beyond the heading (formats)."""
    config = dict(config or {})
    columns = {c: config.pop(c, None) or tables.heading(c) for c in frame.columns}
    st.dataframe(
        tables.shown(frame, words), hide_index=True, width="stretch", column_config=columns
    )
