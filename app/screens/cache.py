"""Streamlit caching around ``diagnostics.appdata`` and the app's session state.

Cached functions take the aggregate folder as a path string plus its
:func:`~diagnostics.appdata.store.signature`, so a changed folder is re-read and an unchanged
one never is. Results are small frames and plain values.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl
import streamlit as st

from diagnostics.appdata import (
    alerts,
    build,
    jobfix,
    lateness,
    loaded,
    overview,
    partitions,
    scope,
    store,
    timeline,
)
from diagnostics.appdata import engines as engines_data
from diagnostics.appdata import impact as impact_data
from diagnostics.appdata import quarantine as quarantine_data
from diagnostics.appdata.engines import EngineChoice, EngineView
from diagnostics.appdata.replays import loaded_outcomes, loaded_replays
from diagnostics.errors import OrderdocError
from diagnostics.explain.model import Report
from diagnostics.impact import Impact
from diagnostics.whatif.replays import Replays

AGG_KEY = "agg_dir"
WATCH_KEY = "watch_state"
LABEL_KEY = "source_label"
#: The sidebar's job scope (:mod:`diagnostics.appdata.scope`): a job's name or "All jobs".
SCOPE_KEY = "job_scope"


def rules_paths() -> list[str]:
    """Rule files or folders: ``ORDERDOC_RULES`` (``os.pathsep``-separated) or the packaged pack."""
    from diagnostics.resources import default_rule_paths

    return [str(p) for p in default_rule_paths()]


def rules_source() -> str:
    """Where the rules come from, in words: orderdoc's built-in pack (never the installed
    package's folder) or the files and folders named in ORDERDOC_RULES."""
    from diagnostics.resources import packaged_rules

    paths = rules_paths()
    if paths == [str(packaged_rules())]:
        return "orderdoc's built-in rule pack"
    return ", ".join(paths)


def set_source(agg_dir: Path, label: str) -> None:
    """Make ``agg_dir`` the folder every page shows, named in the page's URL (so that a
    reload or a shared link shows it again) with ``label`` kept beside it."""
    st.session_state[AGG_KEY] = str(agg_dir)
    st.session_state[LABEL_KEY] = label
    loaded.remember(agg_dir, label)
    for name in (loaded.WORK_PARAM, loaded.FOLDER_PARAM):
        st.query_params.pop(name, None)
    st.query_params.update(loaded.url_params(agg_dir))


def restore_from_url(startup: Path | None = None) -> bool:
    """Load the folder the page's URL names (a reload, a shared link); False when it names
    none that is there, or names the ``startup`` folder (shown with its own label)."""
    found = loaded.from_url(st.query_params.to_dict())
    if found is None or (startup is not None and found.path == startup):
        return False
    set_source(found.path, found.label)
    return True


def label() -> str | None:
    """What is loaded, in words."""
    return st.session_state.get(LABEL_KEY)


def job_line() -> str | None:
    """The loaded folder's jobs in words (``Job contoso-telemetry``), ``None`` when nothing
    is loaded or the folder cannot be read (the page says why)."""
    agg, _ = current()
    if agg is None:
        return None
    try:
        return job_words(*key(agg))
    except OrderdocError:
        return None


@st.cache_data(show_spinner=False, max_entries=16)
def job_words(path: str, sig: str) -> str:
    """Cached per folder signature (see ``diagnostics.appdata.loaded``): the jobs in words."""
    return loaded.job_names(Path(path), kpis(path, sig).jobs)


def current() -> tuple[store.Aggregate | None, str | None]:
    """The loaded aggregate and ``None``, or ``None`` and a message to show instead."""
    path = st.session_state.get(AGG_KEY)
    if not path:
        return (
            None,
            "Nothing is loaded yet: open an aggregate folder, a bundled sample or an upload on the Load page.",
        )
    try:
        return open_cached(path, store.signature(path)), None
    except OrderdocError as exc:
        return None, str(exc)


def require() -> store.Aggregate | None:
    """The loaded aggregate, or ``None`` after showing why there is none."""
    agg, problem = current()
    if agg is None:
        st.info(problem)
    return agg


def require_capture(
    what: str,
) -> tuple[store.Aggregate, tuple[str, str], build.CaptureContext] | None:
    """The loaded aggregate, its cache key and its capture, or ``None`` after saying that
    ``what`` (e.g. "The what-if needs") an event capture."""
    agg = require()
    if agg is None:
        return None
    folder = key(agg)
    ctx = capture(*folder)
    if ctx is None:
        st.info(
            f"{what} an event capture (the events themselves, not only the logs): "
            "upload one on the Load page or load a bundled scenario."
        )
        return None
    return agg, folder, ctx


def key(agg: store.Aggregate) -> tuple[str, str]:
    """The cache key of ``agg``."""
    return str(agg.path), store.signature(agg.path)


@st.cache_data(show_spinner=False, max_entries=16)
def open_cached(path: str, sig: str) -> store.Aggregate:
    """:func:`diagnostics.appdata.store.open_aggregate`, cached per folder signature."""
    return store.open_aggregate(path)


