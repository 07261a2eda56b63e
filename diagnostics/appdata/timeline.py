"""A job's lifecycle events (``job_events``: starts, stops, scales, updates) for the app: as a
table, and as marks on a time chart, so that a burst of data errors can be read against what
was done to the job at the time (a restart, a query update)."""

from __future__ import annotations

import plotly.graph_objects as go
import polars as pl

from diagnostics.aggregates import TableName
from diagnostics.appdata.store import Aggregate, collect, scan, utc

#: The columns :func:`job_events` returns.
SCHEMA: dict[str, pl.DataType | type[pl.DataType]] = {
    "time": pl.Datetime("us", "UTC"),
    "job": pl.String,
    "action": pl.String,
    "status": pl.String,
    "operation": pl.String,
    "category": pl.String,
    "label": pl.String,
}
#: The trace the marks are drawn as.
TRACE = "job events"


def job_events(agg: Aggregate, job: str | None = None) -> pl.DataFrame:
    """The folder's job events (of ``job`` when given), in time order: ``time``, ``job``,
    ``action``, ``status``, ``operation``, ``category`` and ``label`` (``start (Succeeded)``,
    what a chart's mark says); empty without a ``job_events`` table."""
    frame = scan(agg, TableName.JOB_EVENTS)
    if frame is None:
        return pl.DataFrame(schema=SCHEMA)
    if job is not None:
        frame = frame.filter(pl.col("job") == job)
    label = pl.concat_str(
        [
            pl.col("action"),
            pl.when(pl.col("status").is_not_null())
            .then(pl.lit(" (") + pl.col("status") + pl.lit(")"))
            .otherwise(pl.lit("")),
        ]
    )
    return collect(
        frame.select(
            utc(pl.col("record_time")).alias("time"),
            pl.col("job").cast(pl.String),
            pl.col("action").cast(pl.String),
            pl.col("status").cast(pl.String),
            pl.col("operation").cast(pl.String),
            pl.col("category").cast(pl.String),
            label.alias("label"),
        ).sort("time", "category", "label"),
        agg,
        TableName.JOB_EVENTS,
    )


def with_job_events(fig: go.Figure, events: pl.DataFrame) -> go.Figure:
    """``fig`` (a chart over time) with each job event as a dotted vertical line and a mark
    at the foot of the chart (trace :data:`TRACE`, its label on hover); unchanged without
    events."""
    if events.is_empty():
        return fig
    for moment in events["time"].unique().sort().to_list():
        fig.add_vline(x=moment, line={"dash": "dot", "color": "#7f7f7f", "width": 1})
    fig.add_scatter(
        x=events["time"].to_list(),
        y=[0] * events.height,
        mode="markers",
        name=TRACE,
        text=[
            f"{label}: {operation or category}"
            for label, operation, category in events.select(
                "label", "operation", "category"
            ).iter_rows()
        ],
        hoverinfo="text+x",
        marker={"symbol": "diamond", "size": 10, "color": "#7f7f7f"},
    )
    return fig
