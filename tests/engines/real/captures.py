"""Small captures for checking orderdoc's Flink and Spark rules against the real engines: the
events (id, source split, event time, arrival time, all in whole milliseconds), written both
as an orderdoc capture (CSV) and as each engine's input, and what an engine reported.

The hand-made captures each hold one situation (on time, late by exactly the boundary and
1 ms either side, out of order within the bound, two splits one of them idle); the seeded
random one mixes them over a few hundred events.
"""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

#: 2024-01-01T00:00:00Z in ms: the captures' time origin (a whole multiple of every window,
#: trigger and tick the tests use, so windows and ticks start on it).
T0_MS = 1_704_067_200_000


@dataclass(frozen=True, slots=True)
class Event:
    """One captured event: ``event_ms`` is its event time, ``arrival_ms`` when it reached the
    engine's source (processing time), ``split`` the source split (partition) it came from."""

    id: str
    split: int
    event_ms: int
    arrival_ms: int


@dataclass(frozen=True, slots=True)
class Capture:
    """Events in arrival order (arrival times never decrease; events arriving together are
    taken in the order given, by orderdoc and by the engines' harnesses) and their split
    count."""

    name: str
    events: tuple[Event, ...]
    splits: int = 1

    def __post_init__(self) -> None:
        arrivals = [e.arrival_ms for e in self.events]
        if any(b < a for a, b in itertools.pairwise(arrivals)):
            msg = f"capture {self.name}: arrival times must not decrease"
            raise ValueError(msg)
        ids = [e.id for e in self.events]
        if len(set(ids)) != len(ids):
            msg = f"capture {self.name}: event ids must be unique"
            raise ValueError(msg)
        if any(not 0 <= e.split < self.splits for e in self.events):
            msg = f"capture {self.name}: a split outside 0..{self.splits - 1}"
            raise ValueError(msg)

    def window_counts(
        self, window_ms: int, dropped: frozenset[str] = frozenset()
    ) -> dict[int, int]:
        """Events per tumbling window (keyed by its start, ms), leaving out ``dropped``."""
        counts: dict[int, int] = {}
        for e in self.events:
            if e.id not in dropped:
                start = e.event_ms - e.event_ms % window_ms
                counts[start] = counts.get(start, 0) + 1
        return dict(sorted(counts.items()))


@dataclass(frozen=True, slots=True)
class EngineResult:
    """What one engine did with a capture: the events it dropped as late and each window's
    final count (windows whose every event was dropped are absent)."""

    dropped: frozenset[str]
    counts: dict[int, int]
    details: dict[str, object] = field(default_factory=dict)


def iso(ms: int) -> str:
    """``ms`` since the epoch as an ISO-8601 UTC time with milliseconds."""
    stamp = datetime.fromtimestamp(ms / 1000, tz=UTC)
    return stamp.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def write_orderdoc_capture(capture: Capture, path: Path) -> Path:
    """The capture as orderdoc reads it: ``id,partition_id,arrival_time,ts`` (CSV)."""
    lines = ["id,partition_id,arrival_time,ts"]
    lines += [f"{e.id},{e.split},{iso(e.arrival_ms)},{iso(e.event_ms)}" for e in capture.events]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _at(seconds: float) -> int:
    return T0_MS + round(seconds * 1000)


def hand_captures() -> dict[str, Capture]:
    """The hand-made captures (windows of 10 s; the tests give each its settings)."""

    def ev(id_: str, event_s: float, arrival_s: float, split: int = 0) -> Event:
        return Event(id_, split, _at(event_s), _at(arrival_s))

    return {
        # in order, each window closed by the next one's first event: nothing late
        "on_time": Capture(
            "on_time",
            (ev("a", 1, 1.1), ev("b", 5, 5.1), ev("c", 12, 12.1), ev("d", 25, 25.1)),
        ),
        # the window [0 s, 10 s) ends; events of it come after watermarks 1 ms either side
        # and exactly at its boundary (see the tests for the boundary of each engine)
        "boundary": Capture(
            "boundary",
            (
                ev("w1", 2, 2.1),
                ev("x1", 10.998, 11.1),  # pushes the watermark near the window's end
                ev("late_a", 3, 11.3),
                ev("x2", 10.999, 12.1),
                ev("late_b", 4, 12.3),
                ev("x3", 11.000, 13.1),
                ev("late_c", 5, 13.3),
                ev("x4", 11.001, 14.1),
                ev("late_d", 6, 14.3),
                ev("y", 30, 31.1),
                ev("late_e", 9.999, 31.3),
            ),
        ),
        # out of order within and beyond a 2 s bound
        "out_of_order": Capture(
            "out_of_order",
            (
                ev("p1", 8, 8.1),
                ev("p2", 11, 11.1),
                ev("p3", 9.5, 11.2),  # 1.5 s behind the max: within a 2 s bound
                ev("p4", 13, 13.1),
                ev("p5", 9.9, 13.2),  # 3.1 s behind the max
                ev("p6", 12.5, 13.3),
                ev("p7", 25, 25.1),
                ev("p8", 19, 25.2),
            ),
        ),
        # FLINK-38454's case: both splits send once at 1 s, split 0 20 s ahead; with idleness
        # 1 s both are idle from tick 2.4 s, when Flink 2.2 takes the maximum (19.999 s) and
        # 2.1 keeps the minimum (4.999 s): c, of [0 s, 10 s), is dropped by 2.2 only
        "all_idle": Capture(
            "all_idle",
            (ev("a", 20, 1, split=0), ev("b", 5, 1, split=1), ev("c", 6, 10, split=1)),
            splits=2,
        ),
        # split 1 sends twice early and then nothing; split 0 goes on for a minute
        "idle_split": Capture(
            "idle_split",
            (
                ev("s1a", 1, 1.1, split=1),
                ev("s0a", 2, 2.1),
                ev("s1b", 3, 3.1, split=1),
                ev("s0b", 12, 12.1),
                ev("s0c", 25, 25.1),
                ev("s0d", 4, 26.1),  # of [0 s, 10 s): late once split 1 no longer holds back
                ev("s0e", 40, 40.1),
                ev("s0f", 14, 41.1),
                ev("s0g", 61, 61.1),
                ev("s0h", 35, 62.1),
            ),
            splits=2,
        ),
    }


