"""Load: open an aggregate folder, a bundled sample, or upload raw logs or an event capture."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import streamlit as st

from diagnostics.appdata import jobfix, samples, workdir
from diagnostics.appdata.build import (
    CaptureSettings,
    Progress,
    UploadKind,
    build_from_uploads,
    classify,
)
from diagnostics.appdata.capture_input import (
    build_from_reader,
    fingerprint,
    is_capture_folder,
    read_path,
    read_uploads,
)
from diagnostics.appdata.store import open_aggregate
from diagnostics.errors import OrderdocError
from diagnostics.storage import resolve_input
from screens import cache, engine_view
from screens.policy_form import JOB_NAME, JOB_UPLOAD, PATH_FORMAT, policy_form


def _progress_bar(text: str) -> Progress:
    bar = st.progress(0.0, text=text)

    def step(fraction: float, message: str) -> None:
        bar.progress(min(max(fraction, 0.0), 1.0), text=message)

    return step


def _run(
    label: str, target: Path, work: Callable[[Progress], None], *, with_job: bool = True
) -> None:
    """Run ``work(progress)`` into ``target`` unless it is already there; then select it
    (``with_job``: the uploaded job definition is used, its job named in the label)."""
    try:
        if workdir.is_complete(target):
            st.caption("Already analysed: the earlier result is reused.")
        else:
            work(_progress_bar(f"Working on {label}…"))
            workdir.mark_complete(target)
        open_aggregate(target)
    except OrderdocError as exc:
        workdir.discard(target)
        st.error(jobfix.message(exc))
        return
    except Exception as exc:  # a bug, but the page must not show a traceback
        workdir.discard(target)
        st.error(f"Internal error while processing {label} ({type(exc).__name__}: {exc}).")
        return
    job = st.session_state.get(JOB_NAME) if with_job and st.session_state.get(JOB_UPLOAD) else None
    cache.set_source(target, label)
    st.success(
        f"Loaded {label}{f' with job {job}' if job else ''}. Open the Overview or Findings "
        "page in the sidebar."
    )


def _path_format() -> str | None:
    return str(st.session_state.get(PATH_FORMAT) or "").strip() or None


def _job_fingerprint() -> bytes:
    upload = st.session_state.get(JOB_UPLOAD)
    return b"" if upload is None else repr(upload).encode()


def _keep_job(target: Path) -> None:
    """Keep the uploaded job definition beside the capture (for the Findings page)."""
    upload = st.session_state.get(JOB_UPLOAD)
    if upload is not None:
        jobfix.save(target, *upload)


def _replay_uploads(named: list[tuple[str, bytes]], settings: CaptureSettings) -> None:
    """Replay uploaded capture files: one table or ``.avro`` file, or Capture files read
    together (partition from each file's path)."""
    path_format = _path_format()
    target = workdir.folder_for(
        *(n.encode() + b"\0" + d for n, d in named),
        repr(settings.to_dict()).encode(),
        (path_format or "").encode(),
        _job_fingerprint(),
    )

    def replay_it(progress: Progress) -> None:
        capture = read_uploads(named, settings, path_format)
        build_from_reader(capture, settings, target, progress)
        _keep_job(target)

    label = named[0][0] if len(named) == 1 else f"{len(named)} Capture files"
    _run(f"capture {label}", target, replay_it)


def _uploads(settings: CaptureSettings | None) -> None:
    files = st.file_uploader(
        "Raw ASA diagnostic logs (any export shape, gzip accepted) or one event capture "
        "(CSV, JSON Lines, Parquet, or Event Hubs Capture .avro files)",
        accept_multiple_files=True,
        key="uploads",
    )
    if not st.button("Analyse the uploads", key="analyse_uploads", disabled=not files):
        return
    assert files is not None
    arrival = settings.arrival_col if settings else None
    named = [(f.name, f.getvalue()) for f in files]
    kinds = {name: classify(name, data, arrival) for name, data in named}
    unknown = [n for n, k in kinds.items() if k is UploadKind.UNKNOWN]
    if unknown:
        st.error(
            f"{', '.join(unknown)}: not an ASA diagnostic log or an event capture. Logs are "
            'JSON (Lines, arrays or {"records": [...]}) or Log Analytics CSV; a capture is an '
            "Event Hubs Capture .avro file or a CSV, JSON Lines or Parquet table with "
            + (
                f"an '{arrival}' column."
                if arrival
                else "an arrival-time column "
                "(arrival_time, EventEnqueuedUtcTime, IoTHub.EnqueuedTime or "
                "BlobLastModifiedUtcTime)."
            )
        )
        return
    captures = [n for n, k in kinds.items() if k is UploadKind.CAPTURE]
    if captures and len(named) > 1 and not is_capture_folder(named):
        st.error(
            f"Upload one event capture on its own, or only Event Hubs Capture .avro files "
            f"({', '.join(captures)} is a capture)."
        )
        return
    if captures:
        if settings is not None:
            _replay_uploads(named, settings)
        return
    target = workdir.folder_for(*(n.encode() + b"\0" + d for n, d in named), _job_fingerprint())

    def aggregate_it(progress: Progress) -> None:
        paths = workdir.save_uploads(target / "uploads", named)
        build_from_uploads(paths, target, progress)
        _keep_job(target)  # the job definition gives the logs' findings its policy

    _run(", ".join(n for n, _ in named), target, aggregate_it)


def _capture_folder_upload(settings: CaptureSettings | None) -> None:
    files = st.file_uploader(
        "Or an Event Hubs Capture folder (its .avro files; each file's partition comes from "
        "its path in the folder, as the capture path format names it)",
        type=["avro"],
        accept_multiple_files="directory",
        key="capture_folder",
    )
    if not st.button("Replay the Capture folder", key="replay_folder", disabled=not files):
        return
    if files and settings is not None:
        _replay_uploads([(f.name, f.getvalue()) for f in files], settings)


def render() -> None:
    st.title("Load")
    st.write(
        "Open what `orderdoc aggregate` wrote, try a bundled sample, or upload raw logs or an "
        "event capture. Uploads are aggregated here with orderdoc's polars aggregation (the "
        "same tables as the Spark job, no Java needed); a capture is replayed first."
    )
    st.subheader("Bundled samples")
    options = samples.choices()
    if options:
        c1, c2 = st.columns([3, 1])
        chosen = c1.selectbox("Sample", list(options), key="sample_choice")
        if c2.button("Load the sample", key="load_sample"):
            sample = options[chosen]
            target = workdir.folder_for(sample.fingerprint())
            _run(
                f"sample {chosen}",
                target,
                lambda progress: samples.build(sample, target, progress),
                with_job=False,
            )
    else:
        st.caption("No bundled samples found beside this installation.")

    st.subheader("Aggregate folder")
    st.caption(
        "An opened folder is explained as it is: a job definition (under Upload) is used "
        "with uploaded logs or a capture, not with a folder opened here."
    )
    c1, c2 = st.columns([3, 1])
    path = c1.text_input(
        "Folder written by `orderdoc aggregate … --out DIR` (or its storage URL: az://…, "
        "abfss://…, https://ACCOUNT.blob.core.windows.net/…)",
        key="agg_path",
    )
    if c2.button("Open the folder", key="open_folder"):
        try:
            agg = open_aggregate(resolve_input(path.strip()))
        except OrderdocError as exc:
            st.error(str(exc))
        else:
            cache.set_source(agg.path, str(agg.path))
            st.success(f"Opened {agg.path} ({', '.join(agg.tables) or 'summary only'}).")

    engine_view.load_form()

    st.subheader("Upload")
    settings = policy_form()
    _uploads(settings)
    _capture_folder_upload(settings)
    _capture_path(settings)


def _capture_path(settings: CaptureSettings | None) -> None:
    st.subheader("Event capture on this machine")
    c1, c2 = st.columns([3, 1])
    path = c1.text_input(
        "A capture file, or an Event Hubs Capture folder ({Namespace}/{EventHub}/"
        "{PartitionId}/…/{Second}.avro), here or in a storage account (az://CONTAINER/PATH, "
        "abfss://…, https://ACCOUNT.blob.core.windows.net/…; docs/storage.md): uses the "
        "capture settings above",
        key="capture_path",
    )
    if not c2.button("Replay the capture", key="replay_path") or settings is None:
        return
    try:  # a storage URL: its blobs staged on this machine (docs/storage.md)
        path = resolve_input(path.strip())
    except OrderdocError as exc:
        st.error(str(exc))
        return
    path_format = _path_format()
    try:
        target = workdir.folder_for(
            fingerprint(path),
            repr(settings).encode(),
            (path_format or "").encode(),
            _job_fingerprint(),
        )
    except OSError as exc:
        st.error(f"{path}: cannot be read ({exc.strerror or exc})")
        return

    def replay_it(progress: Progress) -> None:
        build_from_reader(read_path(path, settings, path_format), settings, target, progress)
        _keep_job(target)

    _run(f"capture {path.strip()}", target, replay_it)
