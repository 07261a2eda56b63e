"""Condition runs on a dense (group x minute) grid with numpy: the fast path for sums.

When every partial of a rule's aggregate is a sum (``count``, ``sum``, ``avg``, ``rate``,
``ratio``) and the grid (groups x minutes from the first row to the end of the last window)
is not much larger than the number of rows, the windowed value at every instant is a
difference of cumulative sums along the minute axis. Rows are scattered into the grid with
``bincount`` (no sort), a block of groups at a time to bound memory. The result is exactly
that of :func:`diagnostics.rules.windows.condition_runs`: runs ``(gid, s, e, v)`` with ``e``
``None`` when the condition still holds at ``now``; instants before a group's first row are
not evaluated.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from diagnostics.rules.model import Aggregate, AggregateFn, Comparison

#: Cells (groups x minutes) processed at once; 2^24 float64 cells are 128 MiB.
BLOCK_CELLS = 1 << 24
#: Blocks evaluated at the same time (threads; memory is a few blocks' worth per worker).
WORKERS = max(1, min(4, os.cpu_count() or 1))
SUM_PARTIALS = frozenset({"n", "s", "nx", "sa", "sb"})

RunRow = tuple[int, int, int | None, float | None]


def dense_ok(partials: set[str], n_groups: int, span: int, rows: int) -> bool:
    """Whether the dense path applies: sums only, and a grid of at most 16 cells per row
    (plus a floor, so that small inputs always qualify)."""
    return partials <= SUM_PARTIALS and n_groups * span <= 16 * rows + 4_000_000


def _value(agg: Aggregate, win: dict[str, np.ndarray], window_seconds: float) -> np.ndarray:
    fn = agg.fn
    with np.errstate(divide="ignore", invalid="ignore"):
        if fn is AggregateFn.COUNT:
            return win["n"]
        if fn is AggregateFn.SUM:
            return win["s"]
        if fn is AggregateFn.AVG:
            return np.where(win["nx"] > 0, win["s"] / win["nx"], np.nan)
        if fn is AggregateFn.RATE:
            return (win["s"] if agg.columns else win["n"]) / window_seconds
        if fn is AggregateFn.RATIO:
            return np.where(win["sb"] != 0, win["sa"] / win["sb"], np.nan)
    msg = f"aggregate {agg} has no dense evaluation"
    raise ValueError(msg)


def _compare(value: np.ndarray, op: Comparison, threshold: float) -> np.ndarray:
    with np.errstate(invalid="ignore"):
        result = {
            Comparison.GT: np.greater,
            Comparison.GE: np.greater_equal,
            Comparison.LT: np.less,
            Comparison.LE: np.less_equal,
            Comparison.EQ: np.equal,
            Comparison.NE: np.not_equal,
        }[op](value, threshold)
    if op is Comparison.NE and value.dtype.kind == "f":  # NaN compares false but for !=
        result &= ~np.isnan(value)
    return result


def _block_runs(cond: np.ndarray, value: np.ndarray, g0: int, t0: int) -> list[RunRow]:
    """Runs of one block of the grid: transitions found with one XOR pass."""
    span = cond.shape[1]
    out: list[RunRow] = []
    if span > 1:
        flips = np.flatnonzero(cond[:, 1:] ^ cond[:, :-1])
        r_flip, c_flip = np.divmod(flips, span - 1)
    else:
        r_flip = c_flip = np.zeros(0, dtype=np.int64)
    c_flip = c_flip + 1  # the condition changes at column c_flip
    rising = cond[r_flip, c_flip]
    first_col = np.flatnonzero(cond[:, 0])
    starts_r = np.concatenate([first_col, r_flip[rising]])
    starts_c = np.concatenate([np.zeros(first_col.size, dtype=np.int64), c_flip[rising]])
    order = np.lexsort((starts_c, starts_r))
    starts_r, starts_c = starts_r[order], starts_c[order]
    last_col = np.flatnonzero(cond[:, -1])
    ends_r = np.concatenate([r_flip[~rising], last_col])
    ends_c = np.concatenate([c_flip[~rising], np.full(last_col.size, span, dtype=np.int64)])
    order = np.lexsort((ends_c, ends_r))
    ends_r, ends_c = ends_r[order], ends_c[order]
    last_value = value[ends_r, ends_c - 1]
    for r, cs, ce, v in zip(
        starts_r.tolist(), starts_c.tolist(), ends_c.tolist(), last_value.tolist(), strict=True
    ):
        out.append((g0 + r, t0 + cs, None if ce == span else t0 + ce, float(v)))
    return out


def dense_runs(
    gid: np.ndarray,
    e: np.ndarray,
    parts: dict[str, np.ndarray | None],
    *,
    n_groups: int,
    window: int,
    agg: Aggregate,
    op: Comparison,
    threshold: float,
    now: int,
) -> list[RunRow]:
    """Runs per group from rows ``(gid, e, parts)``; ``e``, ``window`` and ``now`` in minutes.

    ``parts`` maps each partial to its per-row weights (``None`` for a weight of 1). Rows with
    ``e > now`` are ignored. The result is ordered by ``gid`` then ``s``.
    """
    keep = e <= now
    if not keep.all():
        gid, e = gid[keep], e[keep]
        parts = {k: (None if v is None else v[keep]) for k, v in parts.items()}
    if e.size == 0:
        return []
    order = np.argsort(gid.astype(np.uint16 if n_groups < 65_536 else np.int64), kind="stable")
    gid, e = gid[order], e[order]
    weights = {k: (None if v is None else v[order]) for k, v in parts.items()}
    bounds = np.searchsorted(gid, np.arange(n_groups + 1))
    t0 = int(e.min())
    t_end = min(now, int(e.max()) + window)
    span = t_end - t0 + 1
    block = max(1, BLOCK_CELLS // span)
    seconds = window * 60.0

    def one_block(g0: int) -> list[RunRow]:
        g1 = min(n_groups, g0 + block)
        lo, hi = bounds[g0], bounds[g1]
        if lo == hi:
            return []
        rows = g1 - g0
        index = (gid[lo:hi] - g0) * span + (e[lo:hi] - t0)
        win: dict[str, np.ndarray] = {}
        for name, w in weights.items():
            cum = np.bincount(index, None if w is None else w[lo:hi], minlength=rows * span)
            cum = cum.reshape(rows, span)
            np.cumsum(cum, axis=1, out=cum)
            if window < span:
                moving = np.empty_like(cum)
                moving[:, :window] = cum[:, :window]
                np.subtract(cum[:, window:], cum[:, :-window], out=moving[:, window:])
                cum = moving
            win[name] = cum
        value = _value(agg, win, seconds)
        cond = _compare(value, op, threshold)
        # instants before a group's first row are not evaluated
        group_lo = bounds[g0:g1]
        group_hi = bounds[g0 + 1 : g1 + 1]
        for r in range(rows):
            if group_hi[r] == group_lo[r]:
                cond[r, :] = False
            else:
                first = int(e[group_lo[r] : group_hi[r]].min()) - t0
                cond[r, :first] = False
        return _block_runs(cond, value, g0, t0)

    starts = range(0, n_groups, block)
    if len(starts) == 1 or WORKERS == 1:
        return [run for g0 in starts for run in one_block(g0)]
    # numpy releases the GIL in these loops: blocks run in parallel; results keep block order
    with ThreadPoolExecutor(max_workers=WORKERS) as pool:
        return [run for found in pool.map(one_block, starts) for run in found]
