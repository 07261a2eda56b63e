"""The app's job definition: read from an upload, kept beside the capture it was used for,
and the corrected job (the ``--write-fix`` files) for the Findings page.

Layout inside an aggregate folder built from a capture: ``job/<file name>`` (the definition
as uploaded), ``job/parameters.json`` (when given), ``job/orderdoc-job.json`` (which file, input,
the TIMESTAMP BY column given on the page when the query's could not be used).
The fix itself is written into a temporary folder and handed to the page as bytes, so the
aggregate folder (and its cache signature) does not change when the page is shown.
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from diagnostics.errors import InputError, OrderdocError, Setting, setting_of
from diagnostics.jobdef import JobPolicy, job_policy, read_job_definition

JOB_DIR = "job"
INFO_FILE = "orderdoc-job.json"
PARAMETERS_FILE = "parameters.json"

#: The Load page's control for each setting an error about a job definition can name.
CONTROLS: dict[Setting, str] = {
    Setting.JOB_DEFINITION: "Job definition",
    Setting.PARAMETERS: "ARM parameter file",
    Setting.JOB_INPUT: "Input name",
    Setting.TIMESTAMP_BY: "TIMESTAMP BY column",
}


def message(exc: OrderdocError) -> str:
    """The error's line with the Load page control that resolves it (``... (set "Input
    name")``), as the command line adds its flag."""
    setting = setting_of(exc)
    control = CONTROLS.get(setting) if setting is not None else None
    return str(exc) if control is None else f'{exc} (set "{control}")'


def _safe_name(name: str) -> str:
    base = Path(name).name or "job.json"
    return base if base not in (INFO_FILE, PARAMETERS_FILE, "fix") else f"definition-{base}"


def _job(
    path: Path, input_name: str | None, params: Path | None, timestamp_by: str | None
) -> JobPolicy:
    """The job's policy; ``timestamp_by`` replaces the query's TIMESTAMP BY (as the command
    line's ``--timestamp-by`` does), for an expression or an input read two ways."""
    return job_policy(
        read_job_definition(path, params), input_name or None, timestamp_by=timestamp_by or None
    )


def read_uploaded(
    name: str,
    data: bytes,
    input_name: str | None = None,
    parameters: bytes | None = None,
    timestamp_by: str | None = None,
) -> JobPolicy:
    """The policy of an uploaded definition (errors name the uploaded file)."""
    with tempfile.TemporaryDirectory(prefix="orderdoc-job-") as tmp:
        path = Path(tmp) / _safe_name(name)
        path.write_bytes(data)
        params = None
        if parameters is not None:
            params = Path(tmp) / PARAMETERS_FILE
            params.write_bytes(parameters)
        try:
            return _job(path, input_name, params, timestamp_by)
        except InputError as exc:
            msg = str(exc).replace(str(path), name).replace(str(params), "the parameter file")
            raise InputError(msg) from exc


def save(
    agg_dir: Path,
    name: str,
    data: bytes,
    input_name: str | None = None,
    parameters: bytes | None = None,
    timestamp_by: str | None = None,
) -> Path:
    """Keep the definition in ``agg_dir/job`` for the Findings page."""
    folder = agg_dir / JOB_DIR
    folder.mkdir(parents=True, exist_ok=True)
    file = _safe_name(name)
    (folder / file).write_bytes(data)
    if parameters is not None:
        (folder / PARAMETERS_FILE).write_bytes(parameters)
    info = {
        "file": file,
        "input": input_name or None,
        "parameters": parameters is not None,
        "timestamp_by": timestamp_by or None,
    }
    (folder / INFO_FILE).write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")
    return folder


def saved(agg_dir: Path) -> tuple[Path, str | None, Path | None, str | None] | None:
    """``(definition, input, parameters, TIMESTAMP BY column)`` kept in ``agg_dir``, or
    ``None``."""
    info_path = agg_dir / JOB_DIR / INFO_FILE
    if not info_path.is_file():
        return None
    try:
        info = json.loads(info_path.read_text(encoding="utf-8"))
        folder = agg_dir / JOB_DIR
        params = folder / PARAMETERS_FILE if info.get("parameters") else None
        return folder / str(info["file"]), info.get("input"), params, info.get("timestamp_by")
    except (OSError, ValueError, KeyError) as exc:
        msg = f"{info_path}: not readable ({exc})"
        raise InputError(msg) from exc


def input_name(agg_dir: Path) -> str | None:
    """The name of the saved job's input (for the findings' query suggestions), or
    ``None`` when no job is saved or it cannot be read (the fix section says why)."""
    try:
        kept = saved(agg_dir)
        if kept is None:
            return None
        path, name, params, timestamp_by = kept
        return _job(path, name, params, timestamp_by).input.name
    except OrderdocError:
        return None


@dataclass(frozen=True)
class FixView:
    """The corrected job for the page: files to download, the two queries, the summary."""

    files: tuple[tuple[str, bytes], ...]
    old_query: str
    new_query: str | None
    old_definition: str
    new_definition: str
    before: dict[str, Any] | None
    after: dict[str, Any] | None
    policy_before: str
    policy_after: str
    summary: str


def _counts(outcome: Any) -> dict[str, Any] | None:
    if outcome is None:
        return None
    return {
        "late events": outcome.late,
        "out-of-order events": outcome.out_of_order,
        "early events (dropped)": outcome.early,
        "events dropped": outcome.dropped,
        "events held back > 5 s by another partition": outcome.held_back,
        "output delay p95 (s)": outcome.delay_p95_s,
    }


def build_fix(agg_dir: Path) -> FixView | None:
    """Explain the folder's capture under its saved job, write the fix (in a temporary
    folder) and describe it; ``None`` when the folder has no job definition or no capture."""
    import polars as pl

    from diagnostics.appdata.build import capture_context
    from diagnostics.explain import explain
    from diagnostics.jobdef.roundtrip import fix_and_verify, summary

    kept = saved(agg_dir)
    ctx = capture_context(agg_dir)
    if kept is None or ctx is None:
        return None
    path, input_name, params, timestamp_by = kept
    job = _job(path, input_name, params, timestamp_by)
    events = pl.read_parquet(ctx.events_path)
    policy = ctx.settings.policy
    partitions = ctx.partitions or None
    report = explain(
        None, events=events, policy=policy, columns=ctx.settings.columns, partitions=partitions
    )
    with tempfile.TemporaryDirectory(prefix="orderdoc-fix-") as tmp:
        trip = fix_and_verify(
            job,
            report.findings,
            Path(tmp),
            current=policy,
            events=events,
            columns=ctx.settings.columns,
            partitions=partitions,
            parameters=params,
        )
        files = tuple((p.name, p.read_bytes()) for p in trip.written.values())
        new_definition = trip.written["definition"].read_text(encoding="utf-8")
    return FixView(
        files=files,
        old_query=job.definition.query or "",
        new_query=trip.fix.query,
        old_definition=path.read_text(encoding="utf-8"),
        new_definition=new_definition,
        before=_counts(trip.fix.before),
        after=_counts(trip.after),
        policy_before=policy.describe(),
        policy_after=trip.replayed.policy.describe(),
        summary=summary(trip).replace(str(Path(tmp)) + "/", ""),
    )
