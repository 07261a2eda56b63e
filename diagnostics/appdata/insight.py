"""Adapters to the explainer (``diagnostics.explain``) and the what-if sweep
(``diagnostics.whatif``), built by another part of the project.

The adapters turn their results into plain frozen values the app can cache and render. When
a module is not installed (or lacks the agreed entry point), :func:`explainer_status` and
:func:`whatif_status` say why, and the pages show that message instead of a chart.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from diagnostics.durations import SECOND
from diagnostics.engine.columns import EventColumns
from diagnostics.engine.policy import OrderingPolicy
from diagnostics.kinds import ErrorKind

#: The data-error kinds each explainer cause is judged on (for its evidence chart).
CAUSE_KINDS: dict[str, tuple[str, ...]] = {
    "late_arrivals": (ErrorKind.LATE.value,),
    "historical_replay": (ErrorKind.LATE.value,),
    "tolerance_too_loose": (ErrorKind.LATE.value, ErrorKind.OUT_OF_ORDER.value),
    "early_arrivals": (ErrorKind.EARLY.value,),
    "out_of_order": (ErrorKind.OUT_OF_ORDER.value,),
    "invalid_timestamps": (ErrorKind.INVALID_TIMESTAMP.value, ErrorKind.INVALID_KEY.value),
    "cti_violations": (ErrorKind.CTI_VIOLATION.value,),
    "idle_partition": (ErrorKind.PARTITION_NOT_PROGRESSING.value,),
}


def _entry(module: str, name: str) -> tuple[Any | None, str | None]:
    try:
        mod = importlib.import_module(module)
    except ImportError as exc:
        return None, f"{module} is not available yet ({exc})"
    fn = getattr(mod, name, None)
    if fn is None:
        return None, f"{module} has no {name}() yet"
    return fn, None


def explainer_status() -> str | None:
    """``None`` when ``diagnostics.explain.explain`` can be called, else the reason it cannot."""
    return _entry("diagnostics.explain", "explain")[1]


def whatif_status() -> str | None:
    """``None`` when ``diagnostics.whatif.sweep`` can be called, else the reason it cannot."""
    return _entry("diagnostics.whatif", "sweep")[1]


@dataclass(frozen=True)
class SuggestionView:
    """A fix: its kind, its value (seconds, when it has one) and the text to copy."""

    kind: str
    value_seconds: float | None
    snippet: str


@dataclass(frozen=True)
class FindingView:
    """One finding as plain values (from ``Finding.to_dict()``)."""

    cause: str
    severity: str
    title: str
    explanation: str
    confidence: float
    evidence: dict[str, Any] = field(default_factory=dict)
    impact: dict[str, Any] = field(default_factory=dict)
    suggestions: tuple[SuggestionView, ...] = ()

    @property
    def kinds(self) -> tuple[str, ...]:
        """The diagnostic kinds behind this finding's cause (empty if none apply)."""
        return CAUSE_KINDS.get(self.cause, ())


def _view(data: Mapping[str, Any]) -> FindingView:
    return FindingView(
        cause=str(data.get("cause", "")),
        severity=str(data.get("severity", "info")),
        title=str(data.get("title", "")),
        explanation=str(data.get("explanation", "")),
        confidence=float(data.get("confidence", 0.0)),
        evidence=dict(data.get("evidence") or {}),
        impact=dict(data.get("impact") or {}),
        suggestions=tuple(
            SuggestionView(
                str(s.get("kind", "")), s.get("value_seconds"), str(s.get("snippet", ""))
            )
            for s in data.get("suggestions") or ()
        ),
    )


@dataclass(frozen=True)
class ReportView:
    """The explainer's report: findings most important first, sources and policy text."""

    findings: tuple[FindingView, ...]
    sources: tuple[str, ...] = ()
    policy: str | None = None


