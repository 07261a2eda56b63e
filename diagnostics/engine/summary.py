"""A replay's summary: counts by outcome and release-delay percentiles, as data and as text."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import Any, Protocol

import numpy as np
import polars as pl

from diagnostics.captures.far_off import FarOffTimes, far_off_mask, far_off_times
from diagnostics.durations import format_duration
from diagnostics.engine.columns import OUTCOME_COLUMNS
from diagnostics.engine.policy import OrderingPolicy
from diagnostics.engine.replay import ReplayResult
from diagnostics.scalars import as_datetime, as_int
from diagnostics.timestamps import ACCEPTED_FORMATS
from diagnostics.words import noun

_PERCENTILES = (("p50", 0.50), ("p95", 0.95), ("p99", 0.99), ("max", 1.0))


def count_columns(out: pl.DataFrame) -> dict[str, int]:
    """The summary's counts of an outcomes frame (or of any slice of one: they add up)."""
    counts = out.select(
        pl.len().alias("events"),
        (pl.col("status") == "accepted").sum().alias("accepted"),
        pl.col("reordered").sum().alias("reordered_within_tolerance"),
        (pl.col("status") == "adjusted").sum().alias("adjusted"),
        (pl.col("late") & ~pl.col("dropped")).sum().alias("adjusted_late"),
        (pl.col("out_of_order") & ~pl.col("dropped")).sum().alias("adjusted_out_of_order"),
        pl.col("dropped").sum().alias("dropped"),
        pl.col("early").sum().alias("dropped_early"),
        (pl.col("late") & pl.col("dropped")).sum().alias("dropped_late"),
        (pl.col("out_of_order") & pl.col("dropped") & ~pl.col("late"))
        .sum()
        .alias("dropped_out_of_order"),
        pl.col("invalid_timestamp").sum().alias("dropped_invalid_timestamp"),
        pl.col("invalid_key").sum().alias("dropped_invalid_key"),
        pl.col("release_time").is_not_null().sum().alias("released"),
        (~pl.col("dropped") & pl.col("release_time").is_null()).sum().alias("never_released"),
    ).row(0, named=True)
    return {k: int(v) for k, v in counts.items()}


def percentile_ranks(n: int) -> list[int]:
    """For ``n`` sorted release delays, the position of each summary percentile (numpy's
    ``quantile(..., method="higher")``, so that it can be picked from a sorted table)."""
    if n <= 0:
        return []
    return [min(int(np.ceil((n - 1) * q)), n - 1) for _, q in _PERCENTILES]


def delay_seconds(values: list[int]) -> dict[str, float | None]:
    """The percentiles' delays (ns, as :func:`percentile_ranks` picked them) in seconds."""
    return {
        name: (None if not values else round(float(values[i]) / 1e9, 3))
        for i, (name, _) in enumerate(_PERCENTILES)
    }


def summary_of(
    policy: OrderingPolicy,
    partitions: Sequence[int],
    *,
    timelines: int,
    counts: dict[str, int],
    delays: dict[str, float | None],
    arrival_from: str | None,
    arrival_to: str | None,
    warnings: Sequence[str] = (),
) -> dict[str, Any]:
    """The summary from its parts (the local replay's and the Spark replay's); ``warnings``:
    lines the user should read (most application times invalid)."""
    return {
        "policy": policy.describe(),
        "late_arrival": format_duration(policy.late_arrival_ns),
        "out_of_order": format_duration(policy.out_of_order_ns),
        "action": policy.action.value,
        "partitions": list(partitions),
        "timelines": timelines,
        "counts": counts,
        "release_delay_seconds": delays,
        "arrival_from": arrival_from,
        "arrival_to": arrival_to,
        "warnings": list(warnings),
    }


def events_with_data_errors(outcomes: pl.DataFrame) -> int:
    """Events the job adjusted or dropped (late, out of order, early, invalid): each once,
    an event both late and out of order included. The one definition the command line's
    replay summary (adjusted + dropped) and the app's "Events with data errors" share."""
    return int((outcomes.get_column("status") != "accepted").sum())


def delay_percentiles(out: pl.DataFrame) -> dict[str, float | None]:
    """Release time − arrival percentiles in seconds, of the released events of an outcomes
    frame: the release delay of an ASA replay (until the watermark releases the event to the
    query), the emission delay of a replay under Flink's or Spark's rules (until the window
    holding the event is emitted)."""
    # Series arithmetic: a frame-level select over columns chunked differently would
    # re-chunk the whole outcomes frame first.
    delay = (
        (out.get_column("release_time") - out.get_column("arrival"))
        .dt.total_nanoseconds()
        .drop_nulls()
        .to_numpy()
    )
    ranks = percentile_ranks(len(delay))
    picked = np.partition(delay, ranks)[ranks].tolist() if ranks else []
    return delay_seconds(picked)


