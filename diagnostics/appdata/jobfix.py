"""The app's job definition: read from an upload, kept beside the folder it was used for,
and the corrected job (the ``--write-fix`` files) for the Findings page.

Layout inside an aggregate folder built from uploads (a capture or logs): ``job/<file name>``
(the definition as uploaded), ``job/parameters.json`` (when given), ``job/orderdoc-job.json``
(which file and the name it was uploaded as, input, the TIMESTAMP BY column given on the
page when the query's could not be used).

With a capture, the findings come from replaying it under the job's policy and the fix is
measured on it. With logs, as ``orderdoc explain AGG_DIR --job-definition FILE --write-fix
DIR`` does, the job's policy gives the findings their tolerances (the delay an idle
partition adds, ...) and the fix is written from the findings without a measurement.
The fix itself is written into a temporary folder and handed to the page as bytes, so the
aggregate folder (and its cache signature) does not change when the page is shown.
"""

from __future__ import annotations

import difflib
import json
import re
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import polars as pl

from diagnostics.errors import InputError, OrderdocError, Setting, setting_of
from diagnostics.explain import assumed
from diagnostics.explain.model import Finding, Report
from diagnostics.jobdef import JobPolicy, job_policy, read_job_definition
from diagnostics.jobdef.fix import query_diff
from diagnostics.jobdef.job import name_the_input
from diagnostics.whatif.replays import Replays

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
    path: Path,
    input_name: str | None,
    params: Path | None,
    timestamp_by: str | None,
    label: str | None = None,
) -> JobPolicy:
    """The job's policy; ``timestamp_by`` replaces the query's TIMESTAMP BY (as the command
    line's ``--timestamp-by`` does), for an expression or an input read two ways; ``label``
    names the file in summaries (the uploaded file's name, not where the app keeps it)."""
    return job_policy(
        read_job_definition(path, params, label=label or path.name),
        input_name or None,
        timestamp_by=timestamp_by or None,
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
            return _job(path, input_name, params, timestamp_by, name)
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
        "name": name,
        "input": input_name or None,
        "parameters": parameters is not None,
        "timestamp_by": timestamp_by or None,
    }
    (folder / INFO_FILE).write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")
    return folder


@dataclass(frozen=True)
class SavedJob:
    """A job definition kept in an aggregate folder."""

    path: Path
    input: str | None
    parameters: Path | None
    timestamp_by: str | None
    #: the name it was uploaded as
    label: str

    def policy(self) -> JobPolicy:
        """The job's policy (an :class:`InputError` naming the file as uploaded when it
        cannot be read)."""
        with self.named():
            return _job(self.path, self.input, self.parameters, self.timestamp_by, self.label)

    @contextmanager
    def named(self) -> Iterator[None]:
        """Errors inside name the file as it was uploaded, not where the app keeps it."""
        try:
            yield
        except InputError as exc:
            msg = str(exc).replace(str(self.path), self.label)
            if self.parameters is not None:
                msg = msg.replace(str(self.parameters), "the parameter file")
            raise InputError(msg, setting_of(exc)) from exc


def saved(agg_dir: Path) -> SavedJob | None:
    """The job definition kept in ``agg_dir``, or ``None``."""
    info_path = agg_dir / JOB_DIR / INFO_FILE
    if not info_path.is_file():
        return None
    try:
        info = json.loads(info_path.read_text(encoding="utf-8"))
        folder = agg_dir / JOB_DIR
        params = folder / PARAMETERS_FILE if info.get("parameters") else None
        file = str(info["file"])
        return SavedJob(
            path=folder / file,
            input=info.get("input"),
            parameters=params,
            timestamp_by=info.get("timestamp_by"),
            label=Path(str(info.get("name") or file)).name,
        )
    except (OSError, ValueError, KeyError) as exc:
        msg = f"{info_path}: not readable ({exc})"
        raise InputError(msg) from exc


def input_name(agg_dir: Path) -> str | None:
    """The name of the saved job's input (for the findings' query suggestions), or
    ``None`` when no job is saved or it cannot be read (the fix section says why)."""
    try:
        kept = saved(agg_dir)
        return None if kept is None else kept.policy().input.name
    except OrderdocError:
        return None


#: The explainer's hints at command-line flags, and what the app's Load page offers instead.
_FLAG_HINT = re.compile(r"\bpass (--[a-z][a-z-]*)((?: or --[a-z][a-z-]*)*)")
LOAD_PAGE_HINT = assumed.HOW_TO_GIVE_APP


