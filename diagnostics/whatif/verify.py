"""Replaying the recommended setting end to end (``replay``: parsing, batches, output order),
as a cross-check of the sweep's single-batch engine runs on the user's own data, at the cost
of one replay."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import polars as pl

from diagnostics.durations import SECOND
from diagnostics.engine.columns import EventColumns
from diagnostics.engine.policy import Action
from diagnostics.engine.replay import replay
from diagnostics.engine.summary import summarize
from diagnostics.whatif.sweep import SweepResult


def verify_recommended(
    result: SweepResult,
    events: pl.DataFrame,
    *,
    columns: EventColumns | None = None,
    partitions: Sequence[int] | None = None,
) -> dict[str, Any] | None:
    """The engine's counts and delays for the recommended row, and whether they agree
    (counts equal, delay percentiles within 1 ms). ``None`` for an empty sweep."""
    row = result.recommended
    if row is None:
        return None
    late = row["late_arrival_s"]
    policy = replace(
        result.policy,
        late_arrival_ns=None if late is None else round(late * SECOND),
        out_of_order_ns=round(row["out_of_order_s"] * SECOND),
        partition_by=row["partition_by"],
        over=tuple(c for c in row["over"].split(",") if c),
        action=Action(row["action"]) if row.get("action") else result.policy.action,
    )
    summary = summarize(replay(events, policy, partitions=partitions, columns=columns))
    counts, delay = summary["counts"], summary["release_delay_seconds"]

    def close(a: float | None, b: float | None) -> bool:
        if a is None or b is None:
            return a is None and b is None
        return abs(a - b) <= 1e-3

    agrees = (
        counts["adjusted"] == row["adjusted"]
        and counts["dropped"] == row["dropped"]
        and close(delay["p50"], row["delay_p50_s"])
        and close(delay["p95"], row["delay_p95_s"])
        and close(delay["max"], row["delay_max_s"])
    )
    return {
        "policy": policy.describe(),
        "adjusted": counts["adjusted"],
        "dropped": counts["dropped"],
        "delay_p50_s": delay["p50"],
        "delay_p95_s": delay["p95"],
        "delay_max_s": delay["max"],
        "agrees": agrees,
    }
