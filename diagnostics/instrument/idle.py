"""``InputPartitionNotProgressing`` notices: when a partition has no new data for too long.

Processing time runs from the replay's first arrival to its last. A partition's idle gaps are:
from the replay's first arrival to its own first arrival (or to the end, if it never sent
data), between consecutive arrivals of its own, and from its last arrival to the end. For a gap
from ``s`` to ``e`` and notice interval ``I``, the k-th notice (k = 1, 2, ...) is emitted at
``s + k·I`` whenever ``e - s > k·I`` (strictly), and reports ``(k·I) // 1 min`` whole minutes.

A gap gets at most :func:`notices_per_gap` notices, those of its first hour (or its first
one when ``I`` is longer): a partition silent for centuries because one arrival is far off
costs what an hour of silence does (``diagnostics.minutes``; each notice names the gap's end).

Invariant: a partition gets at least one notice iff one of its gaps is strictly longer than
``I``; it gets ``sum(min(ceil(gap / I) - 1, notices_per_gap(I)))`` notices in all.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import polars as pl

from diagnostics.durations import MINUTE
from diagnostics.minutes import GAP_FILL_MINUTES

_SCHEMA = {
    "partition": pl.Int64,
    "idle_since_ns": pl.Int64,
    "gap_end_ns": pl.Int64,
    "notice_index": pl.Int64,
    "notice_ns": pl.Int64,
    "idle_minutes": pl.Int64,
}


#: Up to this many partitions, gaps are found partition by partition (less memory than a sort).
_LOOP_PARTITIONS = 64


def idle_gaps(
    arrival_ns: np.ndarray,
    partition: np.ndarray,
    partitions: Sequence[int] | None = None,
    *,
    longer_than: int | None = None,
) -> pl.DataFrame:
    """Every idle gap of every partition: columns ``partition``, ``start_ns``, ``end_ns``.

    ``partitions`` are the declared partitions; the partitions present in the data are always
    included too. Zero-length gaps are kept (they never yield a notice). With
    ``longer_than``, gaps between two arrivals of a partition are kept only if longer than
    that (the leading, trailing and whole-run gaps are always kept).
    """
    arrival = np.asarray(arrival_ns, dtype=np.int64)
    part = np.asarray(partition, dtype=np.int64)
    declared = {int(p) for p in (partitions or ())}
    if arrival.size == 0:
        return pl.DataFrame(
            schema={"partition": pl.Int64, "start_ns": pl.Int64, "end_ns": pl.Int64}
        )
    low, high = int(part.min()), int(part.max())
    if high - low < 2**16:
        present = np.flatnonzero(np.bincount(part - low)) + low
    else:
        present = np.unique(part)
    if len(present) <= _LOOP_PARTITIONS:
        small = part.astype(np.int16) if low >= -(2**15) and high < 2**15 else part
        pieces = [
            _partition_gaps(np.compress(small == p, arrival), int(p), longer_than) for p in present
        ]
    else:
        pieces = [_sorted_gaps(arrival, part, longer_than)]
    inner_p, inner_s, inner_e, heads, tails = (
        np.concatenate([piece[i] for piece in pieces]) for i in range(5)
    )
    return with_edge_gaps(present, heads, tails, (inner_p, inner_s, inner_e), declared)


def with_edge_gaps(
    present: np.ndarray,
    heads: np.ndarray,
    tails: np.ndarray,
    inner: tuple[np.ndarray, np.ndarray, np.ndarray],
    declared: Iterable[int],
) -> pl.DataFrame:
    """The idle gaps of :func:`idle_gaps` from what a pass over the arrivals found: the
    partitions present with their first (``heads``) and last (``tails``) arrival, and the gaps
    between two arrivals of a partition (``inner``: partition, start, end). Adds each present
    partition's gap from processing time's first arrival to its own first, and from its last
    to processing time's last, and a whole-run gap for each declared partition never seen.
    The Spark replay finds the same inputs with its own queries (its stage S8)."""
    present = np.asarray(present, dtype=np.int64)
    heads = np.asarray(heads, dtype=np.int64)
    tails = np.asarray(tails, dtype=np.int64)
    first, last = int(heads.min()), int(tails.max())
    inner_p, inner_s, inner_e = (np.asarray(a, dtype=np.int64) for a in inner)
    silent = np.array(sorted(set(declared) - set(present.tolist())), dtype=np.int64)
    gaps_p = np.concatenate((present, inner_p, present, silent))
    gaps_s = np.concatenate(
        (np.full(present.size, first), inner_s, tails, np.full(silent.size, first))
    )
    gaps_e = np.concatenate(
        (heads, inner_e, np.full(present.size, last), np.full(silent.size, last))
    )
    return pl.DataFrame(
        {"partition": gaps_p, "start_ns": gaps_s, "end_ns": gaps_e},
        schema={"partition": pl.Int64, "start_ns": pl.Int64, "end_ns": pl.Int64},
    )


def _keep(starts: np.ndarray, ends: np.ndarray, longer_than: int | None) -> np.ndarray:
    return np.ones(len(starts), dtype=bool) if longer_than is None else ends - starts > longer_than


#: Inner gaps (partition, start, end), then each partition's first and last arrival.
_Gaps = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def _partition_gaps(arrival: np.ndarray, p: int, longer_than: int | None) -> _Gaps:
    """One partition's inner gaps, first and last arrival."""
    if not bool(np.all(arrival[1:] >= arrival[:-1])):
        arrival = np.sort(arrival)
    starts, ends = arrival[:-1], arrival[1:]
    keep = _keep(starts, ends, longer_than)
    starts, ends = starts[keep], ends[keep]
    partition = np.full(len(starts), p, dtype=np.int64)
    return partition, starts, ends, arrival[:1], arrival[-1:]


