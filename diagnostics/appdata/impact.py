"""The app's Results page: the query's windowed aggregates as emitted beside on time.

Data only (the page renders): the query to start from, the comparison of a folder's
capture, the series of one aggregate and key, the worst windows, the change per cause, a
figure and the Parquet download.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import plotly.graph_objects as go
import polars as pl

from diagnostics.appdata import jobfix, tables
from diagnostics.captures.far_off import far_off_mask
from diagnostics.engine.policy import OrderingPolicy
from diagnostics.errors import InputError, OrderdocError
from diagnostics.impact import Impact, measure_impact, summarize
from diagnostics.impact import spread_lines as impact_spread_lines
from diagnostics.impact.source import inputs_read
from diagnostics.jobdef.rewrite import identifier
from diagnostics.words import plural

#: Colours of the two series and of the changed windows.
EMITTED, ON_TIME, CHANGED = "#d62728", "#1f77b4", "#ff7f0e"


@dataclass(frozen=True)
class StartingQuery:
    """The query the page starts from, the input it reads and where it came from."""

    text: str
    input_name: str
    source: str


def starting_query(agg_dir: Path, policy: OrderingPolicy, device: str | None) -> StartingQuery:
    """The saved job definition's query; without one, events (per device when the capture
    has a device column) counted per minute."""
    try:
        kept = jobfix.saved(agg_dir)
        job = None if kept is None else kept.policy()
    except OrderdocError:
        kept = job = None
    if kept is not None and job is not None and job.definition.query:
        return StartingQuery(
            job.definition.query, job.input.name, f"the job definition {kept.label}"
        )
    ts = identifier(policy.timestamp_by or "event_time")
    keys = f"{identifier(device)}, " if device else ""
    text = (
        f"SELECT {keys}System.Timestamp() AS window_end, COUNT(*) AS events\n"
        "INTO [counts]\n"
        f"FROM [input] TIMESTAMP BY {ts}\n"
        f"GROUP BY {keys}TumblingWindow(minute, 1)\n"
    )
    return StartingQuery(text, "input", "a starting query: events per minute")


def input_of(text: str, default: str) -> str:
    """The input the query reads: ``default`` when it reads it, else its only input."""
    try:
        names = inputs_read(text)
    except InputError:
        return default
    if any(n.lower() == default.lower() for n in names) or len(names) != 1:
        return default
    return names[0]


def compare(outcomes: pl.DataFrame, text: str, input_name: str, policy: OrderingPolicy) -> Impact:
    """The capture's results as emitted beside on time, for query ``text``."""
    return measure_impact(
        outcomes, text, input_name, per_timeline=policy.partition_by or bool(policy.over)
    )


def summary(result: Impact) -> dict[str, Any]:
    """The summary (windows compared and changed, interior and edge windows, largest
    differences, causes)."""
    return summarize(result)


def spread_lines(result_summary: dict[str, Any]) -> list[str]:
    """What the summary says of the interior windows (their errors per aggregate, with any
    periodic pattern) and of the edge windows, as the command line says it."""
    return [line.strip() for line in impact_spread_lines(result_summary)]


def choices(table: pl.DataFrame) -> list[tuple[str, str]]:
    """The (step, aggregate) pairs of the comparison, in order."""
    return list(table.select("step", "aggregate").unique(maintain_order=True).iter_rows())


def keys_by_change(table: pl.DataFrame, step: str, aggregate: str) -> list[str]:
    """The group keys of one aggregate, the most changed first."""
    rows = table.filter((pl.col("step") == step) & (pl.col("aggregate") == aggregate))
    ranked = rows.group_by("keys").agg(
        pl.col("changed").sum().alias("n"), pl.col("relative_difference").max().alias("worst")
    )
    return ranked.sort(["n", "worst", "keys"], descending=[True, True, False], nulls_last=True)[
        "keys"
    ].to_list()


def series(table: pl.DataFrame, step: str, aggregate: str, keys: str) -> pl.DataFrame:
    """One aggregate of one key over time: window end, both values, changed."""
    return (
        table.filter(
            (pl.col("step") == step) & (pl.col("aggregate") == aggregate) & (pl.col("keys") == keys)
        )
        .select("window_end", "value_as_emitted", "value_on_time", "changed")
        .sort("window_end")
    )