def _agg(path: str, sig: str) -> store.Aggregate:
    """The opened aggregate (cached by :func:`open_cached`)."""
    return open_cached(path, sig)


@st.cache_data(show_spinner=False, max_entries=16)
def kpis(path: str, sig: str, job: str | None = None) -> overview.Kpis:
    """Cached per folder signature (see ``diagnostics.appdata``): kpis (of ``job``)."""
    return overview.kpis(_agg(path, sig), job)


@st.cache_data(show_spinner=False, max_entries=16)
def errors_over_time(path: str, sig: str, job: str | None = None) -> tuple[pl.DataFrame, str]:
    """Cached per folder signature (see ``diagnostics.appdata``): errors over time."""
    return overview.errors_over_time(_agg(path, sig), job=job)


@st.cache_data(show_spinner=False, max_entries=16)
def kinds_by_partition(
    path: str, sig: str, kinds: tuple[str, ...], job: str | None = None
) -> tuple[pl.DataFrame, str]:
    """Cached per folder signature (see ``diagnostics.appdata``): kinds by partition."""
    return overview.kinds_by_partition(_agg(path, sig), kinds, job=job)


@st.cache_data(show_spinner=False, max_entries=16)
def input_events_by_partition(path: str, sig: str, job: str | None = None) -> pl.DataFrame:
    """Cached per folder signature (see ``diagnostics.appdata``): input events by partition."""
    return overview.input_events_by_partition(_agg(path, sig), job)


@st.cache_data(show_spinner=False, max_entries=16)
def job_events(path: str, sig: str, job: str | None = None) -> pl.DataFrame:
    """Cached per folder signature: the job events (starts, stops, ...) of ``job``."""
    return timeline.job_events(_agg(path, sig), job)


@st.cache_resource(show_spinner=False, max_entries=4)
def rule_pack(paths: tuple[str, ...], sig: str) -> alerts.RulePack:
    """Cached per folder signature (see ``diagnostics.appdata``): rule pack."""
    return alerts.load_pack(paths)


def rules_signature() -> str:
    """Changes when a rule file under :func:`rules_paths` changes."""
    parts = []
    for p in rules_paths():
        path = Path(p)
        if path.is_dir():
            parts.append(store.signature(path))
        elif path.is_file():
            parts.append(f"{path.stat().st_size}:{path.stat().st_mtime_ns}")
    return "|".join(parts)


def pack() -> alerts.RulePack:
    """The rule pack (re-loaded when a rule file changes)."""
    return rule_pack(tuple(rules_paths()), rules_signature())


@st.cache_data(show_spinner=False, max_entries=16)
def alerts_view(path: str, sig: str, rules: tuple[str, ...], rules_sig: str) -> alerts.AlertsView:
    """Cached per folder signature (see ``diagnostics.appdata``): alerts view."""
    return alerts.evaluate_pack(pack(), Path(path))


def evaluate(agg: store.Aggregate) -> alerts.AlertsView:
    """Alerts of the current rule pack on ``agg`` (cached)."""
    return alerts_view(*key(agg), tuple(rules_paths()), rules_signature())


@st.cache_data(show_spinner=False, max_entries=16)
def lateness_aggregate(
    path: str, sig: str, kinds: tuple[str, ...], job: str | None = None
) -> pl.DataFrame:
    """Cached per folder signature (see ``diagnostics.appdata``): lateness aggregate."""
    return lateness.from_aggregate(_agg(path, sig), kinds, job)


@st.cache_data(show_spinner=False, max_entries=8)
def capture(path: str, sig: str) -> build.CaptureContext | None:
    """Cached per folder signature (see ``diagnostics.appdata``): capture."""
    return build.capture_context(Path(path))


@st.cache_resource(show_spinner=False, max_entries=4)
def outcomes(path: str, sig: str) -> pl.DataFrame:
    """Cached per folder signature (see ``diagnostics.appdata``): outcomes (the engine's
    columns beside the cached events: ``diagnostics.appdata.replays.loaded_outcomes``)."""
    return loaded_outcomes(Path(path), events(path, sig))


@st.cache_resource(show_spinner=False, max_entries=8)
def results(path: str, sig: str, text: str, input_name: str) -> Impact:
    """Cached per folder signature and query text: the query's windows as emitted beside on
    time (the Results page's widgets rerun the page; the comparison runs once per query)."""
    ctx = capture(path, sig)
    assert ctx is not None
    return impact_data.compare(outcomes(path, sig), text, input_name, ctx.settings.policy)


@st.cache_resource(show_spinner=False, max_entries=4)
def events(path: str, sig: str) -> pl.DataFrame:
    """Cached per folder signature (see ``diagnostics.appdata``): events."""
    ctx = build.capture_context(Path(path))
    assert ctx is not None
    return pl.read_parquet(ctx.events_path)