class MoreInputs(Protocol):
    """The input columns a replay's outcomes lack that may name senders (:attr:`names`),
    read row for row with them (a capture's columns kept out of memory:
    ``diagnostics.captures.reader.Capture.more_inputs``)."""

    @property
    def names(self) -> tuple[str, ...]:
        """The columns' names."""
        ...

    def __call__(self, names: Sequence[str] | None = None) -> pl.DataFrame:
        """All of them, or ``names``."""
        ...

    def remember(self, key: dict[str, object], compute: Callable[[], str | None]) -> str | None:
        """``compute()``, kept with the capture's files for ``key`` (it depends on nothing
        else) and read from there next time."""
        ...


def summarize(result: ReplayResult, more_inputs: MoreInputs | None = None) -> dict[str, Any]:
    """Counts by outcome and release delay (release time − arrival, seconds) of a replay;
    ``far_off_application_times`` when some are far off the others (:func:`far_off_of`;
    ``more_inputs``: read only then, to name their senders)."""
    out = result.outcomes
    arrival = out["arrival"]
    warning = invalid_time_warning(result)
    far, fate = far_off_of(out, result.policy, more_inputs)
    summary = summary_of(
        result.policy,
        result.partitions,
        timelines=_distinct(out["timeline"]),
        counts=count_columns(out),
        delays=delay_percentiles(out),
        arrival_from=None if out.is_empty() else as_datetime(arrival.min()).isoformat(),
        arrival_to=None if out.is_empty() else as_datetime(arrival.max()).isoformat(),
        warnings=[*([] if warning is None else [warning]), *(far.lines(fate) if far else ())],
    )
    if far is not None:
        summary["far_off_application_times"] = {**far.to_dict(), "fate": fate}
    return summary


def sender_column(out: pl.DataFrame, policy: OrderingPolicy) -> str | None:
    """The column naming the events' senders, to name the senders of a few events: the first
    OVER key, else the capture's sender column by the one rule
    (:func:`diagnostics.whatif.senders.choose_senders`, on the replay's lateness)."""
    from diagnostics.whatif.senders import choose_senders, lateness_seconds

    if policy.over and policy.over[0] in out.columns:
        return policy.over[0]
    inputs = [c for c in out.columns if c not in OUTCOME_COLUMNS]
    lateness = lateness_seconds(out["arrival"], out["application_time"])
    exclude = (policy.timestamp_by or "", "partition")
    return choose_senders(out.select(inputs), lateness, exclude, out["partition"]).column


def far_off_of(
    out: pl.DataFrame, policy: OrderingPolicy, more_inputs: MoreInputs | None = None
) -> tuple[FarOffTimes | None, str]:
    """The far-off application times of a replay's outcomes, named by the TIMESTAMP BY
    column with their values as written and their senders, and what became of them
    (``more_inputs``: input columns the outcomes lack, read only when some time is far off)."""
    _, far, fate = far_off_events(out, policy, more_inputs)
    return far, fate


def far_off_events(
    out: pl.DataFrame, policy: OrderingPolicy, more_inputs: MoreInputs | None = None
) -> tuple[np.ndarray, FarOffTimes | None, str]:
    """:func:`far_off_of` and which events (a mask over ``out``) are far off."""
    column = policy.timestamp_by
    if column is None or out.is_empty():
        return np.zeros(out.height, dtype=bool), None, ""
    frame = out
    valid = out.get_column("application_time").dt.epoch("ns").drop_nulls().to_numpy()
    judged = far_off_mask(valid.astype(np.int64)) if valid.size else None
    named: str | Callable[[], str | None] | None = partial(sender_column, out, policy)
    if more_inputs is not None and judged is not None and judged[0].any():
        if policy.over and policy.over[0] in out.columns:
            named = policy.over[0]
        else:
            # the sender column depends on the capture's columns and application times
            # alone (not on the tolerances): kept with the capture's files
            key = {
                "far_off_senders": SENDER_RULE,
                "timestamp_by": column,
                "inputs": [c for c in out.columns if c not in OUTCOME_COLUMNS],
                "more": list(more_inputs.names),
            }

            def choose() -> str | None:
                return sender_column(_with(out, more_inputs()), policy)

            named = more_inputs.remember(key, choose)
            if named is not None and named not in (*out.columns, *more_inputs.names):
                named = choose()  # a kept answer naming no column here (a file edited)
            if named is not None and named not in out.columns:
                frame = _with(out, more_inputs([named]))
    mask, far = far_off_times(
        frame,
        column if column in frame.columns else "application_time",
        frame.get_column("application_time"),
        named,
        judged,
    )
    if far is None:
        return mask, None, ""
    return mask, far, fate_of(out.filter(pl.Series(mask)))


#: The sender rule's edition in the key of the sender column a capture's cache keeps
#: (:func:`far_off_events`): raise it when ``diagnostics.whatif.senders`` chooses otherwise,
#: so that no answer kept by an earlier rule is read.
SENDER_RULE = 1


def _with(out: pl.DataFrame, more: pl.DataFrame) -> pl.DataFrame:
    """``out`` with the columns of ``more`` it lacks (row for row)."""
    return out.hstack(more.select([c for c in more.columns if c not in out.columns]))


