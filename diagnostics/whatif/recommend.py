"""The one recommender: the best ordering setting a capture allows, under the stated rule.

``explain``'s fix (``--write-fix``), ``whatif``'s default search, the app's Findings and
What-if pages and the report all call :func:`recommend`, so the same capture, job and rule
give the same setting and the same numbers everywhere.

The search is not a fixed grid. For every OVER key set (none, and each sender column found
among the columns, :mod:`diagnostics.whatif.senders`) the search guide
(:mod:`diagnostics.whatif.staircase`) lists, for every whole-second late-arrival tolerance
the capture's own lateness calls for, the least out-of-order tolerance within the budget.
The release delay grows with both tolerances, so the least delay is among those settings;
the engine replays them coarse to fine (a few spread over the list, then the neighbours of
the best, until no unmeasured setting is left between them), with PARTITION BY off and on.
Every number shown is the engine's. The rule (:class:`~diagnostics.whatif.rule.Rule`)
then picks one row of everything measured, the job's own setting included. Its budget is
taken over the events a setting can change: those early beyond ASA's fixed 5-minute window
and those without a valid time are dropped whatever the setting (``unsaveable``, reported
apart with their own fix), so they neither use up the budget nor push the search to the
largest tolerances.

Each round of the search hands its settings to the evaluator together
(:class:`~diagnostics.whatif.evaluate.Evaluator`: here by default, or on Spark with
``whatif --spark``); the search itself is the same whoever runs the engine.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

import numpy as np
import polars as pl

from diagnostics.durations import SECOND
from diagnostics.engine.columns import EventColumns
from diagnostics.engine.policy import MAX_TOLERANCE_NS, Action, OrderingPolicy
from diagnostics.errors import Setting, UsageError
from diagnostics.whatif.evaluate import (
    Evaluator,
    Measures,
    Prepared,
    Unsaveable,
    evaluate_locally,
    prepare,
    with_over,
)
from diagnostics.whatif.replays import SearchStore
from diagnostics.whatif.results import ResultsQuery, with_results
from diagnostics.whatif.rule import DEFAULT_RULE, Optimise, Rule, delays, measures
from diagnostics.whatif.senders import SenderChoice, sender_choice
from diagnostics.whatif.staircase import Timelines, late_candidates_s, staircase, timelines_of
from diagnostics.whatif.sweep import SCHEMA, SweepResult, pareto_mask, row_of

#: Where each measured row came from (the ``tried_as`` column).
SEARCH, CURRENT, PROPOSED = "search", "job as it is", "proposed"


def default_over_sets(
    events: pl.DataFrame,
    policy: OrderingPolicy,
    columns: EventColumns | None,
    most: int,
    prepared: Prepared | None = None,
) -> list[tuple[str, ...]]:
    """The OVER key sets tried when none are given: the sender columns of
    :func:`sender_choice` (at most ``most``, best first)."""
    found = sender_choice(events, policy, columns, prepared).over_columns
    return [(k,) for k in found[:most]]


@dataclass(frozen=True)
class RecommendConfig:
    """How far the search goes. ``over``: the OVER key sets to try besides none (``None``:
    every sender column found, at most ``most_keys``); ``partition_by``: PARTITION BY values
    to try; ``actions``: Adjust/Drop to try (``None``: the job's own); ``full_scan_s``: every
    whole second of late tolerance is looked at up to this (beyond it, the capture's own
    lateness values, at most ``most_late_values``); ``coarse``: settings measured per round
    of the coarse-to-fine search."""

    rule: Rule = DEFAULT_RULE
    over: tuple[tuple[str, ...], ...] | None = None
    most_keys: int = 3
    partition_by: tuple[bool, ...] = (False, True)
    actions: tuple[Action, ...] | None = None
    full_scan_s: int = 900
    most_late_values: int = 300
    coarse: int = 8
    #: events × late tolerances the guide looks at before it takes every n-th second first
    scan_budget: int = 5_000_000
    #: with a query, every measured setting is also weighed by the job's results (windows
    #: changed, largest relative error: :mod:`diagnostics.whatif.results`)
    results: ResultsQuery | None = None

    def __post_init__(self) -> None:
        if self.coarse < 3:
            msg = f"coarse {self.coarse} must be 3 or more"
            raise ValueError(msg)
        if not self.partition_by:
            msg = "at least one PARTITION BY value is needed"
            raise ValueError(msg)


@dataclass(frozen=True)
class Recommendation:
    """The recommended setting, every measured row (``SCHEMA`` plus ``tried_as``,
    ``pareto``, ``recommended``), the rule, the job's policy, the sender columns found and
    the late/out-of-order tolerances the search measured; the events no setting can keep
    (counted apart by the budget) and the sender column chosen (without given OVER sets)."""

    policy: OrderingPolicy
    table: pl.DataFrame
    rule: Rule
    base: OrderingPolicy
    keys: tuple[str, ...] = ()
    late_values_s: tuple[int, ...] = ()
    ooo_values_s: tuple[int, ...] = ()
    skipped: tuple[str, ...] = field(default_factory=tuple)
    unsaveable: Unsaveable = field(default_factory=Unsaveable)
    senders: SenderChoice | None = None

    @property
    def row(self) -> dict:
        """The recommended row (the engine's numbers)."""
        return self.table.filter(pl.col("recommended")).row(0, named=True)

    def as_sweep(self) -> SweepResult:
        """The measured rows as a what-if sweep (table, chart and files as ``whatif`` writes)."""
        return SweepResult(
            table=self.table.drop("tried_as"),
            rule=self.rule.text,
            policy=self.base,
            skipped=self.skipped,
        )

    def best_with(self, **where: object) -> dict | None:
        """The row the rule would pick among those matching ``where`` (column = value)."""
        frame = self.table
        for name, value in where.items():
            frame = frame.filter(pl.col(name) == value)
        index = self.rule.choose(frame)
        return None if index is None else frame.row(index, named=True)


def policy_of(row: dict, base: OrderingPolicy) -> OrderingPolicy:
    """The setting of a measured row (``base`` gives TIMESTAMP BY and the early policy)."""
    late = row["late_arrival_s"]
    return replace(
        base,
        late_arrival_ns=None if late is None else round(late * SECOND),
        out_of_order_ns=round(row["out_of_order_s"] * SECOND),
        partition_by=bool(row["partition_by"]),
        over=tuple(c for c in row["over"].split(",") if c),
        action=Action(row["action"]),
    )


def coarse_to_fine(size: int, score: Callable[[list[int]], list[float]], coarse: int) -> None:
    """Measure a few of ``size`` settings spread evenly, then the neighbours of the best,
    until no unmeasured setting is left between the best and its measured neighbours;
    ``score`` takes each round's new settings together."""
    seen: dict[int, float] = {}
    lo, hi = 0, size - 1
    while size:
        spread = np.unique(np.linspace(lo, hi, coarse).round().astype(int)).tolist()
        new = [i for i in spread if i not in seen]
        seen.update(zip(new, score(new), strict=True))
        inside = sorted(i for i in seen if lo <= i <= hi)
        best = min(inside, key=lambda i: (seen[i], i))
        pos = inside.index(best)
        lo, hi = inside[max(pos - 1, 0)], inside[min(pos + 1, len(inside) - 1)]
        if all(i in seen for i in range(lo, hi + 1)):
            return


def _mark(table: pl.DataFrame, rule: Rule) -> pl.DataFrame:
    chosen = np.zeros(table.height, dtype=bool)
    current = table["tried_as"].to_list()
    index = rule.choose(table, current.index(CURRENT) if CURRENT in current else None)
    if index is not None:
        chosen[index] = True
    weighed = measures(table, rule)
    return table.with_columns(
        pl.Series("pareto", pareto_mask(weighed, delays(table)) if table.height else []),
        pl.Series("recommended", chosen),
    )


class _Measured:
    """The rows measured so far, one per distinct setting."""

    def __init__(
        self,
        events: pl.DataFrame,
        base: OrderingPolicy,
        columns: EventColumns,
        partitions: Sequence[int] | None,
        evaluator: Evaluator,
        store: SearchStore | None = None,
    ) -> None:
        self.events, self.base = events, base
        self.columns, self.partitions = columns, partitions
        self.evaluator = evaluator
        self.rows: dict[OrderingPolicy, dict] = {}
        # a search of the same capture made before (explain's, before its fix): its
        # numbers are used as they are, the rest measured and added, and the capture it
        # parsed and sorted is used again; the frames with OVER columns and the timelines
        # are this search's only
        if store is None or not store.fits(columns, partitions):
            store = SearchStore(columns, None if partitions is None else tuple(partitions))
        self.store = store
        self.known: dict[OrderingPolicy, Measures] = store.measures
        self._prepared: dict[tuple[str, ...], Prepared] = {}
        self._lines: dict[tuple[str, ...], Timelines] = {}
        self.skipped: list[str] = []
        #: the capture's events no setting can keep (the same under every setting)
        self.unsaveable = 0

    def prepared(self, over: tuple[str, ...]) -> Prepared:
        """The capture parsed and sorted once (kept in the store for a later search of it:
        four columns per event), with the OVER columns of ``over``."""
        if over not in self._prepared:
            ts = self.base.timestamp_by
            assert ts is not None
            base = self.store.once(
                ("prepared", ts, self.events.height),
                lambda: prepare(
                    self.events,
                    ts,
                    columns=self.columns,
                    partitions=self.partitions,
                    parsed=self.store.parsed(self.events, ts),
                ),
            )
            self._prepared[over] = with_over(base, self.events, ts, over)
        return self._prepared[over]

    def let_go(self) -> None:
        """Drop this search's frames with OVER columns and its timelines (the store keeps
        what a later search uses)."""
        self._prepared.clear()
        self._lines.clear()

    def partition_count(self, over: tuple[str, ...]) -> int:
        """The partitions the engine replays (those given, else the capture's)."""
        return self.store.once(("partitions", over), lambda: len(self.prepared(over).partitions))

    def lines(self, over: tuple[str, ...]) -> Timelines:
        """The timelines of the capture under ``over`` (the search guide's input)."""
        if over not in self._lines:
            assert self.base.timestamp_by is not None
            self._lines[over] = timelines_of(
                self.prepared(over),
                self.base.timestamp_by,
                over,
                early_policy=self.base.early_policy,
            )
        return self._lines[over]

    def measure(self, settings: Sequence[tuple[OrderingPolicy, str]]) -> list[dict | None]:
        """The row of each setting (``None``: ASA rejects it, noted in ``skipped``); those
        not measured yet go to the evaluator together, one batch per OVER key set, and are
        kept in the order given (a setting measured before keeps its row)."""
        todo: dict[OrderingPolicy, str] = {}
        for policy, tried_as in settings:
            if policy in self.rows or policy in todo:
                continue
            problem = policy.partition_problem(self.partition_count(policy.over))
            if problem is not None:
                self.skipped.append(f"{policy.describe()}: {problem}")
                continue
            todo[policy] = tried_as
        found = {policy: self.known[policy] for policy in todo if policy in self.known}
        for over in dict.fromkeys(policy.over for policy in todo if policy not in found):
            batch = [policy for policy in todo if policy.over == over and policy not in found]
            found.update(zip(batch, self.evaluator(self.prepared(over), batch), strict=True))
        self.known.update(found)
        for policy, tried_as in todo.items():
            row = {**row_of(policy, found[policy], self.unsaveable), "action": policy.action.value}
            self.rows[policy] = {**row, "tried_as": tried_as}
        return [self.rows.get(policy) for policy, _ in settings]


def _score(row: dict | None) -> float:
    if row is None or row["never_released"] or row["delay_p95_s"] is None:
        return float("inf")
    return float(row["delay_p95_s"])


def _search(
    measured: _Measured,
    policy: OrderingPolicy,
    late_values: list[int],
    allowed: int,
    over: tuple[str, ...],
    action: Action,
    config: RecommendConfig,
) -> int | None:
    """Coarse to fine over the guide's settings for one OVER key set and action, PARTITION
    BY off and on; the late tolerance (s) of the best measured one."""
    points = measured.store.once(
        (
            "staircase",
            over,
            policy.timestamp_by,
            policy.early_policy,
            tuple(late_values),
            allowed,
            action,
        ),
        lambda: staircase(measured.lines(over), late_values, allowed, action),
    )
    points = [(la, oo) for la, oo in points if la is None or la * SECOND <= MAX_TOLERANCE_NS]
    found: list[tuple[float, int]] = []
    for pby in config.partition_by:
        if over and measured.partition_count(over) > 1 and not pby:
            continue
        settings = [
            replace(
                policy,
                late_arrival_ns=None if la is None else la * SECOND,
                out_of_order_ns=oo * SECOND,
                partition_by=pby,
                over=over,
                action=action,
            )
            for la, oo in points
        ]
        scores: dict[int, float] = {}

        def score(
            new: list[int],
            settings: list[OrderingPolicy] = settings,
            scores: dict[int, float] = scores,
        ) -> list[float]:
            rows = measured.measure([(settings[i], SEARCH) for i in new])
            scores.update((i, _score(row)) for i, row in zip(new, rows, strict=True))
            return [scores[i] for i in new]

        coarse_to_fine(len(settings), score, config.coarse)
        found += [(v, i) for i, v in scores.items() if points[i][0] is not None]
    if not found:
        return None
    late = points[min(found)[1]][0]
    return late


def _guide(lines: Timelines, config: RecommendConfig) -> tuple[list[int], int, Unsaveable]:
    """What the search takes from the timelines besides the guide's steps: the late
    tolerances worth trying, the events, and those no setting can keep."""
    top = late_candidates_s(lines, full_scan_s=config.full_scan_s, most=config.most_late_values)
    return top, lines.events, lines.unsaveable


def recommend(
    events: pl.DataFrame,
    policy: OrderingPolicy,
    *,
    columns: EventColumns | None = None,
    partitions: Sequence[int] | None = None,
    config: RecommendConfig | None = None,
    also: Sequence[tuple[OrderingPolicy, str]] = (),
    evaluator: Evaluator = evaluate_locally,
    store: SearchStore | None = None,
) -> Recommendation:
    """The best setting for ``events`` under ``config.rule``; ``policy`` is the job's (its
    TIMESTAMP BY column, action and early policy; its own setting is always measured);
    ``also``: more settings to measure and show, each with where it came from;
    ``evaluator``: who runs the engine on the settings (default: here); ``store``: what an
    earlier search of the same capture measured (used, and added to: the same numbers the
    evaluator gives, :mod:`diagnostics.whatif.replays`)."""
    config = config or RecommendConfig()
    if policy.timestamp_by is None:
        msg = "a TIMESTAMP BY column is required: without TIMESTAMP BY no tolerance applies"
        raise UsageError(msg, Setting.TIMESTAMP_BY)
    ts = policy.timestamp_by
    columns = columns or EventColumns()
    measured = _Measured(events, policy, columns, partitions, evaluator, store)
    senders = None
    once = measured.store.once
    if config.over is None:
        senders = once(
            ("senders", policy, tuple(events.columns)),
            lambda: sender_choice(events, policy, columns, measured.prepared(())),
        )
        over_sets: list[tuple[str, ...]] = [(k,) for k in senders.over_columns[: config.most_keys]]
    else:
        over_sets = [tuple(o) for o in config.over if o]
    if policy.over and policy.over not in over_sets:
        over_sets.append(policy.over)
    over_sets = [(), *dict.fromkeys(over_sets)]
    actions = config.actions or (policy.action,)
    guide = {
        over: once(
            ("guide", over, ts, policy.early_policy, config.full_scan_s, config.most_late_values),
            lambda over=over: _guide(measured.lines(over), config),  # type: ignore[misc]
        )
        for over in over_sets
    }
    _, events_in, lost = guide[()]
    measured.unsaveable = lost.total
    # the budget is taken over the events a setting can change
    allowed = config.rule.allowed(events_in - lost.total)
    for over, (top, count, _) in guide.items():
        # a large capture: every step-th second first, then every second around the best
        step = max(1, -(-count * len(top) // config.scan_budget))
        late_values = [v for v in top if v % step == 0 or v == top[-1] or v > config.full_scan_s]
        for action in actions:
            best = _search(measured, policy, late_values, allowed, over, action, config)
            if step > 1 and best is not None:
                near = range(max(0, best - step), best + step + 1)
                finer = sorted({*late_values, *(v for v in near if v <= top[-1])})
                _search(measured, policy, finer, allowed, over, action, config)
    extras = [(extra, t) for extra, t in also if extra.timestamp_by == policy.timestamp_by]
    measured.measure([(policy, CURRENT), *extras])
    measured.let_go()  # the search is done: its frames and timelines are not needed below
    schema = {**SCHEMA, "action": pl.String, "tried_as": pl.String}
    table = pl.DataFrame(list(measured.rows.values()), schema=schema, orient="row")
    if config.results is not None:
        table = with_results(
            table,
            list(measured.rows),
            events,
            config.results,
            columns=columns,
            partitions=partitions,
        )
    elif config.rule.optimise is Optimise.RESULTS:
        msg = "weighing settings by results needs the job's query"
        raise UsageError(msg)
    table = _mark(table, config.rule)
    chosen = table.filter(pl.col("recommended")).row(0, named=True)
    return Recommendation(
        policy=policy_of(chosen, policy),
        table=table,
        rule=config.rule,
        base=policy,
        keys=tuple(k for over in over_sets for k in over),
        late_values_s=tuple(sorted({int(v) for v in table["late_arrival_s"].drop_nulls()})),
        ooo_values_s=tuple(sorted({int(v) for v in table["out_of_order_s"]})),
        skipped=tuple(measured.skipped),
        unsaveable=lost,
        senders=senders,
    )
