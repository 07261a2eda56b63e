"""What the engine hands back per batch: a staged batch awaiting its commit, a processed
batch, and the releases frame (``event_id``, ``release_time``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import polars as pl

from diagnostics.captures.names import rename_taken
from diagnostics.engine.release import Breakpoints, MergeSteps
from diagnostics.timestamps import from_ns


@dataclass(frozen=True, slots=True)
class BatchResult:
    """What one batch produced.

    ``outcomes``: the outcome columns of the batch's rows, in the order given
    (``release_time`` is null here; releases arrive in ``releases``). ``releases``: events
    (of this or earlier batches) whose release time became known, ``event_id`` and
    ``release_time``. ``events`` is the batch itself with the outcome columns added.
    """

    batch: pl.DataFrame
    outcomes: pl.DataFrame
    releases: pl.DataFrame

    @property
    def events(self) -> pl.DataFrame:
        """The batch's rows, input columns kept (one named like an outcome column as
        ``input_<name>``), outcome columns added."""
        return rename_taken(self.batch)[0].hstack(self.outcomes)


@dataclass(frozen=True, slots=True)
class StagedBatch:
    """A classified batch waiting for :meth:`OrderingEngine.commit`: its outcome columns, its
    accepted events, and snapshots of the state the release search needs."""

    seq: int
    build_outcomes: Callable[[], pl.DataFrame]
    ids: np.ndarray
    t: np.ndarray
    arr: np.ndarray
    tl: np.ndarray
    m_before: np.ndarray
    first_arrival: np.ndarray
    tau: int
    points: Breakpoints
    build_steps: Callable[[], MergeSteps] | None
    built: list[pl.DataFrame] = field(default_factory=list)

    @property
    def outcomes(self) -> pl.DataFrame:
        """The batch's outcome columns, in batch order (built on first use, which may be in
        another thread than the one that staged the batch)."""
        if not self.built:
            self.built.append(self.build_outcomes())
        return self.built[0]


def releases_frame(ids: np.ndarray, times: np.ndarray) -> pl.DataFrame:
    """Released events: ``event_id`` and ``release_time`` (UTC)."""
    return pl.DataFrame(
        {
            "event_id": pl.Series(ids, dtype=pl.Int64),
            "release_time": from_ns(pl.Series(times, dtype=pl.Int64)),
        }
    )
