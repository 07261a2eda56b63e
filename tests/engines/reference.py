"""Literal, event-by-event readings of docs/engines.md (the engines' code as it runs: one
tick or micro-batch at a time), to check the vectorised rules against."""

from __future__ import annotations

from dataclasses import dataclass, field

from diagnostics.engines.policy import FlinkRules, FlinkVersion, SparkRules, WatermarkPolicy

MS = 1_000_000
US = 1_000
MIN = -(2**63)


@dataclass
class Event:
    arrival: int  # ns
    split: int  # Flink split / Spark input
    ts: int | None  # ns, None: no valid event time


@dataclass
class Outcome:
    dropped: bool
    late: bool
    watermark: int | None  # ns
    release: int | None  # ns


def _end(ts: int, size: int) -> int:
    return ts - (ts % size) + size


@dataclass
class _Generator:
    """BoundedOutOfOrdernessWatermarks + WatermarksWithIdleness.IdlenessTimer + the split's
    PartialWatermark."""

    ooo: int
    max_ts: int = 0
    counter: int = 0
    last_counter: int = 0
    start: int | None = None
    idle: bool = False
    watermark: int = MIN

    def __post_init__(self) -> None:
        self.max_ts = MIN + self.ooo + 1

    def periodic(self, now: int, timeout: int | None) -> None:
        if timeout is not None:
            if self.counter != self.last_counter:
                self.last_counter = self.counter
                self.start = None
            elif self.start is None:
                self.start = now
            elif now - self.start > timeout:
                self.idle = True
                return
        self.idle = False
        self.watermark = max(self.watermark, self.max_ts - self.ooo - 1)


def flink(events: list[Event], splits: int, rules: FlinkRules) -> list[Outcome]:
    """Flink, tick by tick; ``events`` in arrival order (ties: as given)."""
    interval = rules.watermark_interval_ns
    gens = [_Generator(rules.out_of_orderness_ns // MS) for _ in range(splits)]
    size, lateness = rules.window_ns // MS, rules.allowed_lateness_ns // MS
    first = -(-events[0].arrival // interval) * interval
    last = events[-1].arrival + 2 * interval + (rules.idleness_ns or 0) + interval
    combined = MIN
    history: list[tuple[int, int]] = []
    seen: list[int] = []
    i = 0
    tick = first
    while tick <= last or i < len(events):
        while i < len(events) and events[i].arrival <= tick:
            e = events[i]
            seen.append(combined)
            if e.ts is not None:
                g = gens[e.split]
                g.max_ts = max(g.max_ts, e.ts // MS)
                g.counter += 1
            i += 1
        for g in gens:
            g.periodic(tick, rules.idleness_ns)
        active = [g.watermark for g in gens if not g.idle]
        if active:
            combined = max(combined, min(active))
        elif rules.version is FlinkVersion.V2_2:  # every split idle: flush them all
            combined = max(combined, *(g.watermark for g in gens))
        history.append((tick, combined))
        tick += interval
    out = []
    for e, wm in zip(events, seen, strict=True):
        if e.ts is None:
            out.append(Outcome(True, False, None if wm == MIN else wm * MS, None))
            continue
        ts = e.ts // MS
        top = _end(ts, size) - 1
        dropped = top + lateness <= wm
        release = None
        if not dropped:
            if top <= wm:
                release = e.arrival
            else:
                release = next((t for t, c in history if t >= e.arrival and c >= top), None)
        out.append(Outcome(dropped, ts <= wm, None if wm == MIN else wm * MS, release))
    return out


@dataclass
class _Batch:
    time: int
    watermark: int  # ms
    events: list[int] = field(default_factory=list)


def spark(events: list[Event], inputs: int, rules: SparkRules) -> list[Outcome]:
    """Spark, micro-batch by micro-batch; ``events`` in arrival order."""
    interval = rules.trigger_ns
    delay, size = rules.watermark_delay_ns // MS, rules.window_ns // US
    ops: list[int | None] = [None] * inputs
    current = 0
    batches: list[_Batch] = []
    late_marks: dict[int, int] = {}
    requires = False
    i = 0
    if interval:
        tick = -(-events[0].arrival // interval) * interval
        ticks = []
        while tick <= events[-1].arrival + 3 * interval:
            ticks.append(tick)
            tick += interval
    else:
        ticks = sorted({e.arrival for e in events})

    def run(now: int, data: list[int]) -> None:
        nonlocal current, requires
        batch = _Batch(now, current, data)
        late = batches[-1].watermark if batches else 0
        for j in data:
            late_marks[j] = late
        batches.append(batch)
        for s in range(inputs):
            stamps = [
                events[j].ts // MS
                for j in data
                if events[j].split == s and events[j].ts is not None
            ]  # type: ignore[operator]
            if stamps:
                new = max(stamps) - delay
                if ops[s] is None or new > ops[s]:  # type: ignore[operator]
                    ops[s] = new
        values = [0 if v is None else v for v in ops]
        chosen = min(values) if rules.watermark_policy is WatermarkPolicy.MIN else max(values)
        if chosen > current:
            current = chosen
        requires = current > batch.watermark

    for now in ticks:
        data = []
        while i < len(events) and events[i].arrival <= now:
            data.append(i)
            i += 1
        if data or requires:
            run(now, data)
        if interval == 0 and requires:  # back to back: the no-data batch runs at once
            run(now, [])
    out = []
    index = {j: b for b, batch in enumerate(batches) for j in batch.events}
    for j, e in enumerate(events):
        late = late_marks[j]
        if e.ts is None:
            out.append(Outcome(True, False, late * MS, None))
            continue
        end = _end(e.ts // US, size)
        dropped = end <= late * 1000
        release = None
        if not dropped:
            release = next((b.time for b in batches[index[j] :] if b.watermark * 1000 >= end), None)
        out.append(Outcome(dropped, e.ts // US <= late * 1000, late * MS, release))
    return out
