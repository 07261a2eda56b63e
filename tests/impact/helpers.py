"""Outcome frames built by hand: each event's application time and System.Timestamp."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import polars as pl

from diagnostics.timestamps import UTC_NS

T0 = datetime(2024, 1, 1, tzinfo=UTC)


def at(seconds: float) -> datetime:
    """``T0`` + ``seconds``."""
    return T0 + timedelta(seconds=seconds)


def outcomes(rows: list[dict]) -> pl.DataFrame:
    """An outcome frame: each row gives ``app`` (seconds after T0), optional ``sys``
    (default: ``app``; None: dropped), ``release`` (default: sys + 1 s) and any flags or
    input columns (``device``, ``value``)."""
    built = []
    for i, row in enumerate(rows):
        app = row["app"]
        sys_ = row.get("sys", app)
        release = row.get("release", None if sys_ is None else sys_ + 1)
        built.append(
            {
                "device": row.get("device", "a"),
                "value": float(row.get("value", 1.0)),
                "event_id": i,
                "application_time": None if app is None else at(app),
                "system_timestamp": None if sys_ is None else at(sys_),
                "release_time": None if release is None else at(release),
                "late": row.get("late", False),
                "early": row.get("early", False),
                "out_of_order": row.get("out_of_order", False),
                "dropped": sys_ is None,
                "invalid_timestamp": row.get("invalid_timestamp", app is None),
                "invalid_key": False,
                "timeline": row.get("timeline", 0),
            }
        )
    frame = pl.DataFrame(built)
    return frame.with_columns(
        pl.col("application_time", "system_timestamp", "release_time").cast(UTC_NS),
        pl.col("event_id").cast(pl.Int64),
    )