def _app_words(text: str) -> str:
    """``... unknown: pass --late-arrival or --job-definition`` as the app says it (and the
    way of giving an assumed tolerance, :mod:`diagnostics.explain.assumed`)."""
    return _FLAG_HINT.sub(LOAD_PAGE_HINT, assumed.in_app_words(text))


def in_app_words(findings: list[Finding]) -> list[Finding]:
    """The findings with the explainer's hints at command-line flags (``pass
    --late-arrival or --job-definition``) turned into what to fill in on the Load page."""
    out = []
    for f in findings:
        impact = {k: _app_words(v) if isinstance(v, str) else v for k, v in f.impact.items()}
        out.append(
            replace(
                f,
                title=_app_words(f.title),
                explanation=_app_words(f.explanation),
                impact=impact,  # type: ignore[arg-type]
            )
        )
    return out


def report_in_app_words(report: Report) -> Report:
    """The report's findings (:func:`in_app_words`) and tolerance lines as the app says them."""
    return replace(
        report,
        findings=in_app_words(report.findings),
        tolerances=tuple(_app_words(line) for line in report.tolerances),
    )


def definition_job(agg_dir: Path, job: JobPolicy) -> str | None:
    """The folder's job the job definition names (names compared ignoring case, as Azure
    does), or the folder's one job; ``None`` when the folder has several and none is it."""
    from diagnostics.explain.evidence import jobs_in

    names = jobs_in(agg_dir)
    if len(names) == 1:
        return names[0]
    return next((n for n in names if assumed.same_job(n, job.definition.name)), None)


def explain_folder(
    agg_dir: Path,
    events: pl.DataFrame | None = None,
    job: str | None = None,
    replays: Replays | None = None,
) -> Report:
    """The explainer's report for a folder the app built or opened (of its ``job`` when
    given: the app's job scope, :mod:`diagnostics.appdata.scope`).

    With a capture (``events``), the policy and partitions it was replayed with (those
    :func:`build_fix` measures the fix on); with a saved job definition and no capture, the
    job's policy for the job it names (as ``orderdoc explain AGG_DIR --job-definition
    FILE``: the folder's other jobs are read with ASA's defaults, assumed), so impacts use its
    tolerances. With a job, the query suggestions name its input. Hints at command-line flags
    become Load page words. ``replays``: the capture's (:mod:`diagnostics.appdata.replays`:
    the load's replay is not made again; what is measured is kept for the corrected job).
    """
    from diagnostics.appdata.build import capture_context
    from diagnostics.appdata.insight import explain

    ctx = capture_context(agg_dir)
    kept_job = None
    kept = saved(agg_dir)
    if kept is not None:
        try:
            kept_job = kept.policy()
        except OrderdocError:
            kept_job = None  # the Findings page's fix section says why
    if ctx is not None:
        if events is None:
            events = pl.read_parquet(ctx.events_path)
        report = explain(
            agg_dir,
            events=events,
            policy=ctx.settings.policy,
            columns=ctx.settings.columns,
            partitions=ctx.partitions or None,  # as build_fix measures the fix
            replays=replays,
            held_null=ctx.held_null,
        )
        own = True
    elif kept_job is not None and kept_job.policy.application_time:
        named = definition_job(agg_dir, kept_job)
        own = job is None or (named is not None and assumed.same_job(job, named))
        report = explain(
            agg_dir,
            policy=kept_job.policy if named is not None and own else None,
            job=job,
            policy_job=named,
        )
        if named is None:
            report = replace(report, tolerances=(*report.tolerances, _not_here(kept_job)))
        elif own:
            source = kept_job.describe_source()
            report = replace(report, policy=f"{kept_job.policy.describe()} (from {source})")
    else:
        report = explain(agg_dir, job=job)
        own = False
    findings = report.findings
    if kept_job is not None and own:
        findings = name_the_input(findings, kept_job.input.name)
    return report_in_app_words(replace(report, findings=findings))


def _not_here(job: JobPolicy) -> str:
    """The tolerance line of a job definition that names none of the folder's jobs."""
    return (
        f"the job definition names job {job.definition.name}, which is none of the jobs in "
        "these logs: it is not applied"
    )


