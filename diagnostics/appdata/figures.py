"""Plotly figures built from the frames the other ``appdata`` modules prepare.

Every reference line or marker is a trace (not a layout shape), so that tests and users can
read it from the figure's data; trace names are stable (``tolerance``, ``alerts``, ...).
"""

from __future__ import annotations

import plotly.graph_objects as go
import polars as pl

from diagnostics.appdata.lateness import Bulk, in_bulk
from diagnostics.appdata.overview import BUCKETS
from diagnostics.words import plural

SEVERITY_COLOURS = {"critical": "#d62728", "warning": "#ff7f0e", "info": "#1f77b4"}
KIND_COLOURS = {
    "LateInputEvent": "#1f77b4",
    "OutOfOrderEvent": "#2ca02c",
    "EarlyInputEvent": "#9467bd",
    "InvalidInputTimeStamp": "#8c564b",
    "InvalidInputTimeStampKey": "#e377c2",
    "CtiViolation": "#7f7f7f",
}


#: Axis titles that count whole things: their ticks are whole numbers.
_COUNTS = frozenset({"events", "records"})


def _layout(fig: go.Figure, title: str, x: str, y: str) -> go.Figure:
    fig.update_layout(
        title=title,
        xaxis_title=x,
        yaxis_title=y,
        margin={"l": 40, "r": 20, "t": 50, "b": 60},
        legend={"orientation": "h", "y": -0.3},
        height=380,
    )
    for axis, name in (("xaxis", x), ("yaxis", y)):
        if name in _COUNTS:
            fig.update_layout({axis: {"tickformat": ",d", "rangemode": "tozero"}})
            if _largest(fig, axis[0]) <= 5:  # few: one tick each, never 0.5
                fig.update_layout({axis: {"dtick": 1}})
    return fig


def _largest(fig: go.Figure, axis: str) -> float:
    """The largest value plotted on ``axis`` (``"x"`` or ``"y"``; 0 when none): stacked bars'
    sums per position, else any trace's largest value."""
    stacked = fig.layout.barmode == "stack"
    other = "y" if axis == "x" else "x"
    stacks: dict[object, float] = {}
    values: list[float] = []
    for trace in fig.data:
        pairs = zip(getattr(trace, other) or (), getattr(trace, axis) or (), strict=False)
        for at, v in pairs:
            if not isinstance(v, int | float):
                continue
            if stacked and trace.type == "bar":
                stacks[at] = stacks.get(at, 0) + v
            else:
                values.append(v)
    return max([*stacks.values(), *values], default=0)


def _one_bucket_wide(fig: go.Figure, times: list, bucket: str) -> go.Figure:
    """With bars in one time bucket only, a time axis a few buckets wide around it (plotly
    would zoom to a fraction of a millisecond)."""
    distinct = set(times)
    if len(distinct) == 1:
        (only,) = distinct
        step = dict(BUCKETS)[bucket]
        fig.update_layout(xaxis={"range": [only - 2 * step, only + 2 * step]})
    return fig


def errors_over_time(frame: pl.DataFrame, markers: pl.DataFrame, bucket: str) -> go.Figure:
    """Stacked bars of events per kind per bucket; alert markers (from
    :func:`diagnostics.appdata.alerts.alert_markers`) on top, in trace ``alerts``."""
    fig = go.Figure()
    for kind in sorted(frame["kind"].unique().to_list()):
        part = frame.filter(pl.col("kind") == kind)
        fig.add_bar(
            x=part["time"].to_list(),
            y=part["event_count"].to_list(),
            name=kind,
            marker_color=KIND_COLOURS.get(kind),
        )
    if markers.height:
        stacked = frame.group_by("time").agg(pl.col("event_count").sum())
        top = (
            float(stacked.select(pl.col("event_count").max()).item() or 1) if frame.height else 1.0
        )
        fig.add_scatter(
            x=markers["time"].to_list(),
            y=[top * 1.05] * markers.height,
            mode="markers",
            name="alerts",
            text=markers["label"].to_list(),
            hoverinfo="text+x",
            marker={
                "symbol": "triangle-down",
                "size": 12,
                "color": [SEVERITY_COLOURS.get(s, "#1f77b4") for s in markers["severity"]],
            },
        )
    fig.update_layout(barmode="stack")
    _one_bucket_wide(fig, [*frame["time"].to_list(), *markers["time"].to_list()], bucket)
    return _layout(fig, f"Events with data errors per {bucket}, by kind", "time (UTC)", "events")