def far_windows(frame: pl.DataFrame) -> tuple[pl.DataFrame, int]:
    """``frame`` without the windows whose end is far off the others (the rule of
    ``diagnostics.captures.far_off``: a window of an event stamped 2099 beside a capture
    of 2024), and how many it left out."""
    if frame.is_empty():
        return frame, 0
    far, _, _ = far_off_mask(frame["window_end"].dt.epoch("ns").to_numpy())
    return frame.filter(pl.Series(~far)), int(far.sum())


def figure(frame: pl.DataFrame, title: str) -> go.Figure:
    """Traces ``as emitted`` and ``on time`` over window end, the changed windows marked in
    trace ``changed`` (at the on-time value, or the emitted one when only that exists).
    Windows far off the others are not drawn (the time axis would span decades); the title
    says how many."""
    frame, outside = far_windows(frame)
    if outside:
        title += (
            f"<br><sup>{plural(outside, 'window')} outside the chart: far off the others in "
            "time (an event's application time far off the rest)</sup>"
        )
    fig = go.Figure()
    x = frame["window_end"].to_list()
    fig.add_trace(
        go.Scatter(
            x=x,
            y=frame["value_on_time"].to_list(),
            name="on time",
            mode="lines+markers",
            line={"color": ON_TIME},
        )
    )
    fig.add_trace(
        go.Scatter(
            x=x,
            y=frame["value_as_emitted"].to_list(),
            name="as emitted",
            mode="lines+markers",
            line={"color": EMITTED, "dash": "dot"},
        )
    )
    changed = frame.filter(pl.col("changed"))
    marked = changed.select(
        "window_end", pl.coalesce("value_on_time", "value_as_emitted").alias("y")
    )
    fig.add_trace(
        go.Scatter(
            x=marked["window_end"].to_list(),
            y=marked["y"].to_list(),
            name="changed",
            mode="markers",
            marker={"color": CHANGED, "size": 12, "symbol": "circle-open", "line": {"width": 2}},
        )
    )
    fig.update_layout(
        title=title,
        xaxis_title="window end (System.Timestamp)",
        yaxis_title="value",
        margin={"l": 40, "r": 20, "t": 50, "b": 60},
        legend={"orientation": "h", "y": -0.3},
        height=380,
    )
    return fig


#: What a missing value of the worst-windows table means.
NOT_THERE = {
    "As emitted": "not emitted",
    "On time": "no such result",
    "Off by (%)": "no on-time value",
    "Edge": "interior",
}


def worst(table: pl.DataFrame, n: int = 20) -> pl.DataFrame:
    """The changed windows with the largest relative difference, interior windows first
    (edge windows after them, their edge said), in the page's words (a missing value said:
    :data:`NOT_THERE`)."""
    edge = pl.col("edge").is_not_null() if "edge" in table.columns else pl.lit(False)
    frame = (
        table.filter(pl.col("changed"))
        .with_columns(edge.alias("__edge"))
        .sort(
            ["__edge", "relative_difference", "absolute_difference"],
            descending=[False, True, True],
            nulls_last=True,
        )
        .head(n)
        .select(
            pl.col("step").alias("Step"),
            pl.col("window_end").dt.strftime("%Y-%m-%d %H:%M:%S%.3f").alias("Window end"),
            pl.col("keys").alias("Keys"),
            pl.col("aggregate").alias("Aggregate"),
            pl.col("value_as_emitted").alias("As emitted"),
            pl.col("value_on_time").alias("On time"),
            (pl.col("relative_difference") * 100).round(1).alias("Off by (%)"),
            pl.col("events_moved_in").alias("Moved in"),
            pl.col("events_moved_out").alias("Moved out"),
            pl.col("events_missing").alias("Missing"),
            pl.col("output").alias("Output"),
            (pl.col("edge") if "edge" in table.columns else pl.lit(None, pl.String)).alias("Edge"),
        )
    )
    return tables.shown(frame, NOT_THERE)


def causes(result_summary: dict[str, Any]) -> pl.DataFrame:
    """Events per cause and their share of the change."""
    rows = [c for c in result_summary["causes"] if c["events"]]
    return pl.DataFrame(
        {
            "Cause": [c["cause"] for c in rows],
            "Events": [c["events"] for c in rows],
            "Share (%)": [round(100 * c["share"], 1) for c in rows],
        },
        schema={"Cause": pl.String, "Events": pl.Int64, "Share (%)": pl.Float64},
    )


def parquet_bytes(table: pl.DataFrame) -> bytes:
    """impact.parquet as bytes, for the download button."""
    buffer = io.BytesIO()
    table.write_parquet(buffer, compression="snappy")
    return buffer.getvalue()
