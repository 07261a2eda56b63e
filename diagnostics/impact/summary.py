"""The impact of the ordering on a job's results: computed for a replay, summarised, said.

:func:`measure_impact` reads the query's aggregating steps and compares each one's results
as emitted with its results on time (:mod:`diagnostics.impact.compare`);
:func:`summarize` gives the counts, the largest differences and each cause's share;
:func:`format_summary` says it in lines of text.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import polars as pl

from diagnostics.impact.compare import Cause, compare
from diagnostics.impact.model import QuerySteps
from diagnostics.impact.steps import read_steps
from diagnostics.words import number, plural

#: How many of the largest differences the summary lists.
LARGEST = 5
_WINDOW = ["step", "window_end", "keys"]


@dataclass(frozen=True, slots=True)
class Impact:
    """The comparison (``table``: impact.parquet), the displaced (event, window) rows with
    the event and its cause (``moves``), and the query's steps."""

    table: pl.DataFrame
    moves: pl.DataFrame
    query: QuerySteps
    #: events without a valid application time: dropped as emitted, with no on-time place
    unplaced: int = 0


def measure_impact(
    outcomes: pl.DataFrame, query: str, input_name: str, *, per_timeline: bool = False
) -> Impact:
    """The impact of the replay ``outcomes`` on the aggregating steps of ``query`` that read
    ``input_name`` (``per_timeline``: the policy has PARTITION BY PartitionId or OVER keys,
    so each timeline is released on its own watermark)."""
    steps = read_steps(query, input_name)
    table, moves = compare(outcomes, steps.steps, per_timeline=per_timeline)
    return Impact(table, moves, steps, int(outcomes["application_time"].null_count()))


def changed_windows(table: pl.DataFrame) -> pl.DataFrame:
    """The (step, window end, keys) whose result changed."""
    return table.filter(pl.col("changed")).select(_WINDOW).unique()


def summarize(result: Impact) -> dict[str, Any]:
    """Counts, the largest differences and the causes' shares, as JSON-ready values."""
    table = result.table
    compared = table.select(_WINDOW).unique().height
    changed = changed_windows(table)
    moves = result.moves.join(changed, on=_WINDOW, how="semi", nulls_equal=True)
    # each event once per step, however many windows it left or entered
    events = moves.unique(["step", "event_id"])
    by_cause = dict(events.group_by("cause").len().iter_rows())
    total = sum(by_cause.values())
    causes = [
        {
            "cause": c.value,
            "events": int(by_cause.get(c.value, 0)),
            "share": (by_cause.get(c.value, 0) / total) if total else 0.0,
        }
        for c in Cause
        if c is not Cause.OTHER or by_cause.get(c.value)
    ]
    worst = (
        table.filter(pl.col("changed"))
        .sort(
            ["relative_difference", "absolute_difference", "window_end"],
            descending=[True, True, False],
            nulls_last=True,
        )
        .head(LARGEST)
    )
    largest = [
        {
            "step": r["step"],
            "window_end": r["window_end"].isoformat().replace("+00:00", "Z"),
            "keys": r["keys"],
            "aggregate": r["aggregate"],
            "value_as_emitted": r["value_as_emitted"],
            "value_on_time": r["value_on_time"],
            "absolute_difference": r["absolute_difference"],
            "relative_difference": r["relative_difference"],
            "output": r["output"],
        }
        for r in worst.iter_rows(named=True)
    ]
    max_rel = table.filter(pl.col("changed"))["relative_difference"].max()
    return {
        "steps": [s.describe() for s in result.query.steps],
        "not_replayed": [s.describe() for s in result.query.skipped],
        "windows_compared": compared,
        "windows_changed": changed.height,
        "largest_relative_error": float(max_rel) if max_rel is not None else 0.0,  # type: ignore[arg-type]
        "largest": largest,
        "causes": causes,
        "events_without_application_time": result.unplaced,
    }


def _value(v: float | None) -> str:
    return "nothing" if v is None else number(round(v, 3) if v != int(v) else int(v))


def _difference(row: dict[str, Any]) -> str:
    if row["output"] == "as emitted only":
        return "emitted, but no such result on time"
    if row["output"] == "on time only":
        return f"not emitted; {_value(row['value_on_time'])} on time"
    rel = row["relative_difference"]
    shown = f"{rel:.0%}" if rel is not None else "from 0"
    return (
        f"{_value(row['value_as_emitted'])} as emitted, {_value(row['value_on_time'])} on time "
        f"({shown} off)"
    )


def format_summary(summary: dict[str, Any]) -> str:
    """The summary in lines of text, for the command line and explain."""
    lines = [f"replayed: {s}" for s in summary["steps"]]
    lines += [f"not replayed: {s}" for s in summary["not_replayed"]]
    if not summary["steps"]:
        lines.append(
            "no step of the query aggregates the input over a window: no results to compare"
        )
        return "\n".join(lines) + "\n"
    compared, changed = summary["windows_compared"], summary["windows_changed"]
    lines.append(
        f"windows compared: {number(compared)}; changed by the ordering: {number(changed)}"
        + (f" ({changed / compared:.0%})" if compared else "")
        + (f"; largest relative error {summary['largest_relative_error']:.0%}" if changed else "")
    )
    if summary["largest"]:
        lines.append("largest differences:")
        for row in summary["largest"]:
            keys = f" {row['keys']}" if row["keys"] else ""
            lines.append(
                f"  step {row['step']}, window ending {row['window_end']}{keys}: "
                f"{row['aggregate']} {_difference(row)}"
            )
    unplaced = summary.get("events_without_application_time", 0)
    if unplaced:
        lines.append(
            f"{plural(unplaced, 'event')} without a valid application time "
            "(InvalidInputTimeStamp): dropped by the job, in no window on either side"
        )
    moved = [c for c in summary["causes"] if c["events"]]
    if moved:
        lines.append(
            "the change by cause (events that sit in another window as emitted than on time):"
        )
        lines += [
            f"  {c['cause']}: {plural(c['events'], 'event')} ({c['share']:.0%})" for c in moved
        ]
    return "\n".join(lines) + "\n"
