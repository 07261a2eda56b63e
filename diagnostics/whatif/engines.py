"""What-if under Flink's or Spark's rules: the engine's own settings searched over a capture
(docs/engines.md, "What-if and explain per engine"), measured by replaying them.

The search is the recommender's (:func:`diagnostics.whatif.recommend.coarse_to_fine`) over the
engine's search space: the main setting (Flink's out-of-orderness bound, Spark's watermark
delay) over the whole seconds up to the capture's own largest disorder, for each value of the
secondary settings (Flink: idleness, allowed lateness; Spark: trigger interval). A larger
bound or delay never drops more (tests/engines/test_properties.py) and delays output more, so
the score (dropped beyond the budget first, then the p95 emission delay) has one valley.

The emission delay of an event is when its window is emitted minus its arrival; a window not
emitted by the end of the capture counts with the delay it had by then (a lower bound), so
holding output back (no idleness, a silent split) is not mistaken for a short delay.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
import polars as pl

from diagnostics.durations import MINUTE, SECOND, format_duration
from diagnostics.engine.columns import EventColumns
from diagnostics.engines.policy import EngineRules, FlinkRules, SparkRules
from diagnostics.engines.replay import EngineCapture
from diagnostics.engines.summary import drop_counter
from diagnostics.engines.windows import Releases
from diagnostics.whatif.recommend import CURRENT, SEARCH, coarse_to_fine
from diagnostics.whatif.rule import DEFAULT_RULE, Rule
from diagnostics.whatif.sweep import pareto_mask

#: Idleness timeouts tried besides none and the job's (Flink).
IDLENESS_TRIED = (5 * SECOND, 30 * SECOND, MINUTE, 5 * MINUTE)
#: Trigger intervals tried besides the job's (Spark).
TRIGGERS_TRIED = (SECOND, 5 * SECOND, 10 * SECOND)
#: The most main-setting values the search looks at beyond the full scan.
MOST_VALUES = 300
#: Every whole second of the main setting is a candidate up to this many seconds.
FULL_SCAN_S = 900


@dataclass(frozen=True)
class EngineRecommendation:
    """Every measured setting (one row each: the engine's settings, ``dropped``,
    ``pct_dropped``, ``never_emitted``, ``delay_p50_s``, ``delay_p95_s``, ``tried_as``,
    ``pareto``, ``recommended``), the recommended rules and the job's own."""

    rules: EngineRules
    current: EngineRules
    table: pl.DataFrame
    rule: Rule
    #: the rules of each row of ``table``, in order
    settings: tuple[EngineRules, ...] = ()

    def least_delay_keeping_all(self) -> tuple[EngineRules, dict] | None:
        """The measured setting that drops nothing with the least p95 emission delay."""
        rows = [
            (r, row)
            for r, row in zip(self.settings, self.table.iter_rows(named=True), strict=True)
            if row["dropped"] == 0
        ]
        if not rows:
            return None
        return min(rows, key=lambda pair: pair[1]["delay_p95_s"] or 0.0)

    @property
    def row(self) -> dict:
        """The recommended row."""
        return self.table.filter(pl.col("recommended")).row(0, named=True)

    @property
    def current_row(self) -> dict:
        """The row of the job's own setting."""
        return self.table.filter(pl.col("tried_as") == CURRENT).row(0, named=True)


def _seconds(ns: int | None) -> float | None:
    return None if ns is None else ns / SECOND


def settings_of(rules: EngineRules) -> dict[str, float | None]:
    """The searched settings of ``rules`` in seconds, as the table's columns."""
    if isinstance(rules, FlinkRules):
        return {
            "out_of_orderness_s": _seconds(rules.out_of_orderness_ns),
            "idleness_s": _seconds(rules.idleness_ns),
            "allowed_lateness_s": _seconds(rules.allowed_lateness_ns),
        }
    return {
        "watermark_delay_s": _seconds(rules.watermark_delay_ns),
        "trigger_s": _seconds(rules.trigger_ns),
    }


