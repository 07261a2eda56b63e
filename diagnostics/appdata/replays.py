"""The loaded capture's replays, for the Findings and What-if pages.

Loading a capture replays it under the job's policy and keeps the outcomes in the folder
(``capture/outcomes.parquet``). The explainer, the recommender and the corrected job start
from that same replay: :func:`loaded_replays` hands it to a
:class:`~diagnostics.whatif.replays.Replays`, which the pages keep per loaded folder, so
that the explainer does not replay the capture again, the corrected job reuses the
explainer's replays and measured settings, and the What-if page's recommendation the
settings the Findings page measured (or the other way round).
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from diagnostics.appdata.build import capture_context
from diagnostics.engine.columns import OUTCOME_COLUMNS
from diagnostics.engine.outcomes_files import part_files, read_outcomes
from diagnostics.engine.replay import ReplayResult
from diagnostics.whatif.replays import Replays

#: Replays the app keeps besides the load's while a fix is measured (a step and the same
#: step with PARTITION BY; :meth:`Replays.forget` lets them go once it is).
KEEP = 2


def loaded_replays(
    agg_dir: Path, events: pl.DataFrame, outcomes: pl.DataFrame | None = None
) -> Replays | None:
    """The replays of the folder's capture (``events``: its ``events.parquet``), the load's
    own replay among them (``outcomes``: its ``outcomes.parquet``, when it holds one row
    per event with the events' columns then the engine's); ``None`` without a capture."""
    ctx = capture_context(agg_dir)
    if ctx is None:
        return None
    partitions = ctx.partitions or None
    replays = Replays(events, columns=ctx.settings.columns, partitions=partitions, keep=KEEP)
    if outcomes is not None and _is_replay_of(outcomes, events):
        result = ReplayResult(
            outcomes=outcomes,
            policy=ctx.settings.policy,
            partitions=ctx.partitions,
            columns=ctx.settings.columns,
        )
        replays.put(ctx.settings.policy, result)
    return replays


def loaded_outcomes(agg_dir: Path, events: pl.DataFrame) -> pl.DataFrame:
    """The load's outcomes (``capture/outcomes.parquet``) with ``events`` (its
    ``events.parquet``): the load wrote both from one frame, row for row, so when the file
    holds the events' columns (the same types) then the engine's, only the engine's are
    read and put beside ``events`` (their columns are shared, not held twice: 0.57 GB at
    2M events); any other file is read whole."""
    ctx = capture_context(agg_dir)
    assert ctx is not None
    path = ctx.outcomes_path
    parts = part_files(path) if path.exists() else []
    if parts:
        schema = pl.read_parquet_schema(parts[0])
        if list(schema) == [*events.columns, *OUTCOME_COLUMNS] and all(
            schema[name] == dtype for name, dtype in events.schema.items()
        ):
            engine = read_outcomes(path, OUTCOME_COLUMNS)
            if engine.height == events.height:
                return events.hstack(engine)
    return read_outcomes(path)


def _is_replay_of(outcomes: pl.DataFrame, events: pl.DataFrame) -> bool:
    """Whether ``outcomes`` reads as the engine's replay of ``events`` (the events' columns,
    then the engine's, one row per event); otherwise the capture is replayed again."""
    return (
        outcomes.height == events.height
        and outcomes.columns == [*events.columns, *OUTCOME_COLUMNS]
        and outcomes.select(events.columns).schema == events.schema
    )
