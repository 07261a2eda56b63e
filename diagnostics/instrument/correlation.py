"""The run's correlation ID: a UUID derived from the input and the policy, never random.

The same events (arrival, application time, partition, in input order) under the same policy
text always give the same ID, so that replays repeat byte for byte.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Sequence

import numpy as np
import polars as pl

#: How a null time is hashed.
NULL_NS = int(np.iinfo(np.int64).min)


#: Events per digest chunk: the digest is computed chunk by chunk (the Spark replay hashes
#: each chunk in its own task), so it never needs the whole input in one place.
CHUNK_EVENTS = 2**20

#: The columns digested, in this order.
DIGESTED = ("arrival", "application_time", "partition")


def _column_ns(outcomes: pl.DataFrame, name: str) -> np.ndarray:
    series = outcomes.get_column(name)
    if series.dtype.is_temporal():
        series = series.dt.cast_time_unit("ns").dt.epoch("ns")
    return series.cast(pl.Int64).fill_null(NULL_NS).to_numpy()


def chunk_rows(arrival: np.ndarray, application: np.ndarray, partition: np.ndarray) -> memoryview:
    """The bytes hashed for consecutive events: each event's arrival, application time and
    partition (int64 ns, little-endian; a null as :data:`NULL_NS`), event by event."""
    rows = np.column_stack(
        [np.asarray(a, dtype=np.int64) for a in (arrival, application, partition)]
    )
    return np.ascontiguousarray(rows, dtype="<i8").data.cast("B")


def chunk_digest(arrival: np.ndarray, application: np.ndarray, partition: np.ndarray) -> bytes:
    """SHA-256 of one chunk of consecutive events (:func:`chunk_rows`)."""
    return hashlib.sha256(chunk_rows(arrival, application, partition)).digest()


def combine_digests(events: int, chunks: Sequence[bytes]) -> str:
    """The input digest (hex) from the event count and the chunk digests, in input order."""
    digest = hashlib.sha256(f"{events}|{'|'.join(DIGESTED)}".encode())
    for chunk in chunks:
        digest.update(chunk)
    return digest.hexdigest()


def input_digest(outcomes: pl.DataFrame) -> str:
    """SHA-256 (hex) of the events' arrival, application time and partition, in row order,
    in chunks of :data:`CHUNK_EVENTS` events (:func:`chunk_digest`, :func:`combine_digests`)."""
    columns = [_column_ns(outcomes, name) for name in DIGESTED]
    chunks = [
        chunk_digest(*(values[start : start + CHUNK_EVENTS] for values in columns))
        for start in range(0, outcomes.height, CHUNK_EVENTS)
    ]
    return combine_digests(outcomes.height, chunks)


def correlation_id(input_hash: str, policy_text: str) -> str:
    """A version-5-style UUID string from the input digest and a canonical policy text."""
    digest = hashlib.sha256(f"orderdoc\n{input_hash}\n{policy_text}".encode()).digest()
    return str(uuid.UUID(bytes=digest[:16], version=5))
