"""The alert state machine: pending → firing → resolved, with ``for`` and ``keep_firing_for``.

It follows Prometheus' alerting-rule semantics, computed on *runs* (maximal intervals during
which the condition held) instead of stepping every evaluation, which is what lets a year of
per-minute data be evaluated quickly. All times are integer nanoseconds on the evaluation grid.

For one group, given runs ``[start, end)`` sorted and disjoint (``end`` is ``None`` when the
condition still holds at ``now``):

- a run becomes *pending* at ``start``; it *fires* at ``start + for`` if the condition still
  holds then (``start + for < end``, or ``<= now`` for an open run); a run that clears before
  that is forgotten (a pending alert is never resolved, it just disappears);
- a firing alert keeps firing while the condition holds and for ``keep_firing_for`` after it
  clears; a run starting within that grace (at or before ``end + keep_firing_for``) continues
  the same alert (without a new ``for``);
- it is *resolved* at ``end + keep_firing_for`` when that is at or before ``now``.

Invariants of the output: episodes are disjoint and ordered; ``active_at <= starts_at``;
``ends_at`` is set exactly for resolved episodes and is ``<= now``; only the last episode of a
group can be pending or firing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from diagnostics.rules.model import AlertState


@dataclass(frozen=True)
class Run:
    """An interval ``[start, end)`` during which the condition held; ``value`` is the measured
    value at its last evaluation. ``end`` is ``None`` when it still holds at ``now``."""

    start: int
    end: int | None
    value: float | None


@dataclass(frozen=True)
class Episode:
    """One alert episode of one group."""

    state: AlertState
    active_at: int
    starts_at: int
    ends_at: int | None
    value: float | None


def episodes(runs: Sequence[Run], *, for_ns: int, keep_ns: int, now: int) -> list[Episode]:
    """Turn the condition runs of one group into alert episodes as of ``now``."""
    out: list[Episode] = []
    firing: Episode | None = None
    firing_end: int | None = None
    for run in runs:
        if run.start > now:
            break
        if firing is not None:
            assert firing_end is not None  # an open run is always the last one
            if run.start <= firing_end + keep_ns:
                firing = Episode(
                    AlertState.FIRING, firing.active_at, firing.starts_at, None, run.value
                )
                firing_end = run.end
                if firing_end is None:
                    break
                continue
            out.append(_resolved(firing, firing_end + keep_ns))
            firing = None
        fire_at = run.start + for_ns
        fires = fire_at <= now if run.end is None else fire_at < run.end
        if fires:
            firing = Episode(AlertState.FIRING, run.start, fire_at, None, run.value)
            firing_end = run.end
            if firing_end is None:
                break
        elif run.end is None:
            out.append(Episode(AlertState.PENDING, run.start, run.start, None, run.value))
    if firing is not None:
        if firing_end is not None and firing_end + keep_ns <= now:
            out.append(_resolved(firing, firing_end + keep_ns))
        else:
            out.append(firing)
    return out


def _resolved(episode: Episode, at: int) -> Episode:
    return Episode(AlertState.RESOLVED, episode.active_at, episode.starts_at, at, episode.value)
