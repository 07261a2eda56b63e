"""The explainer (``diagnostics.explain``) and the what-if sweep (``diagnostics.whatif``) for
the app's pages: the explainer's :class:`~diagnostics.explain.model.Report` as is (its
findings pickle, so Streamlit can cache them), the sweep as a :class:`SweepView` with its
chart, and small helpers that put evidence and impact into words.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from diagnostics.durations import SECOND
from diagnostics.engine.columns import EventColumns
from diagnostics.engine.policy import OrderingPolicy
from diagnostics.explain import explain as run_explainer
from diagnostics.explain.assumed import DEFAULT_LATE_S, HOW_TO_GIVE_APP
from diagnostics.explain.model import Finding, Report, Suggestion
from diagnostics.explain.readable import evidence_lines, impact_sentence, suggestion_label
from diagnostics.kinds import ErrorKind
from diagnostics.whatif import chart as sweep_chart
from diagnostics.whatif import sweep as run_sweep
from diagnostics.whatif.replays import Replays

#: The data-error kinds each explainer cause is judged on (for its evidence chart).
CAUSE_KINDS: dict[str, tuple[str, ...]] = {
    "late_arrivals": (ErrorKind.LATE.value,),
    "historical_replay": (ErrorKind.LATE.value,),
    "tolerance_too_loose": (ErrorKind.LATE.value, ErrorKind.OUT_OF_ORDER.value),
    "early_arrivals": (ErrorKind.EARLY.value,),
    "batching_senders": (ErrorKind.LATE.value, ErrorKind.OUT_OF_ORDER.value),
    "slow_clocks": (ErrorKind.LATE.value,),
    "fast_clocks": (ErrorKind.EARLY.value,),
    "out_of_order": (ErrorKind.OUT_OF_ORDER.value,),
    "invalid_timestamps": (ErrorKind.INVALID_TIMESTAMP.value, ErrorKind.INVALID_KEY.value),
    "cti_violations": (ErrorKind.CTI_VIOLATION.value,),
    "idle_partition": (ErrorKind.PARTITION_NOT_PROGRESSING.value,),
}


def late_tolerance_of(finding: Finding) -> float | None:
    """The late-arrival tolerance a finding from logs was judged with: its evidence's
    (``None``: unlimited), else ASA's default (assumed, as the finding says)."""
    if "current_late_tolerance_seconds" not in finding.evidence:
        return float(DEFAULT_LATE_S)
    value = finding.evidence["current_late_tolerance_seconds"]
    return float(value) if isinstance(value, int | float) else None


def cause_kinds(cause: str) -> tuple[str, ...]:
    """The diagnostic kinds behind a finding's cause (empty if none apply)."""
    return CAUSE_KINDS.get(cause, ())


def explain(
    agg_dir: Path | None,
    *,
    events: pl.DataFrame | None = None,
    policy: OrderingPolicy | None = None,
    columns: EventColumns | None = None,
    partitions: Sequence[int] | None = None,
    job: str | None = None,
    policy_job: str | None = None,
    replays: Replays | None = None,
    held_null: Callable[[], pl.Series | None] | None = None,
) -> Report:
    """The explainer's report: findings most important first, sources and policy text.
    ``partitions``: the input's partitions the capture was replayed with (those without an
    event included), as for the replay that measures a fix; ``job``: one job of the folder;
    ``policy_job``: the job ``policy`` is the policy of (:func:`diagnostics.explain.explain`);
    ``replays``: the capture's replays (:mod:`diagnostics.appdata.replays`); ``held_null()``:
    which events hold the TIMESTAMP BY field as null rather than not at all."""
    return run_explainer(
        agg_dir,
        events=events,
        policy=policy,
        columns=columns,
        partitions=partitions,
        job=job,
        policy_job=policy_job,
        replays=replays,
        held_null=held_null,
    )


def senders_line(report: Report) -> str | None:
    """With a capture: which column the findings name senders by, and why (as the command
    line's report says it); ``None`` without one."""
    if report.senders is None:
        return None
    line = report.senders.line
    return line[:1].upper() + line[1:]


