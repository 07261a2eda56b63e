"""orderdoc's troubleshooting app: what is wrong, how sure we are, what to change.

Run with ``orderdoc app [AGG_DIR]`` (or ``streamlit run app/streamlit_app.py -- --agg-dir
DIR``). The pages live in ``screens/``; every number and chart comes from
``diagnostics.appdata``.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

# Before any page: the libraries plotly looks up in ``sys.modules`` without importing them
# (to accept their arrays and frames) are imported here, whole. Every session runs this
# script in a thread of its own; were pandas first imported half-way through one session's
# page (polars and Streamlit import it on first use), another session's chart would find it
# half-initialised ("partially initialized module 'pandas' has no attribute 'Series'").
# An import statement waits for the same import under way in another thread, so past these
# lines they are complete in every session (tests/app/test_concurrent_sessions.py).
import numpy  # noqa: E402, F401
import pandas  # noqa: E402, F401
import PIL.Image  # noqa: E402, F401
import plotly.graph_objects  # noqa: E402
import plotly.io  # noqa: E402, F401
import streamlit as st  # noqa: E402
from screens import (  # noqa: E402
    alerts,
    cache,
    findings,
    lateness,
    load,
    overview,
    partitions,
    quarantine,
    results,
    whatif,
)
from screens.common import plain  # noqa: E402
from streamlit.delta_generator import DeltaGenerator  # noqa: E402

from diagnostics.errors import OrderdocError  # noqa: E402
from diagnostics.freed_memory import keep_freed_memory  # noqa: E402

PAGES = {
    "Load": load,
    "Overview": overview,
    "Findings": findings,
    "Lateness": lateness,
    "Partitions": partitions,
    "What-if": whatif,
    "Results": results,
    "Alerts": alerts,
    "Quarantine": quarantine,
}
PAGE_KEY = "page"
#: The URL query parameter naming the page shown (``?page=findings``).
PAGE_PARAM = "page"


#: Pages that follow a watcher (``orderdoc app --watch``): re-run every few seconds, so a
#: pass that lands shows without a reload (the cached data is keyed by the folder's files).
LIVE_PAGES = ("Overview", "Alerts")
REFRESH_SECONDS = float(os.environ.get("ORDERDOC_APP_REFRESH", "5"))


def _startup_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--agg-dir")
    parser.add_argument("--watch-state")
    known, _ = parser.parse_known_args(sys.argv[1:])
    return known


def _startup_folder() -> str | None:
    """The folder named on the command line (``--agg-dir``) or in ``ORDERDOC_AGG_DIR``."""
    return _startup_args().agg_dir or os.environ.get("ORDERDOC_AGG_DIR") or None


def _watch_state() -> str | None:
    """The watcher state folder (``--watch-state`` or ``ORDERDOC_WATCH_STATE``), if any."""
    return _startup_args().watch_state or os.environ.get("ORDERDOC_WATCH_STATE") or None


def main() -> None:
    keep_freed_memory()  # for the server's whole life: fewer page faults on large captures
    st.set_page_config(page_title="orderdoc", layout="wide")
    if "started" not in st.session_state:
        st.session_state["started"] = True
        folder = _startup_folder()
        state = _watch_state()
        if state:
            st.session_state[cache.WATCH_KEY] = state
            folder = str(Path(state) / "agg")
        startup = Path(folder) if folder else None
        restored = cache.AGG_KEY in st.session_state or cache.restore_from_url(startup)
        if folder and not restored:
            cache.set_source(Path(folder), f"watching {state}" if state else folder)
        wanted = str(st.query_params.get(PAGE_PARAM, "")).lower()
        names = {name.lower(): name for name in PAGES}
        if wanted in names:
            st.session_state[PAGE_KEY] = names[wanted]
        elif PAGE_KEY not in st.session_state:
            st.session_state[PAGE_KEY] = "Overview" if cache.AGG_KEY in st.session_state else "Load"
    with st.sidebar:
        st.markdown("## orderdoc")
        st.caption("Why does my event-time job drop, shift or delay events?")
        choice = st.radio("Page", list(PAGES), key=PAGE_KEY)
        _job_scope()
        loaded_slot = st.empty()
    shown = _loaded_label(loaded_slot)
    if st.query_params.get(PAGE_PARAM) != choice.lower():
        st.query_params[PAGE_PARAM] = choice.lower()  # a link to the page as it is shown
    if st.session_state.get(cache.WATCH_KEY) and choice in LIVE_PAGES:
        st.fragment(PAGES[choice].render, run_every=REFRESH_SECONDS)()
    else:
        PAGES[choice].render()
    # again after the page: the Load page may just have loaded something
    if cache.label() != shown:
        _loaded_label(loaded_slot)


def _job_scope() -> None:
    """The job every page shows, for a folder of several jobs: offered with the jobs that
    have findings first (the first chosen until the user picks another), then "All jobs"."""
    agg, _ = cache.current()
    try:
        choices = cache.job_choices(*cache.key(agg)) if agg is not None else []
    except OrderdocError:  # the pages say why the folder cannot be read
        choices = []
    except Exception:  # a bug in the explainer: the pages show it as a message, never here
        choices = []
    if not choices:
        st.session_state.pop(cache.SCOPE_KEY, None)
        return
    if st.session_state.get(cache.SCOPE_KEY) not in choices:
        st.session_state[cache.SCOPE_KEY] = choices[0]
    st.selectbox(
        "Job",
        choices,
        key=cache.SCOPE_KEY,
        help="The loaded logs hold several jobs: every page shows the one chosen here. The "
        "jobs with findings come first; All jobs shows the whole folder.",
    )


def _loaded_label(slot: DeltaGenerator) -> str | None:
    """What is loaded and its job, in the sidebar's ``slot``; returns the label shown."""
    label = cache.label()
    jobs = cache.job_line()
    with slot.container():
        st.caption(f"Loaded: {plain(label)}" if label else "Nothing loaded yet")
        if jobs:
            st.caption(plain(jobs))
    return label


main()
