"""Evidence from an event capture: replay it under the job's policy, then read exact
distributions (lateness of every late or early event, disorder of every out-of-order event),
per-partition counts, silent stretches per partition, and the per-key OVER analysis."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import polars as pl

from diagnostics.captures.far_off import FarOffTimes
from diagnostics.durations import MINUTE
from diagnostics.engine.columns import EventColumns
from diagnostics.engine.policy import OrderingPolicy
from diagnostics.engine.replay import ReplayResult, replay
from diagnostics.engine.summary import far_off_events, summarize
from diagnostics.errors import InputError, Setting
from diagnostics.explain.evidence import Evidence
from diagnostics.explain.invalid_times import INVALID_DATA, invalid_breakdown, unreadable_bodies
from diagnostics.explain.keys import analyse_keys
from diagnostics.explain.kind_stats import KindStats, minute_rates
from diagnostics.explain.sender_groups import grouped_senders, sender_groups
from diagnostics.kinds import ErrorKind
from diagnostics.scalars import as_int
from diagnostics.whatif.replays import Replays
from diagnostics.whatif.senders import choose_senders, lateness_seconds

#: A partition without events for this long counts as idle (ASA's notice interval; docs/semantics.md, "Diagnostics ASA writes").
IDLE_NS = 5 * MINUTE

_FLAGS = {
    ErrorKind.LATE: "late",
    ErrorKind.EARLY: "early",
    ErrorKind.OUT_OF_ORDER: "out_of_order",
    ErrorKind.INVALID_TIMESTAMP: "invalid_timestamp",
    ErrorKind.INVALID_KEY: "invalid_key",
}


def _stats(
    out: pl.DataFrame,
    mask: pl.Series,
    values: pl.Series,
    key: str | None,
    far: tuple[np.ndarray, FarOffTimes] | None = None,
) -> KindStats:
    """The stats of the events of ``mask``; ``far``: the events whose application time is far
    off the others and what to say of them, left out of the kind's values and named apart."""
    chosen = out.filter(mask)
    per_part = chosen.group_by("partition").len().sort("partition")
    far_off = None
    if far is not None and (far[0] & mask.to_numpy()).any():
        apart = far[0] & mask.to_numpy()
        far_off = {**far[1].to_dict(), "events": int(apart.sum())}
        values = values.set(pl.Series(apart), None)
    vals = values.filter(mask).drop_nulls().to_numpy().astype(np.float64)
    keys: dict[str, int] = {}
    if key is not None and chosen.height:
        top = chosen.group_by(key).len().sort(["len", key], descending=[True, False]).head(10)
        keys = {str(k): int(n) for k, n in zip(top[key], top["len"], strict=True)}
    minutes = chosen.group_by(pl.col("arrival").dt.truncate("1m").alias("m")).len()
    return KindStats(
        events=chosen.height,
        partitions={
            int(p): int(n) for p, n in zip(per_part["partition"], per_part["len"], strict=True)
        },
        lateness=vals,
        weights=np.ones(vals.size),
        exact=True,
        keys=keys,
        per_minute=minute_rates(minutes["len"]),
        by_minute={
            int(m): int(n) for m, n in zip(minutes["m"].dt.epoch("s"), minutes["len"], strict=True)
        },
        far_off=far_off,
    )


