"""The run's correlation ID: a UUID derived from the input and the policy, never random.

The same events (arrival, application time, partition, in input order) under the same policy
text always give the same ID, so that replays repeat byte for byte.
"""

from __future__ import annotations

import hashlib
import uuid

import numpy as np
import polars as pl

_NULL = np.iinfo(np.int64).min


def _column_bytes(outcomes: pl.DataFrame, name: str) -> memoryview:
    series = outcomes.get_column(name)
    if series.dtype.is_temporal():
        series = series.dt.cast_time_unit("ns").dt.epoch("ns")
    values = series.cast(pl.Int64).fill_null(_NULL).to_numpy()
    return np.ascontiguousarray(values, dtype="<i8").data.cast("B")


def input_digest(outcomes: pl.DataFrame) -> str:
    """SHA-256 (hex) of the events' arrival, application time and partition, in row order."""
    digest = hashlib.sha256()
    digest.update(str(outcomes.height).encode())
    for name in ("arrival", "application_time", "partition"):
        digest.update(name.encode())
        digest.update(_column_bytes(outcomes, name))
    return digest.hexdigest()


def correlation_id(input_hash: str, policy_text: str) -> str:
    """A version-5-style UUID string from the input digest and a canonical policy text."""
    digest = hashlib.sha256(f"orderdoc\n{input_hash}\n{policy_text}".encode()).digest()
    return str(uuid.UUID(bytes=digest[:16], version=5))