def fate_of(events: pl.DataFrame) -> str:
    """What the replay did to ``events`` (a slice of an outcome frame), in ASA's words:
    ``dropped as early (EarlyInputEvent)``, ``3 dropped as early ..., 2 adjusted as late``."""
    c = count_columns(events)
    parts = [
        (c["dropped_early"], "dropped as early (EarlyInputEvent)"),
        (c["dropped_late"], "dropped as late (LateInputEvent)"),
        (c["adjusted_late"], "adjusted as late (LateInputEvent)"),
        (c["dropped_out_of_order"], "dropped as out of order (OutOfOrderEvent)"),
        (c["accepted"], "accepted"),
    ]
    said = [(n, what) for n, what in parts if n]
    if len(said) == 1:
        return said[0][1]
    return ", ".join(f"{n:,} {what}" for n, what in said)


def invalid_time_warning(result: ReplayResult) -> str | None:
    """One line when most events have an invalid application time (a format ASA does not
    read, e.g. ``06/03/2024 08:00:01 AM``): how many, an example value, the accepted forms.
    ``None`` otherwise (a few invalid times are data, counted as ``InvalidInputTimeStamp``)."""
    out, column = result.outcomes, result.policy.timestamp_by
    if column is None or out.is_empty():
        return None
    invalid = out.get_column("invalid_timestamp").fill_null(False)
    bad, total = int(invalid.sum()), out.height
    if bad * 2 <= total:
        return None
    values = out.get_column(column).filter(invalid) if column in out.columns else None
    present = None if values is None else values.drop_nulls()
    first = None if present is None or present.is_empty() else present[0]
    return invalid_time_line(bad, total, column, first)


#: How the ASA replay names an invalid time's column and what becomes of the event.
ASA_INVALID_TIME = (
    "application time: TIMESTAMP BY ",
    "not a time ASA reads (InvalidInputTimeStamp: dropped)",
)


def invalid_time_line(
    bad: int,
    total: int,
    column: str,
    first: object | None,
    wording: tuple[str, str] = ASA_INVALID_TIME,
) -> str | None:
    """The warning of :func:`invalid_time_warning` from its parts: ``bad`` invalid
    application times of ``total`` events, ``first`` the first invalid value that is not
    null (input order); ``None`` when at most half are invalid. ``wording``: what precedes
    the column's name and what the values are (another engine's rules say it in theirs)."""
    if bad * 2 <= total:
        return None
    example = "empty values" if first is None else f"values such as '{str(first)[:60]}'"
    lead, verdict = wording
    return (
        f"{bad:,} of {total:,} {noun(total, 'event')} have no valid {lead}{column} holds "
        f"{example}, {verdict}; accepted: {ACCEPTED_FORMATS}"
    )


def _distinct(ids: pl.Series) -> int:
    """How many distinct non-null ids (timeline ids are small non-negative integers)."""
    values = ids.drop_nulls()
    if values.is_empty():
        return 0
    if as_int(values.min()) >= 0 and as_int(values.max()) < 2**24:
        return int(np.count_nonzero(np.bincount(values.to_numpy())))
    return values.n_unique()


def percent(part: int, whole: int) -> str:
    """``part`` of ``whole`` as ``12.34%`` (``-`` of nothing), as the summaries print it."""
    return f"{100 * part / whole:.2f}%" if whole else "-"


def format_summary(summary: dict[str, Any]) -> str:
    """The summary as a short human-readable report."""
    c = summary["counts"]
    n = c["events"]
    d = summary["release_delay_seconds"]
    lines = [
        f"policy      {summary['policy']}",
        f"partitions  {len(summary['partitions'])} "
        f"({summary['timelines']} {noun(summary['timelines'], 'timeline')})",
        f"arrivals    {summary['arrival_from']} .. {summary['arrival_to']}",
        f"events      {n:,}",
        f"  accepted as is          {c['accepted']:>12,}  {percent(c['accepted'], n):>8}"
        f"   (of which reordered within tolerance: {c['reordered_within_tolerance']:,})",
        f"  adjusted                {c['adjusted']:>12,}  {percent(c['adjusted'], n):>8}"
        f"   (late {c['adjusted_late']:,}, out of order {c['adjusted_out_of_order']:,})",
        f"  dropped                 {c['dropped']:>12,}  {percent(c['dropped'], n):>8}"
        f"   (early {c['dropped_early']:,}, late {c['dropped_late']:,}, out of order "
        f"{c['dropped_out_of_order']:,}, invalid timestamp {c['dropped_invalid_timestamp']:,}, "
        f"missing key {c['dropped_invalid_key']:,})",
        f"  never released          {c['never_released']:>12,}  {percent(c['never_released'], n):>8}",
    ]
    lines += [f"warning     {w}" for w in summary.get("warnings", [])]
    if d["max"] is not None:
        lines.append(
            "release delay (release - arrival): "
            f"p50 {d['p50']}s  p95 {d['p95']}s  p99 {d['p99']}s  max {d['max']}s"
        )
    return "\n".join(lines)
