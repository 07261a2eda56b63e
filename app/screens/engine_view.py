"""The engine choice (Load page) and the Findings and What-if pages under Flink's or
Spark's rules: rendering only (diagnostics.appdata.engines has the data)."""

from __future__ import annotations

import streamlit as st

from diagnostics.appdata.engines import ENGINE_LABELS, EngineChoice, EngineView
from diagnostics.engines.policy import Rules
from diagnostics.errors import OrderdocError
from screens import cache
from screens.common import severity

#: Where the choice is kept across pages (widget values are dropped off their page).
CHOICE = "engine_choice"


def choice() -> EngineChoice:
    """The engine the pages speak (ASA until the Load page says otherwise)."""
    found = st.session_state.get(CHOICE)
    return found if isinstance(found, EngineChoice) else EngineChoice()


def _keep() -> None:
    state = st.session_state
    state[CHOICE] = EngineChoice(
        rules=Rules(state["engine_rules"]),
        window_s=float(state.get("engine_window", 60.0)),
        bound_s=float(state.get("engine_bound", 0.0)),
        idle_s=float(state.get("engine_idle", 0.0)),
        lateness_s=float(state.get("engine_lateness", 0.0)),
        trigger_s=float(state.get("engine_trigger", 1.0)),
    )


def load_form() -> None:
    """The Load page's engine choice."""
    st.subheader("Engine")
    now = choice()
    options = [r.value for r in Rules]
    st.selectbox(
        "Whose event-time rules the Findings and What-if pages apply to a capture",
        options,
        index=options.index(now.rules.value),
        format_func=lambda v: ENGINE_LABELS[Rules(v)],
        key="engine_rules",
        on_change=_keep,
    )
    rules = Rules(st.session_state.get("engine_rules", now.rules.value))
    if rules is Rules.ASA:
        return
    c = st.columns(4)
    c[0].number_input("Tumbling window (s)", 0.001, value=now.window_s, key="engine_window", on_change=_keep)  # fmt: skip
    if rules is Rules.FLINK:
        c[1].number_input("forBoundedOutOfOrderness (s)", 0.0, value=now.bound_s, key="engine_bound", on_change=_keep)  # fmt: skip
        c[2].number_input("withIdleness (s, 0 = none)", 0.0, value=now.idle_s, key="engine_idle", on_change=_keep)  # fmt: skip
        c[3].number_input("allowedLateness (s)", 0.0, value=now.lateness_s, key="engine_lateness", on_change=_keep)  # fmt: skip
    else:
        c[1].number_input("withWatermark delay (s)", 0.0, value=now.bound_s, key="engine_bound", on_change=_keep)  # fmt: skip
        c[2].number_input("Trigger interval (s)", 0.0, value=now.trigger_s, key="engine_trigger", on_change=_keep)  # fmt: skip
    _keep()


def view(what: str) -> EngineView | None:
    """The loaded capture under the chosen engine's rules (``None`` after saying why)."""
    loaded = cache.require_capture(what)
    if loaded is None:
        return None
    _, key, _ = loaded
    try:
        return cache.engine_view(*key, choice())
    except OrderdocError as exc:
        st.error(str(exc))
        return None


def _heading(shown: EngineView) -> None:
    """The rules replayed and the recommended setting, atop both pages."""
    st.caption(f"Rules: {shown.rules.describe()}")
    st.info(f"**Recommended setting:** {shown.recommended} ({shown.recommended_numbers}).")


def findings_page() -> None:
    """Findings in the engine's terms."""
    shown = view("The findings under another engine's rules need")
    if shown is None:
        return
    _heading(shown)
    if not shown.findings:
        st.success("No finding: the engine keeps every event and no setting measured better.")
    for i, f in enumerate(shown.findings):
        with st.container(border=True):
            st.subheader(f"{i + 1}. {f.title}")
            st.markdown(f"**Severity** {severity(f.severity)}")
            st.write(f"Why: {f.why}.")
            for line in f.evidence:
                st.markdown(f"- {line}")
            if f.fix:
                st.code(f.fix, language=None)


def whatif_page() -> None:
    """The engine's settings searched over the capture."""
    shown = view("The what-if under another engine's rules needs")
    if shown is None:
        return
    _heading(shown)
    st.dataframe(
        shown.table.drop("events").sort("pct_dropped", "delay_p95_s", nulls_last=True),
        key="engine_table",
        column_config={
            "delay_p50_s": "emission delay p50 (s)",
            "delay_p95_s": "emission delay p95 (s)",
        },
    )
