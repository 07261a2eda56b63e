"""Small generated captures and their replays under ASA's default policy."""

from __future__ import annotations

import polars as pl

from diagnostics.engine.policy import OrderingPolicy
from diagnostics.engine.replay import ReplayResult, declared_partitions, replay
from diagnostics.generate import GenerateConfig, generate

CONFIG = GenerateConfig(events=4_000, partitions=4, duration_ms=40 * 60_000, seed=11)


def replayed(scenario: str, config: GenerateConfig = CONFIG, **policy: object) -> ReplayResult:
    """Replay a capture under the default policy on ``event_time`` (overrides in ``policy``)."""
    frame = generate(scenario, config)
    settings = {"timestamp_by": "event_time", **policy}
    return replay(
        frame,
        OrderingPolicy(**settings),  # type: ignore[arg-type]
        partitions=declared_partitions(config.partitions),
    )


def flagged(result: ReplayResult, flag: str) -> pl.DataFrame:
    """The outcome rows with ``flag`` set."""
    return result.outcomes.filter(pl.col(flag))