def describe_setting(rules: EngineRules) -> str:
    """The searched settings in the engine's own words."""
    if isinstance(rules, FlinkRules):
        idle = (
            "no withIdleness"
            if rules.idleness_ns is None
            else f"withIdleness({format_duration(rules.idleness_ns)})"
        )
        return (
            f"forBoundedOutOfOrderness({format_duration(rules.out_of_orderness_ns)}), {idle}, "
            f"allowedLateness({format_duration(rules.allowed_lateness_ns)})"
        )
    return (
        f"withWatermark delay {format_duration(rules.watermark_delay_ns)}, trigger "
        f"{format_duration(rules.trigger_ns)}"
    )


def disorder_s(
    events: pl.DataFrame | EngineCapture,
    rules: EngineRules,
    columns: EventColumns | None = None,
    partitions: Sequence[int] | None = None,
) -> np.ndarray:
    """How far (whole seconds, rounded up) each event's time is behind the largest one seen
    before it: on its split (Flink) or anywhere (Spark). 0 for events in order. ``events``
    may be a capture read already (then ``columns`` and ``partitions`` are its own)."""
    capture = (
        events
        if isinstance(events, EngineCapture)
        else EngineCapture(events, rules.event_time, partitions=partitions, columns=columns)
    )
    order = capture.order[capture.valid_sorted]  # valid events in arrival order
    group = capture.pidx[order] if isinstance(rules, FlinkRules) else np.zeros(len(order), int)
    frame = pl.DataFrame({"g": group, "t": capture.event_ns[order]})
    frame = frame.with_columns(pl.col("t").cum_max().shift(1).over("g").alias("m"))
    lag = (frame["m"] - frame["t"]).fill_null(0).clip(lower_bound=0).to_numpy()
    return -(-lag // SECOND)


def _main_values(lags: np.ndarray, current: int) -> list[int]:
    """The main setting's candidate values (ns): every whole second up to the capture's
    largest disorder when that is at most :data:`FULL_SCAN_S`, else the whole seconds that
    keep one more event's disorder, spread over at most :data:`MOST_VALUES`; with 0 and the
    job's own."""
    top = int(lags.max()) if len(lags) else 0
    if top <= FULL_SCAN_S:
        return sorted({*(s * SECOND for s in range(top + 1)), current})
    values = np.unique(np.concatenate(([0], lags))).astype(np.int64)
    if len(values) > MOST_VALUES:
        picks = np.linspace(0, len(values) - 1, MOST_VALUES).round().astype(int)
        values = values[np.unique(picks)]
    return sorted({*(int(v) * SECOND for v in values), current})


class _Measured:
    """Replays settings once each on the capture read once, and keeps their rows."""

    def __init__(self, capture: EngineCapture, rule: Rule) -> None:
        self.capture, self.rule = capture, rule
        self.rows: dict[EngineRules, dict] = {}

    def row(self, rules: EngineRules, tried_as: str) -> dict:
        if rules not in self.rows:
            measured = measures(self.capture, self.capture.releases(rules))
            self.rows[rules] = {**settings_of(rules), **measured, "tried_as": tried_as}
        return self.rows[rules]

    def score(self, rules: EngineRules) -> float:
        row = self.row(rules, SEARCH)
        allowed = self.rule.allowed(row["events"])
        if row["dropped"] > allowed:
            return 1e12 + row["dropped"]
        return float(row["delay_p95_s"] if row["delay_p95_s"] is not None else 0.0)


def measures(capture: EngineCapture, decided: Releases) -> dict:
    """Dropped events and the window emission delay (censored at the capture's end) of the
    engine's decisions on ``capture`` (:class:`~diagnostics.engines.windows.Decisions` or
    their :class:`~diagnostics.engines.windows.Releases`): the outcome columns' counts and
    quantiles
    (``dropped``; ``release_time`` − ``arrival`` of the events kept, the last arrival for a
    window not emitted), taken from the decisions without building the columns."""
    arrival = capture.arrival_sorted
    n = len(arrival)
    gone = decided.dropped | ~capture.valid_sorted
    dropped = int(gone.sum())
    kept = ~gone
    released = decided.released[kept]
    emitted = np.where(released, decided.release_ns[kept], arrival.max() if n else 0)
    delay = (emitted - arrival[kept]) / SECOND
    p50, p95 = (
        (None, None)
        if not len(delay)
        else (round(float(q), 3) for q in np.quantile(delay, [0.5, 0.95]))
    )
    return {
        "events": n,
        "dropped": dropped,
        "pct_dropped": round(100 * dropped / n, 4) if n else 0.0,
        "never_emitted": int((~released).sum()),
        "delay_p50_s": p50,
        "delay_p95_s": p95,
    }


def _secondary(current: EngineRules, splits: int) -> list[EngineRules]:
    """The secondary settings tried, each with the job's main setting."""
    if isinstance(current, FlinkRules):
        idle = [current.idleness_ns] + ([None, *IDLENESS_TRIED] if splits > 1 else [])
        lateness = [current.allowed_lateness_ns, 0]
        return [
            replace(current, idleness_ns=i, allowed_lateness_ns=la)
            for i in dict.fromkeys(idle)
            for la in dict.fromkeys(lateness)
        ]
    return [
        replace(current, trigger_ns=t) for t in dict.fromkeys([current.trigger_ns, *TRIGGERS_TRIED])
    ]


def _with_main(rules: EngineRules, value: int) -> EngineRules:
    if isinstance(rules, FlinkRules):
        return replace(rules, out_of_orderness_ns=value)
    return replace(rules, watermark_delay_ns=value)


def recommend_engine(
    events: pl.DataFrame,
    current: EngineRules,
    *,
    columns: EventColumns | None = None,
    partitions: Sequence[int] | None = None,
    rule: Rule = DEFAULT_RULE,
    coarse: int = 8,
) -> EngineRecommendation:
    """The best setting of the engine for ``events`` under ``rule``'s budget (dropped events
    ≤ budget %, then the least p95 emission delay; the job's own setting when it is within the
    budget and its delay within the no-difference threshold of the best)."""
    columns = columns or EventColumns()
    capture = EngineCapture(events, current.event_time, partitions=partitions, columns=columns)
    measured = _Measured(capture, rule)
    measured.row(current, CURRENT)
    main = (
        current.out_of_orderness_ns
        if isinstance(current, FlinkRules)
        else current.watermark_delay_ns
    )
    values = _main_values(disorder_s(capture, current), main)
    splits = (
        len(partitions)
        if partitions is not None
        else int(events[columns.partition].n_unique() if columns.partition in events.columns else 1)
    )
    for base in _secondary(current, splits):
        settings = [_with_main(base, v) for v in values]

        def score(new: list[int], settings: list[EngineRules] = settings) -> list[float]:
            return [measured.score(settings[i]) for i in new]

        coarse_to_fine(len(settings), score, coarse)
    table = pl.DataFrame(list(measured.rows.values()))
    chosen_index = _choose(table, rule)
    table = table.with_columns(
        pl.Series("pareto", pareto_mask(table["pct_dropped"].to_numpy(), _delays(table))),
        pl.Series("recommended", np.arange(table.height) == chosen_index),
    )
    chosen = list(measured.rows)[chosen_index]
    return EngineRecommendation(chosen, current, table, rule, tuple(measured.rows))


def _delays(table: pl.DataFrame) -> np.ndarray:
    return table["delay_p95_s"].fill_null(0.0).to_numpy().astype(float)


def _choose(table: pl.DataFrame, rule: Rule) -> int:
    """The recommended row: least p95 delay within the budget (ties: fewer dropped, smaller
    settings), else the fewest dropped; the job's own when within the budget and close."""
    pct = table["pct_dropped"].to_numpy()
    delay = _delays(table)
    names = list(settings_of(table_rules_kind(table)))
    keys = [table[c].fill_null(np.inf).to_numpy() for c in reversed(names)]
    within = pct <= rule.budget_pct + 1e-12
    if within.any():
        order = np.lexsort((*keys, pct, delay))
    else:
        within = pct <= pct.min() + 1e-12
        order = np.lexsort((*keys, delay, pct))
    best = next(int(i) for i in order if within[i])
    current = int(np.flatnonzero((table["tried_as"] == CURRENT).to_numpy())[0])
    if within[current] and delay[current] <= delay[best] + rule.no_difference_s:
        return current
    return best


def table_rules_kind(table: pl.DataFrame) -> EngineRules:
    """A rules object of the kind whose settings ``table`` holds (for its column names)."""
    if "out_of_orderness_s" in table.columns:
        return FlinkRules("t", SECOND)
    return SparkRules("t", SECOND)


def counter_of(rules: EngineRules) -> str:
    """The engine's counter of dropped events (for the report)."""
    return drop_counter(rules)