def readable_evidence(evidence: Mapping[str, Any]) -> pl.DataFrame:
    """Every evidence value as ``evidence``/``value`` rows in words (tables become short
    sentences), as the text and Markdown reports show them."""
    rows = evidence_lines(evidence, HOW_TO_GIVE_APP)  # an assumed tolerance in the app's words
    return pl.DataFrame(rows, schema={"evidence": pl.String, "value": pl.String}, orient="row")


def impact_text(impact: Mapping[str, Any]) -> str:
    """A finding's impact as a sentence."""
    return impact_sentence(impact)


def suggestion_heading(suggestion: Suggestion) -> str:
    """What a suggestion changes, as the command line's report labels it, with its value:
    ``late-arrival tolerance (121 s)``, ``query: TIMESTAMP BY ... OVER``."""
    label = suggestion_label(suggestion.kind.value)
    if suggestion.value_seconds is None:
        return label
    return f"{label} ({suggestion.value_seconds:g} s)"


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
    """Run the what-if sweep (tolerances in seconds, ``None`` = unlimited late tolerance)."""
    result = run_sweep(
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
        figure=sweep_chart(result),
        skipped=result.skipped,
        recommended=rows.row(0, named=True) if rows is not None and rows.height else None,
    )


@dataclass(frozen=True)
class RecommendView:
    """The one recommendation for the What-if page: the setting in words, its row (the
    engine's numbers), the rule, why its clauses, what came close, and the measured rows."""

    setting: str
    row: dict[str, Any]
    rule: str
    notes: tuple[str, ...]
    close: tuple[str, ...]
    table: pl.DataFrame


def recommendation(
    events: pl.DataFrame,
    policy: OrderingPolicy,
    *,
    columns: EventColumns | None = None,
    partitions: Sequence[int] | None = None,
    replays: Replays | None = None,
) -> RecommendView:
    """The recommender (:func:`diagnostics.whatif.recommend.recommend`) on the capture, as
    ``whatif``, ``explain --write-fix`` and the Findings page run it (``replays``: the
    capture's, whose measured settings it uses and adds to)."""
    from diagnostics.engine.replay import partitions_in
    from diagnostics.whatif.choices import clauses, close_lines, setting_words
    from diagnostics.whatif.recommend import recommend

    store = None if replays is None else replays.search
    rec = recommend(events, policy, columns=columns, partitions=partitions, store=store)
    count = len(partitions) if partitions else len(partitions_in(events, columns or EventColumns()))
    notes = tuple(clauses(rec, count))
    if rec.senders is not None and rec.senders.column:
        notes = (f"sender column: {rec.senders.column} ({rec.senders.reason})", *notes)
    return RecommendView(
        setting=setting_words(rec.row),
        row=rec.row,
        rule=rec.rule.text,
        notes=notes,
        close=tuple(close_lines(rec)),
        table=rec.table,
    )


def slider_steps(base: Sequence[float], *settings: float | None) -> tuple[float, ...]:
    """The What-if sliders' grid: ``base`` with each given setting added (the job's current
    tolerance and the recommended one, so both can be selected), ascending, without repeats;
    ``None`` (an unlimited late-arrival tolerance) has no place on a slider and is left out."""
    return tuple(sorted({float(v) for v in (*base, *settings) if v is not None}))


def select_point(table: pl.DataFrame, late_s: float, ooo_s: float) -> dict[str, Any] | None:
    """The sweep row nearest to (``late_s``, ``ooo_s``), or ``None`` for an empty table."""
    if table.is_empty():
        return None
    late = pl.col("late_arrival_s").cast(pl.Float64).fill_null(float("inf"))
    distance = (late - late_s).abs() + (pl.col("out_of_order_s").cast(pl.Float64) - ooo_s).abs()
    return table.with_columns(distance.alias("_d")).sort("_d").drop("_d").row(0, named=True)


def delay_metric(finding: Any) -> tuple[str, str]:
    """The delay shown beside a finding, labelled for what it is: with a capture, the p95
    release delay the fix (the one recommended setting) measures; otherwise the delay the
    cause adds now."""
    impact = finding.impact
    if "fix_release_delay_p95_seconds" in impact:
        value = impact["fix_release_delay_p95_seconds"]
        return "Release delay p95 with the fix", (
            "never released" if value is None else f"{float(value):,.1f} s"
        )
    delay = impact.get("delay_seconds")
    return "Delay added now", "–" if delay is None else f"{float(delay):,.1f} s"
