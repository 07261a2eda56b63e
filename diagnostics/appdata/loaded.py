"""What the app has loaded, named so that a reload or a shared page URL finds it again, and
the words the pages show for it.

A folder the app built (from an upload or a bundled sample) lives under
:func:`~diagnostics.appdata.workdir.base` and is named in the page's URL by its folder name
(``?work=<name>``); a folder opened on the Load page or named at start-up is named by its
path (``?folder=<path>``). What was loaded, in words (``capture readings.csv, job
contoso-telemetry``), is kept in the working folder (``loaded.json``) so that a new browser
session shows the same label; an internal folder's path is never shown.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from diagnostics.appdata import workdir
from diagnostics.appdata.build import UNNAMED_JOB, capture_context
from diagnostics.errors import OrderdocError

LOADED_FILE = "loaded.json"
#: URL query parameters naming the loaded folder.
WORK_PARAM = "work"
FOLDER_PARAM = "folder"
#: A working folder's name (see :func:`diagnostics.appdata.workdir.folder_for`).
_WORK_NAME = re.compile(r"^[0-9a-f]{20}$")


@dataclass(frozen=True)
class Loaded:
    """A folder to show and its label."""

    path: Path
    label: str


def is_internal(folder: Path) -> bool:
    """True when ``folder`` is a working folder the app built."""
    try:
        return folder.resolve().parent == workdir.base().resolve()
    except OSError:
        return False


def remember(folder: Path, label: str) -> None:
    """Keep ``label`` in the working folder ``folder`` (a folder the app did not build is
    never written to)."""
    if not is_internal(folder):
        return
    path = folder / LOADED_FILE
    text = json.dumps({"label": label}) + "\n"
    try:
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
    except OSError:
        return  # the label is a convenience: the folder still loads without it


def label_of(folder: Path) -> str:
    """The label kept in ``folder``, else its path (a working folder without a kept label:
    ``an earlier upload``)."""
    try:
        data = json.loads((folder / LOADED_FILE).read_text(encoding="utf-8"))
        label = data.get("label") if isinstance(data, dict) else None
        if isinstance(label, str) and label:
            return label
    except (OSError, ValueError):
        pass
    return "an earlier upload" if is_internal(folder) else str(folder)


def url_params(folder: Path) -> dict[str, str]:
    """The URL query parameter naming ``folder``."""
    if is_internal(folder):
        return {WORK_PARAM: folder.name}
    return {FOLDER_PARAM: str(folder)}


def from_url(params: Mapping[str, str]) -> Loaded | None:
    """The folder a page URL names, with its label; ``None`` when it names none, or one that
    is not there (an unknown working folder name, a folder no longer complete)."""
    name = str(params.get(WORK_PARAM) or "")
    if _WORK_NAME.match(name):
        folder = workdir.base() / name
        if workdir.is_complete(folder):
            return Loaded(folder, label_of(folder))
        return None
    path = str(params.get(FOLDER_PARAM) or "").strip()
    if path:
        return Loaded(Path(path), path)
    return None


def _definition_name(folder: Path) -> str | None:
    """The job name of the definition kept in ``folder`` (``None``: none, or unreadable)."""
    from diagnostics.appdata.jobfix import saved

    try:
        kept = saved(folder)
        return None if kept is None else kept.policy().definition.name or None
    except OrderdocError:
        return None


def job_names(folder: Path, jobs: Sequence[str]) -> str:
    """The jobs of a loaded folder as a sentence's start (``Job contoso-telemetry``).

    A capture's job is the one its job definition names (``Job not named ...`` when it was
    replayed without one); logs name their jobs in upper case (ASA's resource IDs), so the
    job definition loaded with them gives the name as written."""
    try:
        ctx = capture_context(folder)
    except OrderdocError:
        ctx = None
    written = _definition_name(folder)
    if ctx is not None:
        if ctx.settings.job != UNNAMED_JOB:
            return f"Job {ctx.settings.job}"
        if written:  # a definition kept beside a capture replayed without it
            return f"Job {written}"
        return "Job not named (load its definition with the capture to name it)"
    named = [written if written and j.lower() == written.lower() else j for j in jobs]
    if not named:
        return "No job named in the logs"
    return ("Job " if len(named) == 1 else "Jobs ") + ", ".join(named)


def shown_path(folder: Path, label: str | None) -> str:
    """How a page names the loaded folder: what was loaded for a working folder, the path of
    a folder the user opened."""
    if is_internal(folder):
        return label or label_of(folder)
    return str(folder)