def random_capture(
    seed: int,
    count: int = 200,
    splits: int = 2,
    gaps_ms: tuple[int, int] = (50, 1000),
    quiet_from: int | None = None,
) -> Capture:
    """``count`` events on ``splits`` splits: event times mostly rising with the arrivals,
    some a little behind (out of order), some far behind (late); distinct arrivals
    ``gaps_ms`` apart (whole milliseconds). From event ``quiet_from`` on only split 0 sends
    (the others go silent: idleness)."""
    rng = random.Random(seed)
    events: list[Event] = []
    arrival = _at(0)
    for i in range(count):
        arrival += rng.randint(*gaps_ms)
        lag = rng.choice((0, 0, 0, rng.randint(0, 2_500), rng.randint(2_000, 25_000)))
        event_ms = max(T0_MS, arrival - 100 - lag)
        split = 0 if quiet_from is not None and i >= quiet_from else rng.randrange(splits)
        events.append(Event(f"e{i:04d}", split, event_ms, arrival))
    return Capture(f"random_{seed}", tuple(events), splits=splits)


def paused_capture(
    seed: int, bursts: int = 6, per_burst: int = 30, pause_ms: int = 4_000, lag_ms: int = 6_000
) -> Capture:
    """Two splits that send in ``bursts`` together and then both pause for ``pause_ms`` (every
    split idle at once, with an idleness below it): split 0's event times follow its arrivals,
    split 1's lag ``lag_ms`` behind (a slow producer), both a little out of order. After each
    pause Flink 2.2's watermark is split 0's (the maximum), 2.1's stays split 1's."""
    rng = random.Random(seed)
    events: list[Event] = []
    arrival = _at(0)
    for burst in range(bursts):
        if burst:
            arrival += pause_ms
        for i in range(per_burst):
            arrival += rng.randint(30, 300)
            split = rng.randrange(2)
            jitter = rng.choice((0, 0, rng.randint(0, 1_500)))
            event_ms = arrival - 100 - jitter - (lag_ms if split else 0)
            events.append(Event(f"b{burst}e{i:02d}", split, max(T0_MS, event_ms), arrival))
    return Capture(f"paused_{seed}", tuple(events), splits=2)


def backlog_capture(
    seed: int,
    before: int = 80,
    backlog: int = 60,
    pause_ms: int = 6_000,
    lag_ms: tuple[int, int] = (15_000, 25_000),
) -> Capture:
    """A lagging split catches up on a backlog after both splits paused: ``before`` events on
    two splits (split 1's event times ``lag_ms`` behind split 0's; split 0 stops a few events
    before split 1, so Flink 2.1 keeps split 1's watermark while both are idle), both silent for
    ``pause_ms``, then split 1 sends the ``backlog`` it held (its own event times, in order
    with small disorder, 10-60 ms apart) while split 0 resumes a second later, as before."""
    rng = random.Random(seed)
    events: list[Event] = []
    arrival = _at(0)
    behind = _at(0)  # split 1's event time

    def add(name: str, split: int, event_ms: int) -> None:
        events.append(Event(name, split, max(T0_MS, event_ms), arrival))

    for i in range(before):
        arrival += rng.randint(50, 400)
        if rng.random() < 0.5 and i < before - 8:  # split 0 stops first, split 1 a little later
            add(f"p{i:03d}", 0, arrival - 100 - rng.choice((0, 0, rng.randint(0, 1_000))))
        else:
            behind = max(behind, arrival - rng.randint(*lag_ms))
            add(f"p{i:03d}", 1, behind - rng.choice((0, 0, rng.randint(0, 800))))
    arrival += pause_ms
    resume = arrival + 1_000
    fast = arrival - pause_ms
    for i in range(backlog):
        arrival += rng.randint(10, 60)
        behind += rng.randint(100, 400)  # the backlog: split 1's events of the pause
        add(f"k{i:03d}", 1, behind - rng.choice((0, 0, rng.randint(0, 800))))
        if arrival >= resume and rng.random() < 0.3:
            fast += rng.randint(100, 400)
            add(f"f{i:03d}", 0, fast + pause_ms)
    return Capture(f"backlog_{seed}", tuple(events), splits=2)