def _clipped(fig: go.Figure, span: Bulk | None, tolerance_s: float | None) -> go.Figure:
    """The x axis limited to ``span`` (and the tolerance), its note under the title."""
    if span is None:
        return fig
    low, high = span.low, span.high
    if tolerance_s is not None:
        low, high = min(low, tolerance_s), max(high, tolerance_s)
    pad = max((high - low) * 0.03, 1.0)
    fig.update_layout(xaxis={"range": [low - pad, high + pad]})
    fig.update_layout(title={"text": f"{fig.layout.title.text}<br><sup>{span.note()}</sup>"})
    return fig


def lateness_ecdf(
    ecdf: pl.DataFrame, tolerance_s: float | None, span: Bulk | None = None
) -> go.Figure:
    """ECDF lines per group and the tolerance as a vertical line (trace ``tolerance``);
    ``span`` (:func:`diagnostics.appdata.lateness.bulk`): the x axis shows the bulk of the
    values, and the title says how many lie outside."""
    fig = go.Figure()
    for group in ecdf["group"].unique(maintain_order=True).to_list():
        part = ecdf.filter(pl.col("group") == group)
        fig.add_scatter(
            x=part["lateness_seconds"].to_list(),
            y=part["share"].to_list(),
            mode="lines",
            line_shape="hv",
            name=str(group),
        )
    if tolerance_s is not None:
        fig.add_scatter(
            x=[tolerance_s, tolerance_s],
            y=[0, 1],
            mode="lines",
            name="tolerance",
            line={"dash": "dash", "color": "#d62728"},
        )
    fig = _layout(
        fig, "Lateness (arrival − application time), cumulative", "lateness (s)", "share of events"
    )
    return _clipped(fig, span, tolerance_s)


def lateness_histogram(
    frame: pl.DataFrame, tolerance_s: float | None, bins: int = 60, span: Bulk | None = None
) -> go.Figure:
    """A weighted histogram of lateness per group, with the tolerance line (``tolerance``);
    ``span``: the bins cover the bulk of the values only, and the title says how many lie
    outside."""
    frame = in_bulk(frame, span)
    fig = go.Figure()
    for group in sorted(frame["group"].unique().to_list()):
        part = frame.filter(pl.col("group") == group)
        fig.add_histogram(
            x=part["lateness_seconds"].to_list(),
            y=part["weight"].to_list(),
            histfunc="sum",
            nbinsx=bins,
            name=str(group),
            opacity=0.7,
        )
    if tolerance_s is not None:
        fig.add_scatter(
            x=[tolerance_s, tolerance_s],
            y=[0, float(frame["weight"].sum() or 1)],
            mode="lines",
            name="tolerance",
            line={"dash": "dash", "color": "#d62728"},
        )
        fig.update_yaxes(rangemode="tozero")
    fig.update_layout(barmode="overlay")
    fig = _layout(fig, "Lateness histogram", "lateness (s)", "events")
    return _clipped(fig, span, tolerance_s)


def idle_timeline(episodes: pl.DataFrame) -> go.Figure:
    """Idle episodes as horizontal bars from start to end, one row per partition (named
    ``JOB / partition N`` when the episodes are of several jobs)."""
    fig = go.Figure()
    if episodes.height:
        several = episodes["job"].n_unique() > 1
        labels = [
            f"{job or '?'} / partition {p}" if several else f"partition {p}"
            for job, p in zip(episodes["job"], episodes["partition_id"], strict=True)
        ]
        durations_ms = [
            max((e - s).total_seconds() * 1000, 60_000)
            for s, e in zip(episodes["start"], episodes["end"], strict=True)
        ]
        fig.add_bar(
            base=episodes["start"].to_list(),
            x=durations_ms,
            y=labels,
            orientation="h",
            name="idle",
            text=[
                f"{m:.0f} min, {plural(n, 'notice')}"
                for m, n in zip(episodes["minutes"], episodes["notices"], strict=True)
            ],
            marker_color="#ff7f0e",
        )
        fig.update_xaxes(type="date")
    return _layout(fig, "Idle episodes (InputPartitionNotProgressing)", "time (UTC)", "partition")


