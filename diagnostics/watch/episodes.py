"""Which stored alert episode an evaluated one is: the identity of an episode.

Every evaluation lists, per alert (a fingerprint: the rule and the group's labels), every
episode the data holds so far, oldest first; only the last can be open (pending or firing).
Between two evaluations the data grows, and an episode's times may move while it stays the same
episode: ``partition-not-progressing`` reads ``partition_idle`` by the time of an idle episode's
*last* notice, so its start moves later with every notice; records that arrive a little late
move a start earlier. So an episode is recognised by where it is, not by its start:

* an episode covers ``[active_at, ends_at)`` (``ends_at`` is open while it is not resolved);
  a stored episode keeps the ``active_at`` it was first recorded with (its key) and the
  ``startsAt`` and ``endsAt`` it was told with;
* an evaluated episode that is over is the stored episode already over that it overlaps, else
  the open stored episode it overlaps (which it resolves);
* an evaluated episode that is not over is the open stored episode: there is at most one per
  alert, and it covers everything after its start;
* each stored episode is matched at most once, evaluated episodes oldest first; an evaluated
  episode matched to none is new. A new open episode that overlaps one already told resolved
  (later records made the condition hold again inside it) starts where the told one ended:
  what was told is never taken back;
* an open stored episode that no evaluated episode matches is over (its rule was removed, or
  the data changed): it resolves at the end of the evaluated episode that overlaps it, if one
  does, else at the evaluation's time.

Times here are :class:`datetime`; the functions are pure.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True)
class Span:
    """Where an episode is: ``[start, end)``; ``end`` is ``None`` while it is open."""

    start: datetime
    end: datetime | None

    @property
    def open(self) -> bool:
        """True while the episode is not over (pending or firing)."""
        return self.end is None

    def overlaps(self, other: Span) -> bool:
        """True when the two spans share an instant (an open span reaches to the future)."""
        return (other.end is None or self.start < other.end) and (
            self.end is None or other.start < self.end
        )


@dataclass(frozen=True)
class Matching:
    """The result of :func:`match`: pairs (evaluated index, stored index); new evaluated
    episodes with the earliest start each may take (``None``: its own); open stored episodes
    matched by none, each with the end of the evaluated episode it overlaps (``None``: none
    does, it resolves at the evaluation's time)."""

    pairs: tuple[tuple[int, int], ...]
    new: tuple[tuple[int, datetime | None], ...]
    gone: tuple[tuple[int, datetime | None], ...]


def _first(stored: Sequence[Span], used: set[int], wanted: Span, *, open_: bool) -> int | None:
    for index, span in enumerate(stored):
        if index not in used and span.open is open_ and span.overlaps(wanted):
            return index
    return None


def match(stored: Sequence[Span], evaluated: Sequence[Span]) -> Matching:
    """Match one alert's evaluated episodes to its stored ones (both oldest first)."""
    used: set[int] = set()
    pairs: list[tuple[int, int]] = []
    new: list[tuple[int, datetime | None]] = []
    for index, span in enumerate(evaluated):
        found = None if span.open else _first(stored, used, span, open_=False)
        if found is None:
            found = _first(stored, used, span, open_=True)
        if found is not None:
            used.add(found)
            pairs.append((index, found))
            continue
        told = [s.end for s in stored if s.end is not None and s.overlaps(span)]
        new.append((index, max(told) if span.open and told else None))
    gone = []
    for index, span in enumerate(stored):
        if span.open and index not in used:
            ends = [e.end for e in evaluated if e.end is not None and e.overlaps(span)]
            gone.append((index, max(ends) if ends else None))
    return Matching(tuple(pairs), tuple(new), tuple(gone))
