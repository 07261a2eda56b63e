"""What a CTI replay writes: diagnostics records, metrics, the summary and the output files.

:func:`write_outputs` puts into a folder ``outcomes.parquet`` (the first input; with two
inputs also ``outcomes_right.parquet``), ``ctis.parquet``, ``diagnostics.jsonl``
(``CtiViolation`` and ``InvalidInputTimeStamp`` records), ``metrics.parquet`` (only when
there are arrival times) and ``cti_summary.json``, and returns the summary and the names of
the files it wrote.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import polars as pl

from diagnostics.captures.names import Rename
from diagnostics.cti.frames import CTI_OUTCOME_COLUMNS
from diagnostics.cti.metrics import cti_metrics
from diagnostics.cti.policy import Operator
from diagnostics.cti.records import suggest_cti_delay, violation_records
from diagnostics.cti.replay import CtiReplayResult
from diagnostics.durations import format_duration
from diagnostics.errors import Setting
from diagnostics.instrument.aggregate import aggregate_errors, example_payloads
from diagnostics.instrument.correlation import correlation_id
from diagnostics.instrument.options import InstrumentOptions
from diagnostics.instrument.records import data_error_record
from diagnostics.instrument.run import write_diagnostics, write_metrics
from diagnostics.timestamps import UTC_NS
from diagnostics.words import noun

SUMMARY_FILE = "cti_summary.json"


class Written(NamedTuple):
    """What :func:`write_outputs` wrote: the summary (also in ``cti_summary.json``) and the
    names of the files, in the order written."""

    summary: dict[str, Any]
    files: tuple[str, ...]


def cti_records(
    result: CtiReplayResult, options: InstrumentOptions, sources: Sequence[str]
) -> list[dict[str, Any]]:
    """The diagnostics records of a replay, sorted by time: per input (named ``sources[i]``),
    its ``CtiViolation`` records and the ``InvalidInputTimeStamp`` ones of unusable rows."""
    policy_text = result.policy.describe()
    records: list[dict[str, Any]] = []
    for index, frame in enumerate(result.outcomes):
        scoped = dataclasses.replace(options, source=sources[index])
        mine = [v for v in result.violations if v.stream == index]
        payloads = _payloads(frame, [v.event_id for v in mine])
        records += violation_records(mine, scoped, policy_text=policy_text, payloads=payloads)
        records += _invalid_records(frame, scoped, policy_text)
    records.sort(key=lambda r: str(r.get("time") or r.get("message Time")))
    return records


def summarize(
    result: CtiReplayResult, *, operator: Operator | None = None, window: str | None = None
) -> dict[str, Any]:
    """Counts per input, CTI counts and the suggested delay (JSON-ready). ``window`` is the
    hopping window as the user wrote it (``SIZE[/HOP]``)."""
    ctis = result.ctis
    inputs = []
    for index, frame in enumerate(result.outcomes):
        inputs.append(
            {
                "events": frame.height,
                "violations": int(frame["violation"].sum()),
                "adjusted": int((frame["status"] == "adjusted").sum()),
                "dropped": int((frame["violation"] & frame["dropped"]).sum()),
                "invalid_timestamp": int(frame["invalid_timestamp"].sum()),
                "released": int(frame["release_time"].is_not_null().sum()),
                "committed_at_infinity": int(frame["committed_at_infinity"].sum()),
                "ctis": int((ctis["stream"] == ("left", "right")[index]).sum()),
                "renamed": [r.to_dict() for r in _renames(result, index)],
            }
        )
    suggestion = suggest_cti_delay(result.violations, result.policy.delay_ns)
    return {
        "mode": "cti",
        "policy": result.policy.describe(),
        "operator": None if operator is None else operator.value,
        "window": window,
        "inputs": inputs,
        "output_ctis": int((ctis["stream"] == "output").sum()),
        "cti_delay_ns": result.policy.delay_ns,
        "suggested_cti_delay_ns": suggestion,
        "suggested_cti_delay": format_duration(suggestion),
    }


def _count(count: int, one: str) -> str:
    """``"1 CTI violation"``, ``"2 CTI violations"``."""
    return f"{count} {noun(count, one)}"


def format_summary(
    summary: dict[str, Any], *, flag_of: Callable[[Setting], str | None] | None = None
) -> str:
    """The summary as lines in the settings' words; ``flag_of`` names the way a setting is
    given (the command line passes its flags: ``... (use --cti-delay)``)."""
    lines = [f"CTI replay: {summary['policy']}"]
    for name, item in zip(("input", "second input"), summary["inputs"], strict=False):
        lines.append(
            f"{name}: {_count(item['events'], 'event')}, "
            f"{_count(item['violations'], 'CTI violation')} "
            f"({item['dropped']} dropped, {item['adjusted']} adjusted), "
            f"{item['invalid_timestamp']} with an invalid time (dropped), "
            f"{item['released']} released ({item['committed_at_infinity']} only by the flush), "
            f"{_count(item['ctis'], 'CTI')}"
        )
        lines += [
            f"  renamed '{r['column']}' -> '{r['renamed']}' ({r['reason']})"
            for r in item.get("renamed", ())
        ]
    lines.append(f"output CTIs: {summary['output_ctis']}")
    if summary["suggested_cti_delay_ns"] != summary["cti_delay_ns"]:
        line = (
            f"a {Setting.CTI_DELAY} of {summary['suggested_cti_delay']} would have avoided "
            "the violations of generated CTIs"
        )
        flag = flag_of(Setting.CTI_DELAY) if flag_of is not None else None
        lines.append(f"{line} (use {flag})" if flag else line)
    return "\n".join(lines)


def write_outputs(
    result: CtiReplayResult,
    out: Path,
    options: InstrumentOptions,
    sources: Sequence[str],
    *,
    operator: Operator | None = None,
    window: str | None = None,
) -> Written:
    """Write the replay's files into the folder ``out`` (created); return the summary and the
    files' names."""
    out.mkdir(parents=True, exist_ok=True)
    files = ["outcomes.parquet"]
    result.outcomes[0].write_parquet(out / "outcomes.parquet")
    if len(result.outcomes) == 2:
        result.outcomes[1].write_parquet(out / "outcomes_right.parquet")
        files.append("outcomes_right.parquet")
    result.ctis.write_parquet(out / "ctis.parquet")
    write_diagnostics(out / "diagnostics.jsonl", cti_records(result, options, sources))
    files += ["ctis.parquet", "diagnostics.jsonl"]
    metrics = cti_metrics(result.outcomes, result.cti_records, options.job)
    if metrics is not None:
        write_metrics(out / "metrics.parquet", metrics)
        files.append("metrics.parquet")
    summary = summarize(result, operator=operator, window=window)
    (out / SUMMARY_FILE).write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    return Written(summary, (*files, SUMMARY_FILE))