def watermark_delay(frame: pl.DataFrame, tolerance_s: float | None) -> go.Figure:
    """Watermark delay per minute, a line per series, and the tolerance (``tolerance``)."""
    fig = go.Figure()
    for series in frame["series"].unique(maintain_order=True).to_list():
        part = frame.filter(pl.col("series") == series)
        fig.add_scatter(
            x=part["minute"].to_list(),
            y=part["delay_s"].to_list(),
            mode="lines",
            name=str(series),
            line={"width": 3 if series == "job" else 1.5},
        )
    if tolerance_s is not None and frame.height:
        lo, hi = frame["minute"].min(), frame["minute"].max()
        fig.add_scatter(
            x=[lo, hi],
            y=[tolerance_s, tolerance_s],
            mode="lines",
            name="tolerance",
            line={"dash": "dash", "color": "#d62728"},
        )
    return _layout(fig, "Output watermark delay per minute", "time (UTC)", "delay (s)")


def partition_bars(frame: pl.DataFrame, value: str, title: str) -> go.Figure:
    """A bar per partition of ``value`` (columns ``partition_id`` and ``value``)."""
    fig = go.Figure()
    fig.add_bar(
        x=[f"partition {p}" for p in frame["partition_id"]],
        y=frame[value].to_list(),
        name=value,
    )
    return _layout(fig, title, "partition", value.replace("_", " "))


def kinds_by_partition(frame: pl.DataFrame, bucket: str, title: str) -> go.Figure:
    """Stacked bars of events per bucket, a colour per partition."""
    fig = go.Figure()
    for part_name in sorted(frame["partition"].unique().to_list()):
        part = frame.filter(pl.col("partition") == part_name)
        fig.add_bar(x=part["time"].to_list(), y=part["event_count"].to_list(), name=part_name)
    fig.update_layout(barmode="stack")
    _one_bucket_wide(fig, frame["time"].to_list(), bucket)
    return _layout(fig, f"{title} per {bucket}, by partition", "time (UTC)", "events")


def reason_bars(counts: pl.DataFrame) -> go.Figure:
    """Horizontal bars of quarantined records per reason (trace ``records``)."""
    fig = go.Figure()
    fig.add_bar(
        x=counts["records"].to_list(),
        y=counts["reason"].to_list(),
        orientation="h",
        name="records",
    )
    fig = _layout(fig, "Quarantined records by reason", "records", "")
    fig.update_layout(height=140 + 30 * counts.height)
    return fig


#: The name of the star a sweep's chart gives the best setting of its own grid, when the one
#: recommendation (which may use other toggles) is drawn beside it.
GRID_BEST = "best with these toggles"


def with_selected(
    fig: go.Figure, point: dict | None, recommended: dict | None = None, setting: str = ""
) -> go.Figure:
    """A copy of a what-if chart with the slider's setting marked (trace ``selected``) and,
    given the one recommendation's measured row, that setting starred (trace ``recommended``,
    ``setting`` in its hover text) wherever it lies, even with other toggles than the grid's:
    the grid's own best is then named :data:`GRID_BEST`, so that one star means one thing."""
    out = go.Figure(fig)
    if recommended is not None:
        for trace in out.data:
            if trace.name == "recommended":
                trace.name = GRID_BEST
                trace.marker.symbol = "star-open"
        out.add_scatter(
            x=[recommended["delay_p95_s"]],
            y=[recommended["pct_adjusted"] + recommended["pct_dropped"]],
            mode="markers",
            name="recommended",
            marker={"symbol": "star", "size": 20, "color": "#2ca02c"},
            text=[f"recommended: {setting}" if setting else "recommended"],
            hovertemplate="%{text}<br>p95 delay %{x:.2f}s<br>adjusted+dropped %{y:.3f}%"
            "<extra></extra>",
        )
    if point is not None:
        out.add_scatter(
            x=[point["delay_p95_s"]],
            y=[point["pct_adjusted"] + point["pct_dropped"]],
            mode="markers",
            name="selected",
            marker={"symbol": "circle-open", "size": 22, "line": {"width": 3}, "color": "#d62728"},
        )
    return out
