"""What-if sweeps: replay a grid of ordering policies over one capture and pick one.

Every setting is evaluated by the engine itself (:mod:`diagnostics.whatif.evaluate`) on a
capture parsed and sorted once per OVER key set.

Pareto front: the settings no other setting beats on both *affected share* (adjusted +
dropped, %) and *p95 release delay*; a setting whose events are never released has infinite
delay. The recommendation rule is :data:`RULE`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
import polars as pl

from diagnostics.durations import SECOND
from diagnostics.engine.columns import EventColumns
from diagnostics.engine.policy import OrderingPolicy
from diagnostics.errors import PolicyError, Setting, UsageError
from diagnostics.whatif.evaluate import (
    Evaluator,
    Measures,
    Prepared,
    evaluate_locally,
    prepare,
    unsaveable,
)
from diagnostics.whatif.results import ResultsQuery, with_results
from diagnostics.whatif.rule import DEFAULT_RULE, Optimise, Rule, delays, measures

#: The affected share (adjusted + dropped) a recommended setting may leave, in percent.
BUDGET_PCT = DEFAULT_RULE.budget_pct
RULE = DEFAULT_RULE.text

SCHEMA = {
    "late_arrival_s": pl.Float64,
    "out_of_order_s": pl.Float64,
    "partition_by": pl.Boolean,
    "over": pl.String,
    "events": pl.Int64,
    "adjusted": pl.Int64,
    "dropped": pl.Int64,
    "never_released": pl.Int64,
    "pct_adjusted": pl.Float64,
    "pct_dropped": pl.Float64,
    "unsaveable": pl.Int64,
    "pct_budget": pl.Float64,
    "delay_p50_s": pl.Float64,
    "delay_p95_s": pl.Float64,
    "delay_max_s": pl.Float64,
}


@dataclass(frozen=True)
class SweepResult:
    """One row per setting (see :data:`SCHEMA` plus ``pareto`` and ``recommended``), the rule
    that chose the recommended row, the base policy and the settings skipped (with why)."""

    table: pl.DataFrame
    rule: str
    policy: OrderingPolicy
    skipped: tuple[str, ...] = ()

    @property
    def recommended(self) -> dict | None:
        """The recommended row as a dict (``None`` for an empty sweep)."""
        rows = self.table.filter(pl.col("recommended"))
        return rows.row(0, named=True) if rows.height else None


def row_of(policy: OrderingPolicy, measures: Measures, unsaveable: int = 0) -> dict:
    """A row of :data:`SCHEMA`: the setting and what the engine measured under it;
    ``unsaveable``: the capture's events no setting can keep (counted apart by the budget)."""
    n = max(measures.events, 1)
    saveable = measures.events - unsaveable
    changed = measures.adjusted + measures.dropped - unsaveable
    return {
        "late_arrival_s": None
        if policy.late_arrival_ns is None
        else policy.late_arrival_ns / SECOND,
        "out_of_order_s": policy.out_of_order_ns / SECOND,
        "partition_by": policy.partition_by,
        "over": ",".join(policy.over),
        "events": measures.events,
        "adjusted": measures.adjusted,
        "dropped": measures.dropped,
        "never_released": measures.never_released,
        "pct_adjusted": 100 * measures.adjusted / n,
        "pct_dropped": 100 * measures.dropped / n,
        "unsaveable": unsaveable,
        "pct_budget": 100 * changed / saveable if saveable > 0 else 0.0,
        "delay_p50_s": measures.delay_p50_s,
        "delay_p95_s": measures.delay_p95_s,
        "delay_max_s": measures.delay_max_s,
    }


def measure_row(
    prepared: Prepared, policy: OrderingPolicy, evaluator: Evaluator = evaluate_locally
) -> dict:
    """One setting replayed by the engine: a row of :data:`SCHEMA`."""
    assert policy.timestamp_by is not None
    lost = unsaveable(prepared, policy.timestamp_by, early_policy=policy.early_policy)
    return row_of(policy, evaluator(prepared, [policy])[0], lost.total)


