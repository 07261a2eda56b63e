"""The Load page's capture settings: TIMESTAMP BY, the tolerances, the action, PARTITION BY
and OVER, filled from an uploaded job definition or from what was loaded before, and read
back as the settings a replay takes."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from diagnostics.appdata import jobfix, loadform
from diagnostics.appdata.build import UNNAMED_JOB, CaptureSettings
from diagnostics.captures.paths import DEFAULT_PATH_FORMAT
from diagnostics.engine.policy import Action, OrderingPolicy
from diagnostics.errors import OrderdocError, Setting, setting_of
from diagnostics.storage import is_url, resolve_input

#: Session key of the uploaded job definition: (file name, bytes, input, parameter bytes).
JOB_UPLOAD = "job_upload"
#: Session key of the uploaded job definition's job name.
JOB_NAME = "job_name"
#: Key of the capture path format field (Event Hubs Capture file naming).
PATH_FORMAT = "cap_path_format"


#: Session key: what the capture settings fields were last filled from, and with what.
FILLED = "cap_filled"
#: The fields' keys.
TS, UNLIMITED, LATE, OOO, ACTION, PBY, OVER = (
    "cap_ts",
    "cap_unlimited",
    "cap_late",
    "cap_ooo",
    "cap_action",
    "cap_pby",
    "cap_over",
)


def _file_key(upload: object) -> tuple:
    return (
        getattr(upload, "name", None),
        getattr(upload, "size", None),
        getattr(upload, "file_id", None),
    )


def _chosen_capture() -> tuple[tuple, object | None]:
    """The key of the capture chosen (one uploaded file, Capture files, or a path on this
    machine) and the upload or path to read its columns from (``None``: none chosen)."""
    for key in ("uploads", "capture_folder"):
        files = st.session_state.get(key) or []
        avro = all(f.name.lower().endswith(".avro") for f in files)
        if files and (len(files) == 1 or avro):
            return _file_key(files[0]), files[0]
    path = str(st.session_state.get("capture_path") or "").strip()
    if path and is_url(path):  # a storage URL: staged only when its columns are read
        return ("path", path), path
    if path:
        return ("path", path), Path(path)
    return (), None


def _columns_of(chosen: object | None) -> tuple[tuple[str, ...], str]:
    """The columns and name of the chosen capture, read from its head."""
    if chosen is None:
        return (), ""
    if isinstance(chosen, str):  # a storage URL: its blobs staged (docs/storage.md)
        try:
            return loadform.path_columns(Path(resolve_input(chosen))), chosen
        except OrderdocError:
            return (), ""
    if isinstance(chosen, Path):
        return loadform.path_columns(chosen), chosen.name
    name = str(getattr(chosen, "name", ""))
    return loadform.capture_columns(name, chosen.getvalue()), name  # type: ignore[attr-defined]


def _definition_key() -> tuple:
    definition = st.session_state.get("job_definition")
    if definition is None:
        return ()
    input_name = str(st.session_state.get("job_input") or "").strip() or None
    return (_file_key(definition), _file_key(st.session_state.get("job_params")), input_name)


def _definition_values(columns: tuple[str, ...]) -> loadform.FormValues | None:
    """The field values of the job definition chosen (``None``: none, or it cannot be read:
    the form says why)."""
    definition = st.session_state.get("job_definition")
    if definition is None:
        return None
    params = st.session_state.get("job_params")
    input_name = str(st.session_state.get("job_input") or "").strip() or None
    upload = (
        definition.name,
        definition.getvalue(),
        input_name,
        params.getvalue() if params else None,
    )
    try:
        job = jobfix.read_uploaded(*upload)
    except OrderdocError as exc:
        # an expression as TIMESTAMP BY: the capture's event-time column stands in for it
        column = loadform.event_time_column(columns)
        if setting_of(exc) is not Setting.TIMESTAMP_BY or column is None:
            return None
        try:
            job = jobfix.read_uploaded(*upload, column)
        except OrderdocError:
            return None
    return loadform.from_policy(job.policy, f"job definition {definition.name}")


def _as_state(values: loadform.FormValues) -> dict[str, object]:
    return {
        TS: values.timestamp_by,
        UNLIMITED: values.late_arrival_s is None,
        LATE: values.late_arrival_s if values.late_arrival_s is not None else 5,
        OOO: values.out_of_order_s,
        ACTION: values.action.value,
        PBY: values.partition_by,
        OVER: ", ".join(values.over),
    }


def _fill_from_loaded() -> None:
    """Fill the capture settings fields from what was loaded (before they are drawn): the
    job definition's policy; else the capture's event-time column; else empty. A field the
    user changed keeps the change until a job definition is loaded (whose policy is used).
    Nothing is read again while the same files stay chosen."""
    capture_key, chosen = _chosen_capture()
    key = (capture_key, _definition_key())
    last = st.session_state.get(FILLED)
    if last is not None and last[0] == key:
        return
    columns, capture_name = _columns_of(chosen)
    from_definition = _definition_values(columns)
    if from_definition is not None:
        values = from_definition
    elif columns:
        values = loadform.from_columns(columns, f"capture {capture_name}")
    else:
        values = loadform.EMPTY
    wanted = _as_state(values)
    before = {} if last is None else last[1]
    for name, value in wanted.items():
        user_changed = name in before and st.session_state.get(name) != before[name]
        if from_definition is None and user_changed:
            continue
        st.session_state[name] = value
    st.session_state[FILLED] = (key, wanted)


def policy_form() -> CaptureSettings | None:
    _fill_from_loaded()
    with st.expander("Capture settings (the job's time policy)", expanded=False):
        c1, c2, c3 = st.columns(3)
        ts = c1.text_input("TIMESTAMP BY column (empty: arrival time)", key=TS)
        arrival = c2.text_input(
            "Arrival-time column (empty: detect, e.g. EventEnqueuedUtcTime)", "", key="cap_arrival"
        )
        part = c3.text_input(
            "Partition column (empty: detect partition_id or PartitionId)", "", key="cap_part"
        )
        c4, c5, c6 = st.columns(3)
        unlimited = c4.checkbox("Unlimited late-arrival tolerance", key=UNLIMITED)
        late = c4.number_input(
            "Late-arrival tolerance (s)", 0, 1_814_399, key=LATE, disabled=unlimited
        )
        ooo = c5.number_input("Out-of-order tolerance (s)", 0, 1_814_399, key=OOO)
        action = c6.radio("Other events", ["adjust", "drop"], horizontal=True, key=ACTION)
        c7, c8 = st.columns(2)
        partition_by = c7.checkbox("PARTITION BY PartitionId", key=PBY)
        over = c8.text_input("TIMESTAMP BY … OVER columns (comma-separated)", key=OVER)
        st.text_input(
            "Capture path format (Event Hubs Capture files; empty: Capture's default "
            f"{DEFAULT_PATH_FORMAT})",
            "",
            key=PATH_FORMAT,
        )
        st.markdown(
            "**Or take the policy from the job's definition** (used with a capture, and "
            "with logs: their findings use its settings and the corrected job is written)"
        )
        d1, d2, d3 = st.columns(3)
        definition = d1.file_uploader(
            "Job definition: ARM template, resource JSON or `az stream-analytics job show` output",
            type=["json"],
            key="job_definition",
        )
        params = d2.file_uploader("ARM parameter file (optional)", type=["json"], key="job_params")
        input_name = d3.text_input("Input name (when the job has several)", "", key="job_input")
    job_name = UNNAMED_JOB
    try:
        policy = OrderingPolicy(
            timestamp_by=ts.strip() or None,
            late_arrival_ns=None if unlimited else int(late) * 1_000_000_000,
            out_of_order_ns=int(ooo) * 1_000_000_000,
            action=Action(action),
            partition_by=partition_by,
            over=tuple(c.strip() for c in over.split(",") if c.strip()),
        )
        st.session_state.pop(JOB_UPLOAD, None)
        if definition is not None:
            upload = (
                definition.name,
                definition.getvalue(),
                input_name.strip() or None,
                params.getvalue() if params is not None else None,
            )
            note = "the settings above are not used"
            try:
                job = jobfix.read_uploaded(*upload)
            except OrderdocError as exc:
                # The query's TIMESTAMP BY is an expression, or the input is read two ways:
                # the TIMESTAMP BY column above says which column of the capture to use.
                if setting_of(exc) is not Setting.TIMESTAMP_BY or not ts.strip():
                    raise
                upload = (*upload, ts.strip())
                job = jobfix.read_uploaded(*upload)
                note = f"{exc}; the TIMESTAMP BY column above, {ts.strip()}, is used instead"
            policy = job.policy
            job_name = job.definition.name or UNNAMED_JOB
            st.session_state[JOB_UPLOAD] = upload
            st.session_state[JOB_NAME] = job.definition.name
            st.caption(
                f"Policy from {job.describe_source().replace(str(job.definition.path), definition.name)}"
                f": {policy.describe()} ({note})."
            )
    except OrderdocError as exc:
        st.error(jobfix.message(exc))
        return None
    return CaptureSettings(
        policy=policy,
        job=job_name,
        arrival_col=arrival.strip() or None,
        partition_col=part.strip() or None,
    )
