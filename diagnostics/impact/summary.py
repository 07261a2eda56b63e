"""The impact of the ordering on a job's results: computed for a replay, summarised, said.

:func:`measure_impact` reads the query's aggregating steps, compares each one's results as
emitted with its results on time (:mod:`diagnostics.impact.compare`) and marks the windows
at an edge of the data (:mod:`diagnostics.impact.edges`); :func:`summarize` gives the counts,
the spread of the errors over the interior windows with any periodic pattern
(:mod:`diagnostics.impact.spread`), the edge windows apart, the largest interior differences
and each cause's share; :func:`format_summary` says it in lines of text.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import polars as pl

from diagnostics.captures.avro import RAW_BODY
from diagnostics.impact.compare import Cause, compare
from diagnostics.impact.edges import EDGE, Edge, Span, window_edges
from diagnostics.impact.model import QuerySteps
from diagnostics.impact.spread import OFF, error_spread, interior_spread
from diagnostics.impact.steps import read_steps
from diagnostics.words import number, plural

#: How many of the largest differences the summary lists.
LARGEST = 5
_WINDOW = ["step", "window_end", "keys"]


@dataclass(frozen=True, slots=True)
class Impact:
    """The comparison (``table``: impact.parquet, with each window's ``edge``), the
    displaced (event, window) rows with the event and its cause (``moves``), and the
    query's steps."""

    table: pl.DataFrame
    moves: pl.DataFrame
    query: QuerySteps
    #: events without a valid application time: dropped as emitted, with no on-time place
    #: (bodies the input could not read at all left out: they are ``unreadable``)
    unplaced: int = 0
    #: the data's span and silent partitions the edge windows are judged by
    span: Span | None = None
    #: events whose body the input could not read (a Capture body that is not JSON): ASA's
    #: deserializer rejects them before TIMESTAMP BY, so they are not invalid timestamps
    unreadable: int = 0


def measure_impact(
    outcomes: pl.DataFrame, query: str, input_name: str, *, per_timeline: bool = False
) -> Impact:
    """The impact of the replay ``outcomes`` on the aggregating steps of ``query`` that read
    ``input_name`` (``per_timeline``: the policy has PARTITION BY PartitionId or OVER keys,
    so each timeline is released on its own watermark)."""
    steps = read_steps(query, input_name)
    table, moves = compare(outcomes, steps.steps, per_timeline=per_timeline)
    edges, span = window_edges(outcomes, table, moves, steps.steps)
    table = table.join(edges, on=_WINDOW, how="left", nulls_equal=True, maintain_order="left")
    no_time = outcomes["application_time"].is_null()
    unreadable = int((no_time & _unreadable(outcomes)).sum())
    return Impact(table, moves, steps, int(no_time.sum()) - unreadable, span, unreadable)


def _unreadable(outcomes: pl.DataFrame) -> pl.Series:
    """The events whose body the input could not read: a Capture reader keeps the text of a
    body that is not a JSON object in ``Body`` (and ``Body`` is null for every other one)."""
    if RAW_BODY in outcomes.columns and outcomes.schema[RAW_BODY] == pl.String:
        return outcomes[RAW_BODY].is_not_null()
    return pl.repeat(False, outcomes.height, eager=True)


def changed_windows(table: pl.DataFrame) -> pl.DataFrame:
    """The (step, window end, keys) whose result changed."""
    return table.filter(pl.col("changed")).select(_WINDOW).unique()


def _edge_rows(result: Impact) -> list[dict[str, Any]]:
    """Per edge (in :class:`Edge` order), its windows, how many changed, and what they are."""
    table = result.table
    windows = table.group_by([*_WINDOW, EDGE]).agg(pl.col("changed").any())
    rows = []
    for edge in Edge:
        mine = windows.filter(pl.col(EDGE) == edge.value)
        if mine.is_empty():
            continue
        rows.append(
            {
                "edge": edge.value,
                "windows": mine.height,
                "changed": int(mine["changed"].sum()),
                "what": result.span.describe(edge) if result.span is not None else "",
            }
        )
    return rows


def _largest(rows: pl.DataFrame) -> list[dict[str, Any]]:
    worst = (
        rows.filter(pl.col("changed"))
        .sort(
            ["relative_difference", "absolute_difference", "window_end"],
            descending=[True, True, False],
            nulls_last=True,
        )
        .head(LARGEST)
    )
    return [
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


def summarize(result: Impact) -> dict[str, Any]:
    """Counts, the interior windows' errors (overall and per aggregate, with any periodic
    pattern), the edge windows, the largest interior differences and the causes' shares, as
    JSON-ready values."""
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
    interior = table.filter(pl.col(EDGE).is_null())
    inside = interior.group_by(_WINDOW).agg(
        pl.col("changed").any(),
        (pl.col("relative_difference").fill_null(float("inf")) > OFF).any().alias("off"),
    )
    return {
        "steps": [s.describe() for s in result.query.steps],
        "not_replayed": [s.describe() for s in result.query.skipped],
        "windows_compared": compared,
        "windows_changed": changed.height,
        "interior": {
            **error_spread(interior),
            "windows": inside.height,
            "changed": int(inside["changed"].sum()),
            "off": int(inside["off"].sum()),
            "off_share": round(int(inside["off"].sum()) / inside.height, 4)
            if inside.height
            else 0.0,
            "by_aggregate": interior_spread(interior, list(result.query.steps)),
        },
        "edges": _edge_rows(result),
        "largest": _largest(interior),
        "causes": causes,
        "events_without_application_time": result.unplaced,
        "events_unreadable": result.unreadable,
    }


def _percent(value: float | None) -> str:
    """``12.3 %`` (``-`` for none), as the summary says an error."""
    if value is None:
        return "-"
    shown = f"{100 * value:.1f}".removesuffix(".0")
    return f"{shown} %"


def _pattern_text(pattern: dict[str, Any]) -> str:
    """``periodic, every 3 min: 1 window in 3 is 18 % high (ending 08:03, ...), the other
    2 are 14 % low (median); 8 keys``."""
    k = pattern["period_windows"]
    high, low = pattern["high"], pattern["low"]
    ends = ", ".join(e[11:16] for e in high["window_ends"])
    many = high["phases"]
    lead = f"{many} window{'s' if many != 1 else ''} in {k} {'is' if many == 1 else 'are'}"
    rest = (
        f"the other {low['phases']} {'is' if low['phases'] == 1 else 'are'} "
        f"{_percent(abs(low['median'] or 0.0))} low"
    )
    return (
        f"periodic, every {pattern['period']}: {lead} {_percent(high['median'])} high "
        f"(ending {ends}, ...), {rest} (medians; {plural(pattern['keys'], 'key')}, "
        f"{pattern['explained']:.0%} of the variation)"
    )


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


def spread_lines(summary: dict[str, Any]) -> list[str]:
    """What the summary says of the interior windows (their errors, per aggregate with any
    periodic pattern) and of the edge windows, as lines (sub-lines indented)."""
    lines = []
    inside = summary["interior"]
    if inside["windows"]:
        lines.append(
            f"interior windows (away from the data's edges, silent partitions and early "
            f"events): {number(inside['windows'])}; changed {number(inside['changed'])}; "
            f"off by more than {_percent(OFF)}: {number(inside['off'])} "
            f"({inside['off_share']:.0%})"
        )
        for row in inside["by_aggregate"]:
            lines.append(
                f"  step {row['step']}, {row['aggregate']}: {plural(row['windows'], 'window')}; "
                f"error median {_percent(row['median'])}, p95 {_percent(row['p95'])}; off by "
                f"more than {_percent(OFF)}: {number(row['off'])} ({row['off_share']:.0%})"
            )
            if row["pattern"] is not None:
                lines.append(f"    {_pattern_text(row['pattern'])}")
    if summary["edges"]:
        lines.append("edge windows, reported apart (their difference is not the ordering's alone):")
        lines += [
            f"  {e['edge']}: {plural(e['windows'], 'window')} ({number(e['changed'])} changed): "
            f"{e['what']}"
            for e in summary["edges"]
        ]
    return lines


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
    )
    lines += spread_lines(summary)
    if summary["largest"]:
        lines.append("largest differences in interior windows:")
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
    unreadable = summary.get("events_unreadable", 0)
    if unreadable:
        lines.append(
            f"{plural(unreadable, 'event')} whose body the input could not read "
            "(InputDeserializerError.InvalidData): lost before the query, in no window on "
            "either side"
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