def _check(policy: OrderingPolicy, prepared: Prepared) -> None:
    problem = policy.partition_problem(len(prepared.partitions))
    if problem is not None:
        raise PolicyError(problem, Setting.PARTITION_BY)


def pareto_mask(affected: np.ndarray, delay: np.ndarray) -> np.ndarray:
    """True where no other point is ≤ on both and < on one (both minimised)."""
    n = affected.size
    mask = np.ones(n, dtype=bool)
    for i in range(n):
        better = (affected <= affected[i]) & (delay <= delay[i])
        strictly = (affected < affected[i]) | (delay < delay[i])
        if np.any(better & strictly):
            mask[i] = False
    return mask


def _mark(table: pl.DataFrame, rule: Rule) -> pl.DataFrame:
    if table.is_empty():
        return table.with_columns(
            pl.lit(None, pl.Boolean).alias("pareto"), pl.lit(None, pl.Boolean).alias("recommended")
        )
    pareto = pareto_mask(measures(table, rule), delays(table))
    chosen = np.zeros(table.height, dtype=bool)
    index = rule.choose(table)
    assert index is not None
    chosen[index] = True
    return table.with_columns(pl.Series("pareto", pareto), pl.Series("recommended", chosen))


def sweep(
    events: pl.DataFrame,
    policy: OrderingPolicy,
    *,
    late_values: Sequence[int | None],
    ooo_values: Sequence[int],
    partition_by_values: Sequence[bool] = (False,),
    over_values: Sequence[tuple[str, ...]] = ((),),
    columns: EventColumns | None = None,
    partitions: Sequence[int] | None = None,
    rule: Rule = DEFAULT_RULE,
    results: ResultsQuery | None = None,
    evaluator: Evaluator = evaluate_locally,
) -> SweepResult:
    """Evaluate every combination of the given values on ``events`` (tolerances in ns);
    with ``results``, each is also weighed by the query's windowed results; ``evaluator``
    runs the engine (default: here).

    ``policy`` supplies everything else (``timestamp_by``, action, early policy). Settings
    ASA rejects (OVER on a multi-partition input without PARTITION BY) are skipped and listed
    in ``skipped``.
    """
    if policy.timestamp_by is None:
        msg = "a TIMESTAMP BY column is required: without TIMESTAMP BY no tolerance applies"
        raise UsageError(msg, Setting.TIMESTAMP_BY)
    if not late_values or not ooo_values:
        msg = "a sweep needs at least one late-arrival and one out-of-order value"
        raise UsageError(msg)
    rows: list[dict] = []
    measured: list[OrderingPolicy] = []
    skipped: list[str] = []
    for over in dict.fromkeys(tuple(o) for o in over_values):
        prepared = prepare(
            events, policy.timestamp_by, over, columns=columns, partitions=partitions
        )
        settings: list[OrderingPolicy] = []
        for pby in dict.fromkeys(partition_by_values):
            for late in dict.fromkeys(late_values):
                for ooo in dict.fromkeys(ooo_values):
                    setting = replace(
                        policy,
                        late_arrival_ns=late,
                        out_of_order_ns=ooo,
                        partition_by=pby,
                        over=over,
                    )
                    try:
                        _check(setting, prepared)
                    except PolicyError as exc:
                        skipped.append(f"{setting.describe()}: {exc}")
                    else:
                        settings.append(setting)
        if settings:  # one batch per OVER key set: the evaluator may run them side by side
            found = evaluator(prepared, settings)
            lost = unsaveable(prepared, policy.timestamp_by, early_policy=policy.early_policy)
            rows += [row_of(s, m, lost.total) for s, m in zip(settings, found, strict=True)]
            measured += settings
    table = pl.DataFrame(rows, schema=SCHEMA, orient="row")
    if results is not None:
        table = with_results(
            table, measured, events, results, columns=columns, partitions=partitions
        )
    elif rule.optimise is Optimise.RESULTS:
        msg = "weighing settings by results needs the job's query"
        raise UsageError(msg)
    return SweepResult(
        table=_mark(table, rule), rule=rule.text, policy=policy, skipped=tuple(skipped)
    )