def _sorted_gaps(arrival: np.ndarray, part: np.ndarray, longer_than: int | None) -> _Gaps:
    """All partitions' inner gaps, first and last arrivals at once, by a sort (many
    partitions); partitions in increasing order."""
    if part.min() >= 0 and part.max() < 2**15 and bool(np.all(arrival[1:] >= arrival[:-1])):
        # already in arrival order: a stable (radix) sort by a small partition id suffices
        order = np.argsort(part.astype(np.int16), kind="stable")
    else:
        order = np.lexsort((arrival, part))
    part_sorted, arr_sorted = part[order], arrival[order]
    boundary = np.flatnonzero(np.diff(part_sorted)) + 1
    heads = np.concatenate(([0], boundary))
    tails = np.concatenate((boundary - 1, [part_sorted.size - 1]))
    same = part_sorted[1:] == part_sorted[:-1]
    starts, ends = arr_sorted[:-1][same], arr_sorted[1:][same]
    keep = _keep(starts, ends, longer_than)
    inner_p = part_sorted[1:][same][keep]
    return inner_p, starts[keep], ends[keep], arr_sorted[heads], arr_sorted[tails]


def notices_per_gap(interval_ns: int) -> int:
    """The most notices one idle gap yields: those within its first hour, at least one."""
    return max(1, GAP_FILL_MINUTES * MINUTE // interval_ns)


def idle_notices(
    arrival_ns: np.ndarray,
    partition: np.ndarray,
    interval_ns: int,
    partitions: Sequence[int] | None = None,
) -> pl.DataFrame:
    """One row per notice, sorted by ``notice_ns`` then ``partition``.

    Columns: ``partition``, ``idle_since_ns`` (gap start), ``gap_end_ns`` (the partition's
    next arrival or the replay's end), ``notice_index`` (k), ``notice_ns`` (``s + k·I``),
    ``idle_minutes`` (whole minutes of ``k·I``).
    """
    gaps = idle_gaps(arrival_ns, partition, partitions, longer_than=interval_ns)
    return gap_notices(gaps, interval_ns)


def gap_notices(gaps: pl.DataFrame, interval_ns: int) -> pl.DataFrame:
    """The notices of idle gaps (``partition``, ``start_ns``, ``end_ns``: those of
    :func:`idle_gaps`, in any order; the Spark replay finds them with its own sorts), as
    :func:`idle_notices` returns them."""
    starts = gaps["start_ns"].to_numpy()
    ends = gaps["end_ns"].to_numpy()
    length = ends - starts
    counts = np.minimum(np.maximum((length - 1) // interval_ns, 0), notices_per_gap(interval_ns))
    total = int(counts.sum())
    if total == 0:
        return pl.DataFrame(schema=_SCHEMA)
    idx = np.repeat(np.arange(counts.size), counts)
    offsets = np.cumsum(counts) - counts
    k = np.arange(total, dtype=np.int64) - np.repeat(offsets, counts) + 1
    since = starts[idx]
    frame = pl.DataFrame(
        {
            "partition": gaps["partition"].to_numpy()[idx],
            "idle_since_ns": since,
            "gap_end_ns": ends[idx],
            "notice_index": k,
            "notice_ns": since + k * interval_ns,
            "idle_minutes": (k * interval_ns) // MINUTE,
        },
        schema=_SCHEMA,
    )
    return frame.sort(["notice_ns", "partition"])
