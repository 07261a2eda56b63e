"""A slow, literal reading of docs/semantics.md, "The rules, as implemented" and "Watermarks, merge and output release", event by event, to check the columnar engine against.

Nothing here is shared with ``diagnostics.engine``: the same rules written a second time,
as plainly as possible, over Python ints (ns).
"""

from __future__ import annotations

from dataclasses import dataclass

FIVE_S = 5_000_000_000
EARLY = 300_000_000_000


@dataclass
class Ref:
    sys: int | None
    late: bool
    early: bool
    ooo: bool
    dropped: bool
    release: int | None


def reference(
    events, *, late, ooo, drop, early_policy, partition_by, over, partitions, app_time=True
):
    """``events``: list of (app ns | None, arrival ns, partition, key | None), any order.

    Returns one :class:`Ref` per event, in the given order.
    """
    if not app_time:
        late, ooo, early_policy = 0, 0, False
    eff_ooo = ooo if late is None else min(late, ooo)
    order = sorted(range(len(events)), key=lambda i: (events[i][1], i))
    m: dict = {}  # timeline -> M
    history: dict = {}  # timeline -> list of (arrival, M after)
    first: dict = {}  # timeline -> first accepted arrival
    results: dict[int, Ref] = {}
    for i in order:
        app, arr, part, key = events[i]
        if not app_time:
            app = arr
        tl = (part, key) if over else part
        if app is None or (over and key is None):
            results[i] = Ref(None, False, False, False, True, None)
            continue
        if early_policy and app - arr > EARLY:
            results[i] = Ref(None, False, True, False, True, None)
            continue
        t = app
        is_late = late is not None and app < arr - late
        if is_late:
            if drop:
                results[i] = Ref(None, True, False, False, True, None)
                continue
            t = arr - late
        cur = m.get(tl)
        is_ooo = cur is not None and t < cur - eff_ooo
        if is_ooo:
            if drop:
                results[i] = Ref(None, is_late, False, True, True, None)
                continue
            t = cur - eff_ooo
        m[tl] = t if cur is None else max(cur, t)
        first.setdefault(tl, arr)
        history.setdefault(tl, []).append((arr, m[tl]))
        results[i] = Ref(t, is_late, False, is_ooo, False, None)

    def wm(tl, tau):
        if tl not in first or tau < first[tl]:
            return None if late is None else tau - FIVE_S - late
        mm = max(mv for a, mv in history[tl] if a <= tau)
        base = mm - eff_ooo
        return base if late is None else max(base, tau - late)

    def governing(i):
        _, _, part, key = events[i]
        if over:
            return [(part, key)]
        if partition_by:
            return [part]
        return list(partitions)

    candidates = sorted(
        {e[1] for e in events}
        | {
            r.sys + late + extra
            for r in results.values()
            if r.sys is not None and late is not None
            for extra in (0, FIVE_S)
        }
    )
    for i, r in results.items():
        if r.dropped:
            continue
        arr = events[i][1]
        for c in candidates:
            if c < arr:
                continue
            marks = [wm(g, c) for g in governing(i)]
            if all(w is not None and w >= r.sys for w in marks):
                r.release = c
                break
    return [results[i] for i in range(len(events))]