@st.cache_resource(show_spinner=False, max_entries=8)
def lateness_capture(path: str, sig: str, by: str) -> pl.DataFrame:
    """Cached per folder signature (see ``diagnostics.appdata``): lateness capture (one
    row per event: kept as it is, not copied on every use)."""
    return lateness.from_outcomes(outcomes(path, sig), by)


@st.cache_resource(show_spinner=False, max_entries=8)
def lateness_capture_ecdf(
    path: str, sig: str, by: str
) -> tuple[pl.DataFrame, lateness.Bulk | None]:
    """Cached per folder signature: the capture's lateness ECDF per group and the span its
    chart shows (each finding about lateness shows the same chart)."""
    frame = lateness_capture(path, sig, by)
    return lateness.ecdf(frame), lateness.bulk(frame)


@st.cache_data(show_spinner=False, max_entries=16)
def idle(path: str, sig: str, job: str | None) -> pl.DataFrame:
    """Cached per folder signature (see ``diagnostics.appdata``): idle."""
    return partitions.idle_episodes(_agg(path, sig), job)


@st.cache_data(show_spinner=False, max_entries=16)
def delay(path: str, sig: str, job: str | None) -> pl.DataFrame:
    """Cached per folder signature (see ``diagnostics.appdata``): delay."""
    return partitions.watermark_delay(_agg(path, sig), job)


@st.cache_data(show_spinner=False, max_entries=16)
def partition_table(path: str, sig: str, job: str | None) -> pl.DataFrame:
    """Cached per folder signature (see ``diagnostics.appdata``): partition table."""
    return partitions.partition_table(_agg(path, sig), job)


@st.cache_data(show_spinner=False, max_entries=16)
def quarantine(path: str, sig: str) -> pl.DataFrame:
    """Cached per folder signature (see ``diagnostics.appdata``): quarantine."""
    return quarantine_data.records(_agg(path, sig))


@st.cache_resource(show_spinner=False, max_entries=4)
def replays(path: str, sig: str) -> Replays | None:
    """Cached per folder signature: the capture's replays, the load's among them, and what
    the explainer, the corrected job and the recommender measure on it (``None`` without a
    capture; :mod:`diagnostics.appdata.replays`)."""
    if capture(path, sig) is None:
        return None
    return loaded_replays(Path(path), events(path, sig), outcomes(path, sig))


@st.cache_data(show_spinner="Working out the causes…", max_entries=32)
def report(path: str, sig: str, job: str | None = None) -> Report:
    """The explainer's report for the folder, or for its ``job`` (with its capture and job
    definition, when it has them; see :func:`diagnostics.appdata.jobfix.explain_folder`)."""
    if capture(path, sig) is None:
        return jobfix.explain_folder(Path(path), None, job=job)
    return jobfix.explain_folder(Path(path), events(path, sig), job=job, replays=replays(path, sig))


@st.cache_data(show_spinner="Working out which job needs attention…", max_entries=16)
def job_choices(path: str, sig: str) -> list[str]:
    """The sidebar's job choices for the folder: its jobs with findings first, then "All
    jobs" (none to choose for one job or a capture; :mod:`diagnostics.appdata.scope`)."""
    if build.capture_context(Path(path)) is not None:
        return []
    names = partitions.jobs(_agg(path, sig))
    if len(names) < 2:
        return []
    return scope.choices(scope.job_order({name: report(path, sig, name) for name in names}))


def scoped() -> str | None:
    """The job every page shows (``None``: the whole folder: one job, or "All jobs")."""
    return scope.job_of(st.session_state.get(SCOPE_KEY))


@st.cache_data(show_spinner="Writing the corrected job…", max_entries=8)
def job_fix(path: str, sig: str) -> jobfix.FixView | None:
    """The corrected job of the folder's saved job definition (``None``: none saved), from
    the folder's report and the capture's replays (made once, :func:`report`)."""
    loaded = capture(path, sig) is not None
    return jobfix.build_fix(
        Path(path),
        explained=lambda job: report(path, sig, job),
        replays=replays(path, sig) if loaded else None,
        events=events(path, sig) if loaded else None,
    )


def report_or_error(agg: store.Aggregate) -> Report | None:
    """The explainer's report for ``agg`` (of the job in scope), or ``None`` after saying in
    the page why not (a page never shows a traceback)."""
    try:
        return report(*key(agg), scoped())
    except OrderdocError as exc:
        st.error(f"The explainer could not read this folder: {exc}")
    except Exception as exc:  # a bug elsewhere must not show a traceback here
        st.error(f"The explainer failed on this folder (a bug; {type(exc).__name__}: {exc}).")
    return None


@st.cache_resource(show_spinner="Replaying under the engine's rules…", max_entries=8)
def engine_view(path: str, sig: str, choice: EngineChoice) -> EngineView:
    """Cached per folder signature and engine choice: the capture under that engine's rules
    (its findings and its settings searched)."""
    ctx = capture(path, sig)
    assert ctx is not None
    return engines_data.engine_view(
        events(path, sig),
        ctx.settings.policy.timestamp_by,
        ctx.settings.columns,
        ctx.partitions or None,
        choice,
    )