def _renames(result: CtiReplayResult, index: int) -> tuple[Rename, ...]:
    return result.renames[index] if index < len(result.renames) else ()


def _payloads(frame: pl.DataFrame, event_ids: list[int]) -> dict[int, dict[str, Any]]:
    """Input columns of the given events, for ``ExampleEvents``."""
    keep = [c for c in frame.columns if c not in CTI_OUTCOME_COLUMNS]
    rows = frame.filter(pl.col("event_id").is_in(event_ids)).select("event_id", *keep)
    return {int(row["event_id"]): {c: row[c] for c in keep} for row in rows.iter_rows(named=True)}


def _invalid_records(
    frame: pl.DataFrame, options: InstrumentOptions, policy_text: str
) -> list[dict[str, Any]]:
    """``InvalidInputTimeStamp`` records for rows whose start/end could not be used, through
    the ASA replay's own aggregation (needs arrival times to place them in windows)."""
    bad = frame.filter(pl.col("invalid_timestamp") & pl.col("arrival").is_not_null())
    if bad.is_empty():
        return []
    shaped = bad.with_columns(
        pl.lit(0, pl.Int64).alias("partition"),
        pl.lit(None, UTC_NS).alias("application_time"),
        *(pl.lit(False).alias(flag) for flag in ("late", "early", "out_of_order", "invalid_key")),
    )
    aggregates = aggregate_errors(shaped, options.error_window_ns)
    payload_columns = [c for c in frame.columns if c not in CTI_OUTCOME_COLUMNS]
    examples = example_payloads(
        bad.select("event_id", *payload_columns), aggregates["example_event_id"].to_list()
    )
    cid = correlation_id(str(bad["event_id"].to_list()), policy_text)
    return [
        data_error_record(row, examples.get(row["example_event_id"], "[]"), options, cid, ())
        for row in aggregates.iter_rows(named=True)
    ]
