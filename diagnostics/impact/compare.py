"""The job's results as emitted beside the results had every event arrived on time.

As emitted: every event at its System.Timestamp after the ordering policy (adjusted late and
out-of-order events moved, dropped events missing). On time: every event at its own
application time, none dropped (events without a valid application time have no on-time
place). Each step's windows are compared by group keys and window end; each window says
which events moved in, moved out or went missing, and when the job emitted it.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum

import polars as pl

from diagnostics.errors import InputError
from diagnostics.impact.aggregate import (
    APP,
    SYS,
    Placement,
    key_names,
    placed,
    prepare,
    results,
    value_columns,
)
from diagnostics.impact.emitted import emitted_at
from diagnostics.impact.model import AggregateStep, WindowKind
from diagnostics.impact.windows import END, ID
from diagnostics.timestamps import UTC_NS

#: A relative difference below this is float rounding (sums taken in another order).
TOLERANCE = 1e-9


class Cause(StrEnum):
    """Why an event sits in another window as emitted than on time."""

    LATE = "late adjustments"
    OUT_OF_ORDER = "out-of-order adjustments"
    DROPS = "drops"
    EARLY = "early events"
    INVALID = "invalid times"
    OTHER = "reshaped by moved events"


class Presence(StrEnum):
    """Which results hold a window."""

    BOTH = "both"
    EMITTED_ONLY = "as emitted only"
    ON_TIME_ONLY = "on time only"


#: The columns of a step's comparison, in order.
COMPARED_COLUMNS = (
    "step",
    "window_start",
    "window_end",
    "keys",
    "aggregate",
    "value_as_emitted",
    "value_on_time",
    "absolute_difference",
    "relative_difference",
    "changed",
    "output",
    "events_moved_in",
    "events_moved_out",
    "events_missing",
    "emitted_at",
)
#: The columns of impact.parquet, in order: the comparison and each window's ``edge``
#: (:mod:`diagnostics.impact.edges`; null for an interior window).
IMPACT_COLUMNS = (*COMPARED_COLUMNS, "edge")


def cause_expr() -> pl.Expr:
    """The cause of an event's move, from its flags (the first that applies)."""
    return (
        pl.when(pl.col("early"))
        .then(pl.lit(Cause.EARLY.value))
        .when(pl.col("invalid_timestamp") | pl.col("invalid_key"))
        .then(pl.lit(Cause.INVALID.value))
        .when(pl.col("dropped"))
        .then(pl.lit(Cause.DROPS.value))
        .when(pl.col("late"))
        .then(pl.lit(Cause.LATE.value))
        .when(pl.col("out_of_order"))
        .then(pl.lit(Cause.OUT_OF_ORDER.value))
        .otherwise(pl.lit(Cause.OTHER.value))
    )


def keys_text(step: AggregateStep) -> pl.Expr:
    if not step.keys:
        return pl.lit("")
    parts = []
    for i, key in enumerate(step.key_labels()):
        if i:
            parts.append(pl.lit(", "))
        parts += [pl.lit(f"{key}="), pl.col(f"__k{i}").cast(pl.String).fill_null("NULL")]
    return pl.concat_str(parts)


_POLARS_ERRORS = (
    pl.exceptions.ComputeError,
    pl.exceptions.InvalidOperationError,
    pl.exceptions.SchemaError,
)


def _cannot(step: AggregateStep, exc: Exception) -> InputError:
    msg = f"query step {step.name}: cannot be evaluated on the capture ({str(exc).splitlines()[0]})"
    return InputError(msg)


