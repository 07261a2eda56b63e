"""The outcome flags and status of S3's rows packed into one ``flags`` column
(docs/spark-replay.md, S3): one 64-bit value an event instead of seven booleans and a string,
so S3's output, its cache and S7's shuffle carry a third of the fields (Spark's rows give
every field eight bytes, and each field costs a conversion to and from Arrow).

Bit ``i`` of ``flags`` is the ``i``-th name of ``FLAG_COLUMNS`` (engine/columns.py); the
bits from :data:`STATUS_SHIFT` up hold the ``status``, as the index the engine's Enum gives
it (``STATUS_VALUES``, engine/outcomes.py). :func:`pack` and :func:`unpack` run in the
tasks (polars); :func:`with_flags` gives Spark stages the flags as the boolean columns
they read.
Packing is lossless: ``unpack(pack(x)) == x`` (tests/spark/test_replay_flags.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import polars as pl

from diagnostics.engine.columns import FLAG_COLUMNS
from diagnostics.engine.outcomes import STATUS_VALUES

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

#: The status code's lowest bit.
STATUS_SHIFT = 8


def pack(frame: pl.DataFrame) -> pl.Series:
    """``flags`` (Int64) of a frame with the boolean columns of :data:`FLAG_COLUMNS` (no nulls)
    and ``status`` (the engine's Enum)."""
    code = frame["status"].to_physical().cast(pl.Int64) * (1 << STATUS_SHIFT)
    bits = [frame[name].cast(pl.Int64) * (1 << i) for i, name in enumerate(FLAG_COLUMNS)]
    return pl.DataFrame([code, *bits]).sum_horizontal().alias("flags")


def unpack(flags: pl.Series) -> dict[str, pl.Series]:
    """The columns of :data:`FLAG_COLUMNS` (Boolean) and ``status`` (the engine's Enum) of
    packed ``flags``."""
    columns = {
        name: ((flags // (1 << i)) % 2 == 1).alias(name) for i, name in enumerate(FLAG_COLUMNS)
    }
    codes = (flags // (1 << STATUS_SHIFT)).cast(pl.UInt32)
    columns["status"] = STATUS_VALUES.gather(codes).alias("status")
    return columns


def with_flags(events: DataFrame) -> DataFrame:
    """``events`` with the columns of :data:`FLAG_COLUMNS` (boolean) computed from ``flags``,
    and ``rise`` (the event raised its timeline's M: ``m_after`` is set only then), for the
    stages that filter on them (S4/S5, S8)."""
    from pyspark.sql import functions as F

    flags = F.col("flags")
    bits = {name: (flags.bitwiseAND(F.lit(1 << i)) != 0) for i, name in enumerate(FLAG_COLUMNS)}
    return events.withColumns({**bits, "rise": F.col("m_after").isNotNull()})