def explain(
    agg_dir: Path | None,
    *,
    events: pl.DataFrame | None = None,
    policy: OrderingPolicy | None = None,
    columns: EventColumns | None = None,
) -> ReportView:
    """Run the explainer; raises RuntimeError with :func:`explainer_status` when unavailable."""
    fn, problem = _entry("diagnostics.explain", "explain")
    if fn is None:
        raise RuntimeError(problem)
    report = fn(agg_dir, events=events, policy=policy, columns=columns)
    data = report.to_dict()
    return ReportView(
        findings=tuple(_view(f) for f in data.get("findings", ())),
        sources=tuple(str(s) for s in data.get("sources", ())),
        policy=data.get("policy"),
    )


def readable_evidence(evidence: Mapping[str, Any]) -> pl.DataFrame:
    """Every evidence value as ``evidence``/``value`` rows in words (tables become short
    sentences), as the text and Markdown reports show them."""
    from diagnostics.explain.readable import evidence_lines

    rows = evidence_lines(evidence)
    return pl.DataFrame(rows, schema={"evidence": pl.String, "value": pl.String}, orient="row")


def impact_text(impact: Mapping[str, Any]) -> str:
    """A finding's impact as a sentence."""
    from diagnostics.explain.readable import impact_sentence

    return impact_sentence(impact)


def scalar_evidence(evidence: Mapping[str, Any]) -> pl.DataFrame:
    """The evidence entries that are single numbers, strings or flags, as ``name``/``value``
    rows (nested values are flattened one level: ``outer.inner``)."""
    rows: list[tuple[str, str]] = []
    for key, value in evidence.items():
        if isinstance(value, Mapping):
            rows.extend(
                (f"{key}.{k}", _text(v))
                for k, v in value.items()
                if not isinstance(v, Mapping | list | tuple)
            )
        elif not isinstance(value, list | tuple):
            rows.append((str(key), _text(value)))
    return pl.DataFrame(rows, schema={"name": pl.String, "value": pl.String}, orient="row")


def _text(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:,.3f}".rstrip("0").rstrip(".")
    return str(value)


@dataclass(frozen=True)
class SweepView:
    """A what-if sweep: the table (columns of the agreed contract), its rule text and chart."""

    table: pl.DataFrame
    rule: str
    figure: Any
    skipped: tuple[str, ...] = ()
    recommended: dict[str, Any] | None = None


def sweep(
    events: pl.DataFrame,
    policy: OrderingPolicy,
    *,
    late_values: Sequence[float | None],
    ooo_values: Sequence[float],
    partition_by_values: Sequence[bool] = (False,),
    over_values: Sequence[tuple[str, ...]] = ((),),
    columns: EventColumns | None = None,
    partitions: Sequence[int] | None = None,
) -> SweepView:
    """Run the what-if sweep (tolerances in seconds, ``None`` = unlimited late tolerance);
    raises RuntimeError with :func:`whatif_status` when unavailable."""
    fn, problem = _entry("diagnostics.whatif", "sweep")
    chart, chart_problem = _entry("diagnostics.whatif", "chart")
    if fn is None or chart is None:
        raise RuntimeError(problem or chart_problem)
    result = fn(
        events,
        policy,
        late_values=[None if v is None else round(v * SECOND) for v in late_values],
        ooo_values=[round(v * SECOND) for v in ooo_values],
        partition_by_values=tuple(partition_by_values),
        over_values=tuple(over_values),
        columns=columns,
        partitions=None if partitions is None else tuple(partitions),
    )
    rows = result.table.filter(pl.col("recommended")) if "recommended" in result.table else None
    return SweepView(
        table=result.table,
        rule=str(result.rule),
        figure=chart(result),
        skipped=tuple(str(s) for s in getattr(result, "skipped", ())),
        recommended=rows.row(0, named=True) if rows is not None and rows.height else None,
    )


def select_point(table: pl.DataFrame, late_s: float, ooo_s: float) -> dict[str, Any] | None:
    """The sweep row nearest to (``late_s``, ``ooo_s``), or ``None`` for an empty table."""
    if table.is_empty():
        return None
    late = pl.col("late_arrival_s").cast(pl.Float64).fill_null(float("inf"))
    distance = (late - late_s).abs() + (pl.col("out_of_order_s").cast(pl.Float64) - ooo_s).abs()
    return table.with_columns(distance.alias("_d")).sort("_d").drop("_d").row(0, named=True)
