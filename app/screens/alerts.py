"""Alerts: firing and resolved alerts, and the rule YAML with its validation errors."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Protocol

import streamlit as st

from diagnostics.appdata import scope
from diagnostics.appdata.alerts import check_text, firing_first, problems_frame
from diagnostics.appdata.store import Aggregate
from diagnostics.appdata.watching import WAITING, runbook_sections, waiting, watch_alerts
from diagnostics.errors import OrderdocError
from diagnostics.rules import AlertState
from diagnostics.words import plural
from screens import cache
from screens.common import table


class _Counted(Protocol):
    def count(self, state: AlertState) -> int: ...


def _counts(view: _Counted) -> None:
    """The firing, pending and resolved counts of an alert view, as one row of metrics."""
    cols = st.columns(3)
    for col, state in zip(
        cols, (AlertState.FIRING, AlertState.PENDING, AlertState.RESOLVED), strict=True
    ):
        col.metric(state.value.capitalize(), view.count(state))


def _alerts(agg: Aggregate) -> None:
    try:
        view = cache.evaluate(agg)
    except OrderdocError as exc:
        st.error(f"The rules could not be evaluated on this folder: {exc}")
        return
    except Exception as exc:  # a bug elsewhere must not show a traceback here
        st.error(f"The rules failed on this folder (a bug; {type(exc).__name__}: {exc}).")
        return
    job = cache.scoped()
    if job is not None:
        view = replace(view, alerts=scope.alerts_of(view.alerts, job))
        st.caption(f"Job {job} (the sidebar's choice), and the alerts of the whole folder.")
    _counts(view)
    if view.now is not None:
        st.caption(f"Evaluated as of {view.now:%Y-%m-%d %H:%M} UTC (the end of the data).")
    for rule_id, reason in view.skipped:
        st.caption(f"Rule `{rule_id}` skipped: {reason}.")
    if view.alerts.is_empty():
        st.success("No alert fired on this data.")
        return
    table(
        firing_first(view.alerts).select(
            "state", "severity", "title", "group", "starts_at", "ends_at", "value", "summary"
        ),
        {"ends_at": "not ended"},
    )


def _rules() -> None:
    pack = cache.pack()
    st.subheader("Rules")
    st.caption(
        f"{plural(len(pack.rules), 'valid rule')} from {cache.rules_source()} "
        "(set ORDERDOC_RULES or `orderdoc app --rules` to use others)."
    )
    if pack.problems:
        st.error(
            f"{plural(len(pack.problems), 'problem')} in the rule files: those rules are not "
            "evaluated."
        )
        table(problems_frame(pack.problems))
    for f in pack.files:
        mark = "problems:" if f.problems else "valid:"
        with st.expander(f"{mark} {f.path} · {', '.join(f.rule_ids) or 'no valid rule'}"):
            st.code(f.text, language="yaml")
            for problem in f.problems:
                st.error(str(problem))
    st.subheader("Check a rule")
    first = pack.files[0].text if pack.files else "rules: []\n"
    text = st.text_area("Rule YAML", first, height=300, key="rule_text")
    if st.button("Validate", key="validate_rule"):
        ids, problems = check_text(text)
        if problems:
            for problem in problems:
                st.error(str(problem))
        else:
            st.success(f"Valid: {', '.join(ids) or 'no rules'}.")


def _history(state: str) -> None:
    """The watcher's alerts from its store (no rule is evaluated here, so the counts, the
    runbooks and the history agree with what the watcher notified), and the runbooks of the
    firing alerts."""
    try:
        view = watch_alerts(Path(state))
    except OrderdocError as exc:  # a corrupt or unreadable store: one line, no traceback
        st.error(f"The watcher's alerts could not be read: {exc}")
        return
    _counts(view)
    when = (
        f"rules last evaluated at {view.evaluated_at:%Y-%m-%d %H:%M} UTC"
        if view.evaluated_at
        else "no evaluation yet"
    )
    st.caption(
        f"From `orderdoc watch` (state folder `{state}`, {plural(view.passes, 'pass', 'passes')}, {when}); "
        "this page refreshes itself when a pass lands."
    )
    for rule, text in view.runbooks(runbook_sections()):
        with st.expander(f"Runbook: {rule}", expanded=True):
            st.markdown(text)
    st.subheader("Alert history")
    if view.history.is_empty():
        st.success("The watcher has recorded no alert yet.")
        return
    table(view.history.drop("runbook"), {"resolved": "not yet"})


def render() -> None:
    st.title("Alerts")
    state = st.session_state.get(cache.WATCH_KEY)
    if state:  # the watcher's store is the truth; the rules are not evaluated again here
        if waiting(Path(state)):
            st.info(WAITING.format(state=state))
        else:
            _history(state)
    else:
        agg = cache.require()
        if agg is not None:
            _alerts(agg)
    _rules()