@dataclass(frozen=True)
class FixView:
    """The corrected job for the page: files to download, the two queries and their diff,
    the definition's diff, the before/after (measured with a capture) and the summary."""

    files: tuple[tuple[str, bytes], ...]
    old_query: str
    new_query: str | None
    query_diff: str
    old_definition: str
    new_definition: str
    definition_diff: str
    before: dict[str, Any] | None
    after: dict[str, Any] | None
    policy_before: str
    policy_after: str
    summary: str
    #: what the fix was planned from, in words (a capture replayed, or the logs' findings)
    basis: str


def _counts(outcome: Any) -> dict[str, Any] | None:
    if outcome is None:
        return None
    return {
        "late events": outcome.late,
        "out-of-order events": outcome.out_of_order,
        "early events (dropped)": outcome.early,
        "events dropped": outcome.dropped,
        "events held back > 5 s by another partition": outcome.held_back,
        "release delay p95 (s)": outcome.delay_p95_s,
    }


def _json_lines(text: str) -> list[str]:
    """A JSON document laid out as the corrected one is (two-space indent), so that a diff
    shows the values that changed, not a different layout; other text as it is."""
    try:
        return json.dumps(json.loads(text), indent=2, ensure_ascii=False).splitlines()
    except ValueError:
        return text.splitlines()


def definition_diff(old: str, new: str, name: str) -> str:
    """The unified diff of two job definitions (JSON laid out alike), empty when equal."""
    lines = difflib.unified_diff(
        _json_lines(old), _json_lines(new), f"{name} (now)", f"{name} (corrected)", lineterm=""
    )
    text = "\n".join(lines)
    return text + "\n" if text else ""


#: FIX.md's words, in the app, for measuring a fix made from logs.
MEASURE_IN_APP = "upload a capture of the input with the job definition on the Load page"


def build_fix(
    agg_dir: Path,
    *,
    explained: Callable[[str | None], Report] | None = None,
    replays: Replays | None = None,
    events: pl.DataFrame | None = None,
) -> FixView | None:
    """Explain the folder under its saved job, write the fix (in a temporary folder) and
    describe it; ``None`` when the folder has no job definition. With the folder's capture
    the fix is measured on it; with logs only it follows the findings (no measurement).
    ``explained``: the folder's report for a job (:func:`explain_folder`'s, kept by the
    app); ``replays`` and ``events``: the capture's, as the report was made with them."""
    from diagnostics.appdata.build import capture_context
    from diagnostics.jobdef.roundtrip import fix_and_verify, summary

    kept = saved(agg_dir)
    if kept is None:
        return None
    job = kept.policy()
    ctx = capture_context(agg_dir)
    if ctx is not None and events is None:
        events = pl.read_parquet(ctx.events_path)
    if ctx is None:
        events, replays = None, None
    which = None if ctx is not None else definition_job(agg_dir, job)
    if explained is not None:
        report = explained(which)
    else:
        report = explain_folder(agg_dir, events, job=which, replays=replays)
    policy = ctx.settings.policy if ctx is not None else job.policy
    with tempfile.TemporaryDirectory(prefix="orderdoc-fix-") as tmp, kept.named():
        trip = fix_and_verify(
            job,
            report.findings,
            Path(tmp),
            current=policy,
            events=replays if replays is not None else events,
            columns=ctx.settings.columns if ctx is not None else None,
            partitions=(ctx.partitions or None) if ctx is not None else None,
            parameters=kept.parameters,
            measure_hint=MEASURE_IN_APP,
        )
        if replays is not None:
            replays.forget()  # the fix's replays: its counts are kept
        files = tuple((p.name, p.read_bytes()) for p in trip.written.values())
        new_definition = trip.written["definition"].read_text(encoding="utf-8")
        text = summary(trip).replace(str(Path(tmp)) + "/", "")
    old_definition = kept.path.read_text(encoding="utf-8-sig")
    basis = (
        "measured by replaying the capture under the job as it is and as corrected"
        if ctx is not None
        else "from the findings in the logs, under the job's settings; not measured "
        f"({MEASURE_IN_APP} to measure it)"
    )
    return FixView(
        files=files,
        old_query=job.definition.query or "",
        new_query=trip.fix.query,
        query_diff=query_diff(trip.fix),
        old_definition=old_definition,
        new_definition=new_definition,
        definition_diff=definition_diff(old_definition, new_definition, kept.label),
        before=_counts(trip.fix.before),
        after=_counts(trip.after),
        policy_before=policy.describe(),
        policy_after=trip.replayed.policy.describe(),
        summary=text,
        basis=basis,
    )
