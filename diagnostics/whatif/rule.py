"""The recommendation rule: which of several measured settings is recommended.

One frozen :class:`Rule` decides for ``whatif`` (any grid), the recommender behind
``explain``'s fix and the app's pages. What is optimised is a closed choice
(:class:`Optimise`), so that other measures can be added without a second rule.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import StrEnum

import numpy as np
import polars as pl


class Optimise(StrEnum):
    """What the recommendation minimises: the p95 release delay among the settings within
    the events budget (``events``), or the job's results: the windows of the query's
    aggregates the ordering changes, then the 95th percentile of the interior windows'
    relative error (``results``)."""

    P95_DELAY = "p95-delay"
    RESULTS = "results"


@dataclass(frozen=True)
class Rule:
    """``budget_pct``: the share of the events a setting can change (adjusted + dropped, %)
    a recommended setting may leave: events early beyond ASA's fixed 5-minute window and
    events without a valid time are dropped whatever the setting, so they are counted apart
    (:func:`budget_share`); ``no_difference_s``: a setting with OVER or PARTITION BY must lower the p95 output
    delay by more than this against the best setting without that clause, else the simpler
    one is recommended (a query change that measures no difference is not written)."""

    budget_pct: float = 1.0
    optimise: Optimise = Optimise.P95_DELAY
    no_difference_s: float = 1.0

    def __post_init__(self) -> None:
        if not (0 <= self.budget_pct <= 100) or math.isnan(self.budget_pct):
            msg = f"budget {self.budget_pct!r} % is out of range: it must be 0 to 100"
            raise ValueError(msg)
        if not self.no_difference_s >= 0:
            msg = f"no-difference threshold {self.no_difference_s!r} s must be 0 or more"
            raise ValueError(msg)
        object.__setattr__(self, "optimise", Optimise(self.optimise))

    @property
    def text(self) -> str:
        """The rule in words, as every output states it."""
        if self.optimise is Optimise.RESULTS:
            return (
                "fewest windows of the query's aggregates changed by the ordering, then the "
                "smallest 95th percentile of the relative error of the interior windows (away "
                "from the data's edges), then the least p95 release delay (ties: fewer "
                "adjusted + dropped events, smaller late then out-of-order tolerance, no OVER, "
                "no PARTITION BY); OVER and PARTITION BY only when they change fewer windows or "
                f"lower that delay by more than {self.no_difference_s:g} s, and the job as it "
                "is when it changes no more windows and its delay is that close to the best"
            )
        return (
            f"least p95 release delay among the settings that leave adjusted + dropped <= "
            f"{self.budget_pct:g}% of the events a setting can change (events early beyond "
            "ASA's fixed 5-minute window or without a valid time are counted apart: no "
            "setting keeps them) (ties: fewer affected, smaller late then "
            "out-of-order tolerance, no OVER, no PARTITION BY); if none does, the setting with "
            "the fewest affected events (ties: least p95 delay); OVER and PARTITION BY only when "
            f"they lower that delay by more than {self.no_difference_s:g} s against the best "
            "setting without them, and the job as it is when it is within the budget and that close "
            "to the best"
        )

    def allowed(self, events: int) -> int:
        """The most of ``events`` (those a setting can change) a setting within the budget
        may leave adjusted or dropped."""
        return math.floor(events * self.budget_pct / 100 + 1e-9)

    def choose(self, table: pl.DataFrame, keep: int | None = None) -> int | None:
        """The index of the recommended row of a sweep table (``None`` when empty);
        ``keep``: the row of the job as it is, recommended when it is among the rows the
        rule would pick from and its delay is within the no-difference threshold of the
        best (a change that measures no difference is not made)."""
        if table.is_empty():
            return None
        if self.optimise is Optimise.RESULTS:
            return self._by_results(table, keep)
        affected = budget_share(table)
        delay = delays(table)
        late = table["late_arrival_s"].fill_null(np.inf).to_numpy()
        ooo = table["out_of_order_s"].to_numpy()
        over = (table["over"] != "").to_numpy()
        pby = table["partition_by"].to_numpy()
        clauses = over.astype(int) + pby.astype(int)
        within = affected <= self.budget_pct + 1e-12
        if within.any():
            order = np.lexsort((pby, over, ooo, late, affected, delay))
        else:
            within = affected <= affected.min() + 1e-12
            order = np.lexsort((pby, over, ooo, late, delay, affected))
        ranked = [int(i) for i in order if within[i]]
        best = ranked[0]
        if keep is not None and within[keep] and delay[keep] <= delay[best] + self.no_difference_s:
            return keep
        for count in range(int(clauses[best])):  # the simplest that measures no worse
            same = next((i for i in ranked if clauses[i] == count), None)
            if same is not None and delay[same] <= delay[best] + self.no_difference_s:
                return same
        return best

    def _by_results(self, table: pl.DataFrame, keep: int | None) -> int:
        """:meth:`choose` by the results (the table has ``windows_changed`` and
        ``p95_relative_error``, see :mod:`diagnostics.whatif.results`)."""
        if "windows_changed" not in table.columns:
            msg = "the rule weighs results, but the settings were measured without a query"
            raise ValueError(msg)
        changed = table["windows_changed"].to_numpy()
        error = table["p95_relative_error"].to_numpy()
        affected = budget_share(table)
        delay = delays(table)
        late = table["late_arrival_s"].fill_null(np.inf).to_numpy()
        ooo = table["out_of_order_s"].to_numpy()
        over = (table["over"] != "").to_numpy()
        pby = table["partition_by"].to_numpy()
        order = np.lexsort((pby, over, ooo, late, affected, delay, error, changed))
        best = int(order[0])
        fewest = changed <= changed[best]
        close = delay <= delay[best] + self.no_difference_s
        if keep is not None and fewest[keep] and close[keep]:
            return keep
        clauses = over.astype(int) + pby.astype(int)
        for count in range(int(clauses[best])):  # the simplest that measures no worse
            same = next((int(i) for i in order if clauses[i] == count), None)
            if same is not None and fewest[same] and close[same]:
                return same
        return best


def budget_expr() -> pl.Expr:
    """:func:`budget_share` as a polars expression (a table with ``unsaveable``)."""
    saveable = pl.col("events") - pl.col("unsaveable")
    changed = pl.col("adjusted") + pl.col("dropped") - pl.col("unsaveable")
    return pl.when(saveable > 0).then(100 * changed / saveable).otherwise(0.0)


def budget_share(table: pl.DataFrame) -> np.ndarray:
    """What the budget counts, per row: adjusted + dropped less the events no setting can
    keep (``unsaveable``), in percent of the events a setting can change; a table without
    ``unsaveable`` counts every event (``pct_adjusted + pct_dropped``)."""
    if "unsaveable" not in table.columns:
        return (table["pct_adjusted"] + table["pct_dropped"]).to_numpy()
    return table.select(budget_expr()).to_series().to_numpy()


def measures(table: pl.DataFrame, rule: Rule) -> np.ndarray:
    """What the Pareto front weighs against the delay: the windows changed (results) or the
    share of the events a setting can change left adjusted or dropped (events)."""
    if rule.optimise is Optimise.RESULTS:
        return table["windows_changed"].to_numpy().astype(float)
    return budget_share(table)


def delays(table: pl.DataFrame) -> np.ndarray:
    """The p95 release delay of each row, infinite where events are never released."""
    delay = table["delay_p95_s"].fill_null(np.inf).to_numpy()
    return np.where(table["never_released"].to_numpy() > 0, np.inf, delay)


#: The rule every command and page uses unless told otherwise.
DEFAULT_RULE = Rule()