def _idle(out: pl.DataFrame, partitions: Sequence[int]) -> list[dict]:
    """Silent stretches ≥ 5 min per partition, between the capture's first and last arrival."""
    arrivals = out.select("partition", pl.col("arrival").dt.epoch("ns").alias("a")).sort(
        "partition", "a"
    )
    if arrivals.is_empty():
        return []
    start, end = as_int(arrivals["a"].min()), as_int(arrivals["a"].max())
    episodes = []
    for p in partitions:
        times = arrivals.filter(pl.col("partition") == p)["a"].to_numpy()
        edges = np.concatenate([[start], times, [end]])
        gaps = np.diff(edges)
        for i in np.flatnonzero(gaps >= IDLE_NS):
            a, b = int(edges[i]), int(edges[i + 1])
            episodes.append(
                {
                    "partition_id": int(p),
                    "start": pl.Series([a]).cast(pl.Datetime("ns", "UTC"))[0].isoformat(),
                    "end": pl.Series([b]).cast(pl.Datetime("ns", "UTC"))[0].isoformat(),
                    "minutes": round((b - a) / MINUTE, 1),
                    "notices": int((b - a) // IDLE_NS),
                }
            )
    return episodes


@dataclass(frozen=True)
class Replayed:
    """A finished replay as the evidence reads it: the outcome frame (every event, in input
    order), the partitions and the replay summary (``engine.summary``'s dict)."""

    outcomes: pl.DataFrame
    partitions: tuple[int, ...]
    summary: dict[str, Any]

    @classmethod
    def of(cls, result: ReplayResult) -> Replayed:
        """The local replay's result."""
        return cls(result.outcomes, tuple(result.partitions), summarize(result))


def from_capture(
    events: pl.DataFrame,
    policy: OrderingPolicy,
    *,
    columns: EventColumns | None = None,
    partitions: Sequence[int] | None = None,
    replayed: Replayed | None = None,
    replays: Replays | None = None,
    held_null: Callable[[], pl.Series | None] | None = None,
) -> Evidence:
    """Exact evidence from ``events`` replayed under ``policy`` (needs ``TIMESTAMP BY``);
    ``replayed``: that replay already made elsewhere (``explain --spark``), else run here
    (by ``replays``, which keeps it for the rest of the command, when given);
    ``held_null()``: which events hold the TIMESTAMP BY field as null rather than not at all
    (:meth:`diagnostics.captures.reader.Capture.null_values`)."""
    if policy.timestamp_by is None:
        msg = "an event capture needs a TIMESTAMP BY column: without TIMESTAMP BY no ordering rule applies"
        raise InputError(msg, Setting.TIMESTAMP_BY)
    if policy.timestamp_by not in events.columns:
        msg = f"TIMESTAMP BY column '{policy.timestamp_by}' is missing (columns: {', '.join(events.columns)})"
        raise InputError(msg, Setting.TIMESTAMP_BY)
    columns = columns or EventColumns()
    if replayed is None and replays is not None:
        replayed = Replayed.of(replays.result(policy))
    elif replayed is None:
        replayed = Replayed.of(replay(events, policy, partitions=partitions, columns=columns))
    out = replayed.outcomes
    arrival_ns = out["arrival"].dt.epoch("ns")
    app_ns = out["application_time"].dt.epoch("ns")
    lateness = lateness_seconds(out["arrival"], out["application_time"])
    exclude = {
        policy.timestamp_by,
        columns.arrival,
        columns.partition or "",
        *(c for c in out.columns if c not in events.columns),
    }
    senders = choose_senders(events, lateness, exclude, out["partition"])
    candidates = list(senders.over_columns)
    valid = ~(out["early"] | out["invalid_timestamp"] | out["invalid_key"])
    # rule 4 compares the late-adjusted time (docs/semantics.md, "The rules, as implemented"): max(application, arrival − late)
    late_ns = policy.late_arrival_ns
    checked = app_ns
    if late_ns is not None:
        checked = pl.select(pl.max_horizontal(app_ns, arrival_ns - late_ns)).to_series()
    work = (
        out.select("partition", *candidates, "event_id")
        .with_columns(checked.set(~valid, None).alias("t"), arrival_ns.alias("a"))
        .sort("partition", "a", "event_id")
    )
    ooo_s = policy.effective_ooo_ns / 1e9
    across, keys = analyse_keys(work, candidates, ooo_s)
    disorder = pl.DataFrame({"event_id": work["event_id"], "d": across}).sort("event_id")["d"]
    key = senders.column
    mask, far, _ = far_off_events(out, policy)
    apart = None if far is None else (mask, far)
    # bodies the input cannot read are InputDeserializerError.InvalidData, never invalid times
    unreadable = unreadable_bodies(out, policy.timestamp_by)
    flags = {kind: out[flag] for kind, flag in _FLAGS.items()}
    flags[ErrorKind.INVALID_TIMESTAMP] = flags[ErrorKind.INVALID_TIMESTAMP] & ~unreadable
    groups = () if key is None else sender_groups(out, key, lateness, exclude)
    ungrouped = {}
    if groups and key is not None:  # the late (early) events no late (early) group names
        for kind in (ErrorKind.LATE, ErrorKind.EARLY):
            named = grouped_senders(groups, early=kind is ErrorKind.EARLY)
            rest = ~out[key].cast(pl.String).is_in(named).fill_null(False)
            kept = rest.to_numpy()
            ungrouped[kind.value] = _stats(
                out.filter(rest),
                flags[kind].filter(rest),
                lateness.filter(rest),
                key,
                None if far is None else (mask[kept], far),
            )
    kinds = {
        kind.value: _stats(
            out,
            flags[kind],
            disorder if kind is ErrorKind.OUT_OF_ORDER else lateness,
            key,
            apart if kind in (ErrorKind.LATE, ErrorKind.EARLY) else None,
        )
        for kind in _FLAGS
    }
    invalid = ErrorKind.INVALID_TIMESTAMP.value
    kinds[invalid] = replace(
        kinds[invalid],
        breakdown=invalid_breakdown(
            out, flags[ErrorKind.INVALID_TIMESTAMP], policy.timestamp_by, key, held_null
        ),
    )
    if unreadable.any():
        kinds[INVALID_DATA] = _stats(out, unreadable, lateness, key)
    counts = out.group_by("partition").len()
    per_part = {int(p): 0 for p in replayed.partitions}
    per_part.update(
        {int(p): int(n) for p, n in zip(counts["partition"], counts["len"], strict=True)}
    )
    summary = replayed.summary
    return Evidence(
        sources=("capture",),
        policy=policy,
        total_events=out.height,
        kinds=kinds,
        idle=_idle(out, replayed.partitions),
        idle_source="capture",
        partition_events=dict(sorted(per_part.items())),
        release_delay=summary["release_delay_seconds"],
        arrival_lateness=lateness.filter(valid & ~pl.Series(mask)).drop_nulls().to_numpy(),
        disorder=across.drop_nulls().to_numpy(),
        key_analysis=keys,
        key_column=key,
        senders=senders,
        sender_groups=groups,
        ungrouped=ungrouped,
        late_ooo_overlap=int((out["late"] & out["out_of_order"]).sum()),
        time_range={"from": summary["arrival_from"], "to": summary["arrival_to"]},
    )
