"""Release times: when the governing watermark first reaches an event's System.Timestamp.

Spec §4. A timeline's watermark at processing time τ is::

    wm(τ) = τ − 5 s − late             before its first accepted event (at ``fa``)
    wm(τ) = max(M(τ) − ooo, τ − late)  from then on (M(τ): largest accepted timestamp so far)

It never decreases. For an event with System.Timestamp ``t`` the first τ with wm(τ) ≥ t is::

    t + late + 5 s                          if that is before fa
    max(fa, min(t + late, a*))              otherwise, a* = first arrival with M ≥ t + ooo

An event is released at ``max(arrival, max over governing timelines of that τ)``.

Incrementally, a batch knows the arrivals up to ``tau`` (the batch's last arrival); anything
later is unknown. A candidate ≤ ``tau`` is final, because later input only changes the
watermark at τ ≥ ``tau``; a larger one is not yet known and the event stays pending. On close,
τ runs to +∞ with no more input: every candidate becomes final (or never, with unlimited
``late``). This makes the result independent of how the input is split into batches.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from diagnostics.engine.policy import UNSTARTED_ESTIMATE_NS

#: −∞ and +∞ for int64 nanoseconds, far enough from the limits that tolerances never overflow.
NEG = -(2**62)
POS = 2**62


@dataclass(frozen=True, slots=True)
class Breakpoints:
    """Where one timeline's M rose during a batch: arrival times and M just after, both sorted."""

    arrivals: np.ndarray
    running_max: np.ndarray

    @staticmethod
    def empty() -> Breakpoints:
        """No breakpoints (no accepted event on the timeline in the batch, or closing)."""
        none = np.empty(0, dtype=np.int64)
        return Breakpoints(none, none)


def first_tau(
    t: np.ndarray,
    *,
    late: int | None,
    ooo: int,
    m_before: int,
    first_arrival: int,
    points: Breakpoints,
    tau: int,
    closing: bool,
) -> np.ndarray:
    """For each timestamp in ``t``, the first τ at which one timeline's watermark reaches it.

    ``m_before`` is the timeline's M before the batch (``NEG`` if not started),
    ``first_arrival`` its first accepted arrival (``POS`` if not started by ``tau``). Returns
    ``POS`` where the answer is not yet known (or, when ``closing``, never comes).
    """
    if late is None:
        by_late = np.full(t.shape, POS, dtype=np.int64)
        unstarted = np.full(t.shape, POS, dtype=np.int64)
    else:
        by_late = t + late
        unstarted = by_late + UNSTARTED_ESTIMATE_NS
    if first_arrival >= POS:
        final = unstarted < POS if closing else unstarted <= tau
        return np.where(final, unstarted, POS)
    query = t + ooo
    if len(points.arrivals):
        idx = np.searchsorted(points.running_max, query, side="left")
        padded = np.append(points.arrivals, POS)
        by_m = padded[idx]
    else:
        by_m = np.full(t.shape, POS, dtype=np.int64)
    by_m = np.where(m_before >= query, NEG, by_m)
    cand = np.maximum(first_arrival, np.minimum(by_late, by_m))
    cand = np.where(unstarted < first_arrival, unstarted, cand)
    if closing:
        return cand
    return np.where(cand <= tau, cand, POS)
