"""Brute force for the recommender's tests: the least p95 release delay any whole-second
setting reaches within the budget, found by the engine alone (no search guide)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import polars as pl

from diagnostics.durations import SECOND
from diagnostics.engine.columns import EventColumns
from diagnostics.engine.policy import OrderingPolicy
from diagnostics.whatif.evaluate import evaluate, prepare, unsaveable
from diagnostics.whatif.rule import DEFAULT_RULE


def _p95(delays: np.ndarray) -> float:
    return float(np.quantile(delays, 0.95, method="higher")) if delays.size else 0.0


def fewest(
    events: pl.DataFrame,
    policy: OrderingPolicy,
    over_sets: list[tuple[str, ...]],
    late_max_s: int,
    columns: EventColumns | None = None,
    partitions: tuple[int, ...] | None = None,
) -> int:
    """The rule's budget in events (its share of the events a setting can change, plus the
    unsaveable ones: early beyond the fixed window, invalid times), or, when no setting keeps
    within it, the fewest affected events any setting leaves (the largest tolerances)."""
    assert policy.timestamp_by is not None
    least = None
    for over in over_sets:
        prepared = prepare(
            events, policy.timestamp_by, over, columns=columns, partitions=partitions
        )
        wide = replace(
            policy, late_arrival_ns=late_max_s * SECOND, out_of_order_ns=late_max_s * SECOND,
            over=over, partition_by=True,
        )  # fmt: skip
        result = evaluate(prepared, wide)
        n = result.adjusted + result.dropped
        least = n if least is None else min(least, n)
        size = prepared.size
        lost = unsaveable(prepared, policy.timestamp_by, early_policy=policy.early_policy).total
    return max(DEFAULT_RULE.allowed(size - lost) + lost, least or 0)


def brute_best(
    events: pl.DataFrame,
    policy: OrderingPolicy,
    over_sets: list[tuple[str, ...]],
    *,
    late_max_s: int,
    columns: EventColumns | None = None,
    partitions: tuple[int, ...] | None = None,
    every_ooo: bool = False,
) -> float:
    """The least p95 delay within the rule's budget over late 0..``late_max_s`` s, every
    out-of-order tolerance 0..late (``every_ooo``) or the least within budget found by
    bisection (the affected count never grows with the out-of-order tolerance), each OVER
    key set, PARTITION BY off and on."""
    assert policy.timestamp_by is not None
    best = float("inf")
    allowed = fewest(events, policy, over_sets, late_max_s, columns, partitions)
    for over in over_sets:
        prepared = prepare(
            events, policy.timestamp_by, over, columns=columns, partitions=partitions
        )
        for pby in (False, True):
            setting = replace(policy, over=over, partition_by=pby)
            if setting.partition_problem(len(prepared.partitions)):
                continue

            def run(late: int, ooo: int, setting=setting, prepared=prepared):
                result = evaluate(
                    prepared,
                    replace(setting, late_arrival_ns=late * SECOND, out_of_order_ns=ooo * SECOND),
                )
                return result.adjusted + result.dropped, result

            for late in range(late_max_s + 1):
                if every_ooo:
                    for ooo in range(late + 1):
                        affected, result = run(late, ooo)
                        if affected <= allowed and not result.never_released:
                            best = min(best, _p95(result.delays_s))
                    continue
                affected, result = run(late, late)
                if affected > allowed:
                    continue
                lo, hi = 0, late  # least ooo within budget
                while lo < hi:
                    mid = (lo + hi) // 2
                    if run(late, mid)[0] <= allowed:
                        hi = mid
                    else:
                        lo = mid + 1
                affected, result = run(late, lo)
                if not result.never_released:
                    best = min(best, _p95(result.delays_s))
    return best
