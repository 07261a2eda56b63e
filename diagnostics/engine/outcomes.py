"""The outcome columns the engine adds to every event (docs/schemas.md), built from the
classification arrays of one batch."""

from __future__ import annotations

import numpy as np
import polars as pl

from diagnostics.engine.release import POS
from diagnostics.kinds import EventStatus
from diagnostics.timestamps import UTC_NS, from_ns

STATUS_DTYPE = pl.Enum([s.value for s in EventStatus])
#: Every status, in the order of the Enum's physical codes (index i is code i).
STATUS_VALUES = pl.Series([s.value for s in EventStatus], dtype=STATUS_DTYPE)


def _status(dropped: np.ndarray, adjusted: np.ndarray) -> pl.Series:
    """The ``status`` column (an Enum of :class:`EventStatus`) from the two flags."""
    codes = np.where(dropped, 2, np.where(adjusted, 1, 0)).astype(np.uint32)
    return STATUS_VALUES.gather(pl.Series(codes)).alias("status")


def outcome_frame(
    height: int,
    first_id: int,
    partitions: tuple[int, ...],
    work: pl.DataFrame,
    order: np.ndarray,
    cls: dict,
) -> pl.DataFrame:
    """The outcome columns of a batch of ``height`` events, in the batch's given order.

    ``cls`` holds the classification arrays in processing order (``order`` maps processing
    position to batch row); ``work`` the batch's working columns in batch order.
    """
    identity = bool(np.all(order[1:] > order[:-1]))
    inverse = np.empty_like(order)
    inverse[order] = np.arange(len(order))

    def back(values: np.ndarray) -> np.ndarray:
        return values if identity else values[inverse]

    dropped = back(cls["dropped"])
    adjusted = back((cls["late"] | cls["ooo"]) & ~cls["dropped"])
    sys = pl.Series(back(cls["sys"]), dtype=pl.Int64)
    wm = pl.Series(back(cls["wm"]), dtype=pl.Int64)
    timeline = pl.Series(back(cls["tl"]), dtype=pl.Int64)
    part_values = np.asarray(partitions, dtype=np.int64)[work["__pidx"].to_numpy()]
    return pl.DataFrame(
        {
            "event_id": pl.Series(first_id + np.arange(height)),
            "partition": pl.Series(part_values, dtype=pl.Int64),
            "timeline": timeline.set(timeline < 0, None),
            "application_time": from_ns(work["__app"]),
            "arrival": from_ns(work["__arr"]),
            "system_timestamp": from_ns(sys.set(pl.Series(dropped), None)),
            "late": back(cls["late"]),
            "early": back(cls["early"]),
            "out_of_order": back(cls["ooo"]),
            "reordered": back(cls["reordered"]),
            "invalid_timestamp": back(cls["invalid_ts"]),
            "invalid_key": back(cls["invalid_key"]),
            "dropped": dropped,
            "status": _status(dropped, adjusted),
            "watermark": from_ns(wm.set(wm >= POS, None)),
            "release_time": pl.repeat(None, height, dtype=UTC_NS, eager=True),
            "output_rank": pl.repeat(None, height, dtype=pl.Int64, eager=True),
        }
    )


def empty_outcomes() -> pl.DataFrame:
    """The outcome columns of an empty batch."""
    schema: dict[str, pl.DataType | type[pl.DataType]] = {
        "event_id": pl.Int64,
        "partition": pl.Int64,
        "timeline": pl.Int64,
        "application_time": UTC_NS,
        "arrival": UTC_NS,
        "system_timestamp": UTC_NS,
        **dict.fromkeys(("late", "early", "out_of_order", "reordered"), pl.Boolean),
        **dict.fromkeys(("invalid_timestamp", "invalid_key", "dropped"), pl.Boolean),
        "status": STATUS_DTYPE,
        "watermark": UTC_NS,
        "release_time": UTC_NS,
        "output_rank": pl.Int64,
    }
    return pl.DataFrame(schema=schema)
