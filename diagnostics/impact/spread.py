"""How wrong the interior windows are (docs/impact.md, "Interior and edge windows"): the
spread of the relative error over them, the windows off by more than 5 %, and a pattern that
repeats with a period (a gateway that flushes every 3 minutes makes every third minute's
count high and the others low).

Relative error per window and aggregate: ``relative_difference`` of impact.parquet (1.0 when
one side has no such window; a window whose on-time value is 0 and emitted value is not has
none: it counts as off, outside the percentiles). Signed, for the pattern: positive when the
job emitted more than on time.

The pattern, per aggregate: over the keys with a changed interior window, the signed errors
by window end, the hop (tumbling: the size) as the unit. For each candidate period of k hops
(2 .. a third of the windows' range, at most :data:`MAX_PERIOD`), the share of the errors'
variance that the phase (window end / hop mod k) explains, adjusted for the k phases over
the n distinct window ends as the adjusted R² is (1 - (1 - share) (n - 1) / (n - k)); the
period is the shortest whose share is at least :data:`CLOSE` of the best one's, and the
errors are periodic when that share is at least :data:`EXPLAINED` and the phases' medians
differ by more than :data:`OFF`. Sliding and session windows end wherever events are: no period is looked for.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl

from diagnostics.impact.model import AggregateStep, WindowKind
from diagnostics.timestamps import iso

#: A window is off when its relative error exceeds this.
OFF = 0.05
#: The longest period looked for, in hops.
MAX_PERIOD = 60
#: The share of the signed errors' variance the phase must explain for a pattern.
EXPLAINED = 0.3
#: A shorter period is taken when its share is at least this part of the best one's.
CLOSE = 0.9
#: Example window ends said of the high phase.
EXAMPLES = 3


def _signed() -> pl.Expr:
    """The signed relative error of each row (null where there is none)."""
    rel = pl.col("relative_difference")
    higher = (
        pl.when(pl.col("value_on_time").is_null())
        .then(True)
        .when(pl.col("value_as_emitted").is_null())
        .then(False)
        .otherwise(pl.col("value_as_emitted") >= pl.col("value_on_time"))
    )
    return pl.when(higher).then(rel).otherwise(-rel)


def error_spread(rows: pl.DataFrame) -> dict[str, Any]:
    """``windows``, ``changed``, ``off`` (error above :data:`OFF` or without an on-time value
    to compare with), ``off_share``, ``median`` and ``p95`` of the relative error of
    impact.parquet ``rows`` (one aggregate's windows, or several)."""
    rel = rows["relative_difference"]
    values = rel.drop_nulls().to_numpy()
    changed = int(rows["changed"].sum())
    off = int((rel.fill_null(np.inf) > OFF).sum()) if rows.height else 0
    return {
        "windows": rows.height,
        "changed": changed,
        "off": off,
        "off_share": round(off / rows.height, 4) if rows.height else 0.0,
        "median": round(float(np.median(values)), 4) if values.size else None,
        "p95": round(float(np.quantile(values, 0.95, method="higher")), 4) if values.size else None,
    }


def _share_explained(errors: np.ndarray, phase: np.ndarray, k: int) -> float:
    """The share of the variance of ``errors`` that their ``phase`` (0 .. k-1) explains."""
    total = float(((errors - errors.mean()) ** 2).sum())
    if total <= 0.0:
        return 0.0
    counts = np.bincount(phase, minlength=k)
    sums = np.bincount(phase, weights=errors, minlength=k)
    used = counts > 0
    means = sums[used] / counts[used]
    between = float((counts[used] * (means - errors.mean()) ** 2).sum())
    return between / total


def _period(ns: int) -> str:
    """``3 min``, ``90 s``, ``2 h``: a period in words."""
    seconds = ns / 1e9
    for unit, size in (("h", 3_600), ("min", 60)):
        if seconds >= size and seconds % size == 0:
            return f"{seconds / size:g} {unit}"
    return f"{seconds:g} s"


def _adjusted(share: float, n: int, k: int) -> float:
    """``share`` adjusted for the ``k`` phases that explain it over ``n`` window ends (as
    the adjusted R²): noise over few windows explains about (k - 1) / (n - 1) by chance."""
    return 1.0 - (1.0 - share) * (n - 1) / max(n - k, 1)


def find_pattern(rows: pl.DataFrame, step: AggregateStep) -> dict[str, Any] | None:
    """The periodic pattern of one aggregate's interior ``rows`` (see the module), or
    ``None``: ``period_seconds``, ``period_windows``, ``explained``, ``keys`` (that carry it),
    and the ``high`` and ``low`` phases, each with its ``windows``, ``median`` signed error
    and (``high``) example window ends."""
    if step.window.kind not in (WindowKind.TUMBLING, WindowKind.HOPPING):
        return None
    hop = step.window.hop or step.window.size
    keys = rows.filter(pl.col("changed"))["keys"].unique()
    part = rows.filter(pl.col("keys").is_in(keys.implode())).with_columns(_signed().alias("__s"))
    part = part.filter(pl.col("__s").is_not_null())
    if part.height < 6:
        return None
    errors = part["__s"].to_numpy().astype(np.float64)
    slots = (part["window_end"].dt.epoch("ns").to_numpy() - step.window.offset) // hop
    reach = int(slots.max() - slots.min()) + 1
    top = min(MAX_PERIOD, reach // 3)
    if top < 2:
        return None
    n = int(np.unique(slots).size)  # distinct window ends: what a period can explain
    shares = {
        k: _adjusted(_share_explained(errors, (slots % k).astype(np.int64), k), n, k)
        for k in range(2, min(top, n - 1) + 1)
    }
    if not shares:
        return None
    best = max(shares.values())
    if best < EXPLAINED:
        return None
    k = min(k for k, share in shares.items() if share >= CLOSE * best)
    phase = (slots % k).astype(np.int64)
    medians = np.array(
        [np.median(errors[phase == j]) if (phase == j).any() else np.nan for j in range(k)]
    )
    if np.nanmax(medians) - np.nanmin(medians) <= OFF:
        return None
    high_phases = np.flatnonzero(medians > 0)
    high = np.isin(phase, high_phases)
    ends = part["window_end"].filter(pl.Series(high)).unique().sort().head(EXAMPLES)
    return {
        "period_seconds": k * hop / 1e9,
        "period": _period(k * hop),
        "period_windows": k,
        "explained": round(shares[k], 3),
        "keys": int(keys.len()),
        "high": {
            "phases": int(high_phases.size),
            "windows": int(high.sum()),
            "median": round(float(np.median(errors[high])), 4) if high.any() else None,
            "window_ends": [f"{str(iso(int(e)))[:19]}Z" for e in ends.dt.epoch("ns")],
        },
        "low": {
            "phases": int(k - high_phases.size),
            "windows": int((~high).sum()),
            "median": round(float(np.median(errors[~high])), 4) if (~high).any() else None,
        },
    }


def interior_spread(interior: pl.DataFrame, steps: list[AggregateStep]) -> list[dict[str, Any]]:
    """Per step and aggregate of the interior rows: :func:`error_spread` and ``pattern``
    (:func:`find_pattern`), in the steps' and aggregates' order."""
    found = []
    by_name = {s.name: s for s in steps}
    for (step_name, aggregate), rows in interior.group_by(
        ["step", "aggregate"], maintain_order=True
    ):
        step = by_name.get(str(step_name))
        rows = rows.sort("keys", "window_end")
        found.append(
            {
                "step": str(step_name),
                "aggregate": str(aggregate),
                **error_spread(rows),
                "pattern": None if step is None else find_pattern(rows, step),
            }
        )
    return found
