"""What-if: tolerances, PARTITION BY and OVER against adjusted/dropped events and delay."""

from __future__ import annotations

from typing import Any

import streamlit as st

from diagnostics.appdata import figures, insight, lateness
from diagnostics.durations import SECOND
from diagnostics.errors import OrderdocError
from screens import cache, engine_view
from screens.common import chart, seconds, table

LATE_STEPS = (0, 1, 2, 5, 10, 15, 30, 60, 120, 180, 300, 600)
OOO_STEPS = (0, 1, 2, 5, 10, 30, 60)


#: What a missing late-arrival tolerance in a what-if table means.
UNLIMITED = {"late_arrival_s": "unlimited"}


def render() -> None:
    st.title("What-if")
    if engine_view.choice().rules.value != "asa":
        engine_view.whatif_page()
        return
    loaded = cache.require_capture("The what-if needs")
    if loaded is None:
        return
    _, key, ctx = loaded
    policy = ctx.settings.policy
    device = lateness.device_column(cache.outcomes(*key), policy.over)
    st.caption(f"Current policy: {policy.describe()}")
    try:
        best = recommended(*key)
    except OrderdocError as exc:
        st.error(str(exc))
        return
    r = best.row
    current_late = None if policy.late_arrival_ns is None else policy.late_arrival_ns / SECOND
    current_ooo = policy.out_of_order_ns / SECOND
    late_steps = insight.slider_steps(LATE_STEPS, current_late, r["late_arrival_s"])
    ooo_steps = insight.slider_steps(OOO_STEPS, current_ooo, r["out_of_order_s"])
    st.button(
        f"Try the recommended setting ({best.setting})",
        key="wi_try_recommended",
        on_click=_select,
        args=(r, device),
    )
    _start("wi_late", late_steps[-1] if current_late is None else current_late, late_steps)
    _start("wi_ooo", current_ooo, ooo_steps)
    _start("wi_pby", policy.partition_by)
    _start("wi_over", bool(policy.over) and device is not None)
    c1, c2 = st.columns(2)
    late = c1.select_slider(
        "Late-arrival tolerance (s)", late_steps, format_func=_step, key="wi_late"
    )
    ooo = c2.select_slider("Out-of-order tolerance (s)", ooo_steps, format_func=_step, key="wi_ooo")
    c3, c4 = st.columns(2)
    partition_by = c3.toggle("PARTITION BY PartitionId", key="wi_pby")
    over_on = c4.toggle(
        f"TIMESTAMP BY … OVER {device or '(no device column)'}",
        key="wi_over",
        disabled=device is None,
    )
    over = (device,) if over_on and device else ()
    try:
        result = sweep(*key, partition_by, over, late_steps, ooo_steps)
    except OrderdocError as exc:
        st.error(str(exc))
        return
    except Exception as exc:  # a bug elsewhere must not show a traceback here
        st.error(f"The what-if sweep failed (a bug; {type(exc).__name__}: {exc}).")
        return
    point = insight.select_point(result.table, float(late), float(ooo))
    if point is not None:
        cols = st.columns(4)
        cols[0].metric("Adjusted", f"{point['pct_adjusted']:.1f} %")
        cols[1].metric("Dropped", f"{point['pct_dropped']:.1f} %")
        cols[2].metric("Release delay p95", seconds(point["delay_p95_s"]))
        cols[3].metric("Release delay max", seconds(point["delay_max_s"]))
    for note in result.skipped[:3]:
        st.warning(f"Skipped (ASA rejects it): {note}")
    chart(figures.with_selected(result.figure, point, r, best.setting), "whatif_chart")
    st.markdown(
        f"**Recommended:** {best.setting} ({r['adjusted']:,} adjusted, {r['dropped']:,} "
        f"dropped, {r['pct_adjusted'] + r['pct_dropped']:.2f} % of the events; p95 release "
        f"delay {seconds(r['delay_p95_s'])}). The same setting as the Findings page's fix and "
        "`orderdoc whatif`: the best the capture allows under the rule."
    )
    for note in best.notes:
        st.caption(note)
    if best.close:
        with st.expander("Settings that came close"):
            for line in best.close:
                st.markdown(f"- {line}")
    st.caption(f"Recommendation rule: {best.rule}")
    with st.expander("The grid the sliders pick from"):
        table(result.table, UNLIMITED)
    with st.expander("Every setting the search measured"):
        table(best.table, UNLIMITED)


def _step(value: float) -> str:
    return f"{value:g}"


def _start(key: str, value: float | bool, steps: tuple[float, ...] | None = None) -> None:
    """A widget's first value: the job's own setting (kept while it is still on the grid, so
    a choice survives a rerun; a widget keeps its value in Session State under its key)."""
    held = st.session_state.get(key)
    if held is None or (steps is not None and held not in steps):
        st.session_state[key] = value


def _select(row: dict[str, Any], device: str | None) -> None:
    """Put the sliders and toggles on the recommended setting (a button's callback: it runs
    before the widgets are drawn again, so their keys may be set)."""
    if row["late_arrival_s"] is not None:
        st.session_state["wi_late"] = float(row["late_arrival_s"])
    st.session_state["wi_ooo"] = float(row["out_of_order_s"])
    st.session_state["wi_pby"] = bool(row["partition_by"])
    st.session_state["wi_over"] = bool(row["over"]) and device is not None


@st.cache_data(show_spinner="Searching the best setting the capture allows…", max_entries=8)
def recommended(path: str, sig: str) -> insight.RecommendView:
    ctx = cache.capture(path, sig)
    assert ctx is not None
    return insight.recommendation(
        cache.events(path, sig),
        ctx.settings.policy,
        columns=ctx.settings.columns,
        partitions=ctx.partitions,
        replays=cache.replays(path, sig),
    )


@st.cache_data(show_spinner="Replaying the capture under each setting…", max_entries=8)
def sweep(
    path: str,
    sig: str,
    partition_by: bool,
    over: tuple[str, ...],
    late_steps: tuple[float, ...],
    ooo_steps: tuple[float, ...],
) -> insight.SweepView:
    ctx = cache.capture(path, sig)
    assert ctx is not None
    policy = ctx.settings.policy
    return insight.sweep(
        cache.events(path, sig),
        policy,
        late_values=late_steps,
        ooo_values=ooo_steps,
        partition_by_values=(partition_by,),
        over_values=(over,),
        columns=ctx.settings.columns,
        partitions=ctx.partitions,
    )