def compare_step(
    outcomes: pl.DataFrame, step: AggregateStep, *, per_timeline: bool = False
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The step's windows compared (:data:`COMPARED_COLUMNS`) and its displaced
    (event, window) rows with their cause (``window_end``, ``keys``, ``cause``)."""
    keys = key_names(step)
    on = [*keys, END]
    pair_cols = [ID, *on]
    try:
        frame = prepare(outcomes, step).collect()
        # every (event, window) row of both sides, placed once and shared below
        e_all, o_all = pl.collect_all(
            [placed(frame.lazy(), step, SYS), placed(frame.lazy(), step, APP)]
        )
    except _POLARS_ERRORS as exc:
        raise _cannot(step, exc) from exc
    if step.window.kind in (WindowKind.TUMBLING, WindowKind.HOPPING):
        # an event's windows depend on its own time only: those of an event at the same
        # time on both sides are the same, so only the events the policy moved are compared
        still = (pl.col(SYS) == pl.col(APP)).fill_null(False)
        moved = frame.lazy().filter(~still)
        e_pairs = placed(moved, step, SYS).select(pair_cols)
        o_pairs = placed(moved, step, APP).select(pair_cols)
    else:  # sliding and session windows depend on the other events too
        e_pairs = e_all.lazy().select(pair_cols)
        o_pairs = o_all.lazy().select(pair_cols)
    flags = frame.lazy().select(
        ID, "late", "early", "out_of_order", "dropped", "invalid_timestamp", "invalid_key"
    )
    try:  # each side's results and the moves, computed once (the streaming engine would
        # compute a shared branch again for every plan that reads it)
        e_res, o_res, moved_in_df, gone_df = pl.collect_all(
            [
                results(e_all.lazy(), step),
                results(o_all.lazy(), step),
                e_pairs.join(o_pairs, on=[ID, END], how="anti"),
                o_pairs.join(e_pairs, on=[ID, END], how="anti").join(
                    flags.select(ID, "dropped"), on=ID, how="left"
                ),
            ]
        )
    except _POLARS_ERRORS as exc:
        raise _cannot(step, exc) from exc
    emitted = Placement(e_all.lazy(), e_res.lazy())
    on_time = Placement(o_all.lazy(), o_res.lazy())
    moved_in, gone = moved_in_df.lazy(), gone_df.lazy()
    counts = (
        pl.concat(
            [
                moved_in.select(
                    *on, pl.lit(1).alias("i"), pl.lit(0).alias("o"), pl.lit(0).alias("m")
                ),
                gone.select(
                    *on,
                    pl.lit(0).alias("i"),
                    (~pl.col("dropped")).cast(pl.Int32).alias("o"),
                    pl.col("dropped").cast(pl.Int32).alias("m"),
                ),
            ],
            how="vertical_relaxed",
        )
        .group_by(on)
        .agg(
            pl.col("i").sum().alias("events_moved_in"),
            pl.col("o").sum().alias("events_moved_out"),
            pl.col("m").sum().alias("events_missing"),
        )
    )
    release = emitted_at(outcomes, emitted.pairs, on, per_timeline=per_timeline)
    # per window (both sides side by side, which side has it, its moves and output time),
    # then one row per aggregate
    windows = (
        emitted.results.with_columns(pl.lit(True).alias("__e"))
        .join(
            on_time.results.with_columns(pl.lit(True).alias("__o")),
            on=on,
            how="full",
            coalesce=True,
            nulls_equal=True,
            suffix="__on",
        )
        .with_columns(
            pl.when(pl.col("__e").is_null())
            .then(pl.lit(Presence.ON_TIME_ONLY.value))
            .when(pl.col("__o").is_null())
            .then(pl.lit(Presence.EMITTED_ONLY.value))
            .otherwise(pl.lit(Presence.BOTH.value))
            .alias("output")
        )
        .join(counts, on=on, how="left", nulls_equal=True)
        .join(release, on=on, how="left", nulls_equal=True)
        .with_columns(
            pl.lit(step.name).alias("step"),
            keys_text(step).alias("keys"),
            _start(step).alias("window_start"),
            pl.col(END).cast(pl.Datetime("ns")).dt.replace_time_zone("UTC").alias("window_end"),
            pl.col("__release")
            .cast(pl.Datetime("ns"))
            .dt.replace_time_zone("UTC")
            .alias("emitted_at"),
            *(
                pl.col(c).fill_null(0).cast(pl.Int64)
                for c in ("events_moved_in", "events_moved_out", "events_missing")
            ),
        )
    )
    try:
        per_window = windows.collect()
    except _POLARS_ERRORS as exc:
        raise _cannot(step, exc) from exc
    shared = [c for c in COMPARED_COLUMNS if c in per_window.columns]
    rows = [
        per_window.lazy().select(
            *shared,
            pl.lit(agg.name).alias("aggregate"),
            pl.col(name).alias("value_as_emitted"),
            pl.col(f"{name}__on").alias("value_on_time"),
        )
        for agg, name in value_columns(step)
    ]
    table = pl.concat(rows)
    diff = (pl.col("value_as_emitted") - pl.col("value_on_time")).abs()
    both = pl.col("output") == Presence.BOTH.value
    relative = (
        pl.when(~both)
        .then(1.0)
        .otherwise(
            pl.when(pl.col("value_on_time") != 0)
            .then(diff / pl.col("value_on_time").abs())
            .when(diff.fill_null(0) == 0)
            .then(0.0)
        )
    )
    changed = ~both | (
        (pl.col("value_as_emitted").is_null() != pl.col("value_on_time").is_null())
        | (diff > TOLERANCE * pl.max_horizontal(pl.lit(1.0), pl.col("value_on_time").abs()))
    ).fill_null(False)
    table = table.with_columns(
        pl.when(both).then(diff).alias("absolute_difference"),
        relative.alias("relative_difference"),
        changed.alias("changed"),
    )
    displaced = (
        pl.concat([moved_in.select(*on, ID), gone.select(*on, ID)])
        .join(flags, on=ID, how="left")
        .select(*on, pl.col(ID).alias("event_id"), cause_expr().alias("cause"))
    )
    moves_lf = displaced.with_columns(
        pl.lit(step.name).alias("step"),
        keys_text(step).alias("keys"),
        pl.col(END).cast(pl.Datetime("ns")).dt.replace_time_zone("UTC").alias("window_end"),
    ).select("step", "window_end", "keys", "event_id", "cause")
    try:
        done, moves = pl.collect_all(
            [table.select(COMPARED_COLUMNS).sort(["window_end", "keys", "aggregate"]), moves_lf]
        )
    except _POLARS_ERRORS as exc:
        raise _cannot(step, exc) from exc
    return done, moves


def _start(step: AggregateStep) -> pl.Expr:
    """The window's start (null for a session window, which starts at its first event)."""
    if step.window.kind is WindowKind.SESSION:
        return pl.lit(None, dtype=UTC_NS)
    return (pl.col(END) - step.window.size).cast(pl.Datetime("ns")).dt.replace_time_zone("UTC")


def compare(
    outcomes: pl.DataFrame, steps: Sequence[AggregateStep], *, per_timeline: bool = False
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Every step's comparison (impact.parquet) and displaced events, concatenated
    (``per_timeline``: each timeline is released on its own watermark, see
    :mod:`diagnostics.impact.emitted`)."""
    tables, moves = [], []
    for step in steps:
        table, moved = compare_step(outcomes, step, per_timeline=per_timeline)
        tables.append(table)
        moves.append(moved)
    if not tables:
        return empty_table(), pl.DataFrame(
            schema={
                "step": pl.String,
                "window_end": UTC_NS,
                "keys": pl.String,
                "event_id": pl.Int64,
                "cause": pl.String,
            }
        )
    return pl.concat(tables), pl.concat(moves)


def empty_table() -> pl.DataFrame:
    """impact.parquet with no windows."""
    schema: dict[str, pl.DataType | type[pl.DataType]] = {
        "step": pl.String,
        "window_start": UTC_NS,
        "window_end": UTC_NS,
        "keys": pl.String,
        "aggregate": pl.String,
        "value_as_emitted": pl.Float64,
        "value_on_time": pl.Float64,
        "absolute_difference": pl.Float64,
        "relative_difference": pl.Float64,
        "changed": pl.Boolean,
        "output": pl.String,
        "events_moved_in": pl.Int64,
        "events_moved_out": pl.Int64,
        "events_missing": pl.Int64,
        "emitted_at": UTC_NS,
    }
    return pl.DataFrame(schema=schema)
