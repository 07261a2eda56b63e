"""Why the recommended setting is the one it is, in words with the engine's numbers: what a
finding proposed and the recommendation leaves out, what a clause is there for, which
settings came close, and what PARTITION BY / OVER do to a query that aggregates per key."""

from __future__ import annotations

import re
from dataclasses import dataclass

import polars as pl

from diagnostics.whatif.recommend import Recommendation
from diagnostics.whatif.rule import budget_expr
from diagnostics.words import listed, plural

#: How many settings "came close" FIX.md and the app list.
CLOSE = 4


#: Beside a recommendation that no finding asks for (nothing adjusted, dropped or held
#: back): it only lowers the release delay, so the fix leaves the job as it is.
OPTIONAL = (
    "optional: no finding asks for a change (nothing is adjusted or dropped); this setting "
    "only lowers the release delay, so --write-fix leaves the job as it is. A tolerance below "
    "the lateness this capture shows adjusts any later event in production: keep a margin "
    "over what a longer capture shows"
)


def setting_words(row: dict) -> str:
    """``late 90 s, out-of-order 40 s, OVER deviceId, PARTITION BY PartitionId, adjust``."""
    late = "unlimited" if row["late_arrival_s"] is None else f"{row['late_arrival_s']:g} s"
    parts = [f"late {late}", f"out-of-order {row['out_of_order_s']:g} s"]
    if row["over"]:
        parts.append(f"OVER {row['over']}")
    if row["partition_by"]:
        parts.append("PARTITION BY PartitionId")
    parts.append(str(row.get("action") or "adjust"))
    return ", ".join(parts)


def numbers_words(row: dict) -> str:
    """``39 adjusted, 0 dropped, p95 release delay 57.7 s``; events never released are
    counted beside the delay of those released (as the fix's before/after measures it)."""
    p95, never = row["delay_p95_s"], row["never_released"]
    if p95 is None:
        delay = "never released"
    else:
        delay = f"{p95:.1f} s" + (f" ({plural(never, 'event')} never released)" if never else "")
    return f"{row['adjusted']:,} adjusted, {row['dropped']:,} dropped, p95 release delay {delay}"


def _both(row: dict) -> str:
    return f"({setting_words(row)}) gives {numbers_words(row)}"


@dataclass(frozen=True)
class Proposed:
    """What the findings proposed: OVER keys, PARTITION BY, tolerances (seconds)."""

    over: tuple[str, ...] = ()
    partition_by: bool = False


def left_out(rec: Recommendation, proposed: Proposed) -> list[str]:
    """A sentence for each proposal the recommendation leaves out, with both numbers."""
    chosen = rec.row
    notes: list[str] = []
    if proposed.over and chosen["over"] != ",".join(proposed.over):
        key = ",".join(proposed.over)
        best = rec.best_with(over=key)
        if best is None:
            notes.append(
                f"OVER {key} (proposed by a finding) is not written: it was not measured on "
                "this capture"
            )
        else:
            notes.append(
                f"OVER {key} (proposed by a finding) is not written: the best setting with it "
                f"{_both(best)}; the recommended one {_both(chosen)}; under the rule "
                f"{_why(rec, best, chosen)}"
            )
    if proposed.partition_by and not chosen["partition_by"]:
        best = rec.best_with(partition_by=True)
        if best is not None:
            notes.append(
                "PARTITION BY PartitionId (proposed by a finding) is not written: the best "
                f"setting with it {_both(best)}; the recommended one {_both(chosen)}; under the "
                f"rule {_why(rec, best, chosen)}"
            )
    return notes


def _budget_pct(row: dict) -> float:
    """The share of the events a setting can change that ``row`` leaves adjusted or
    dropped (what the budget counts)."""
    if row.get("pct_budget") is not None:
        return float(row["pct_budget"])
    return float(row["pct_adjusted"] + row["pct_dropped"])


def _why(rec: Recommendation, other: dict, chosen: dict) -> str:
    """Why ``chosen`` won over ``other`` under the rule, in a few words."""
    budget = rec.rule.budget_pct
    a_other, a_chosen = _budget_pct(other), _budget_pct(chosen)
    if a_other > budget + 1e-12 >= a_chosen:
        return (
            f"it leaves {a_other:.2f}% of the events a setting can change adjusted or dropped, "
            f"above {budget:g}%"
        )
    d_other, d_chosen = other["delay_p95_s"], chosen["delay_p95_s"]
    if d_other is None or other["never_released"]:
        return "some events are never released under it"
    if d_chosen is not None and d_other > d_chosen + rec.rule.no_difference_s:
        return f"its p95 release delay is {d_other - d_chosen:.1f} s longer"
    return (
        f"it measures no difference that counts (p95 {d_other:.1f} s against "
        f"{d_chosen:.1f} s, within {rec.rule.no_difference_s:g} s), and the simpler setting "
        "is kept"
    )


def unsaveable_note(rec: Recommendation) -> str | None:
    """The events no setting can keep, counted apart from the budget, with their own fix
    (``None`` when there are none)."""
    lost = rec.unsaveable
    if not lost.total:
        return None
    events = int(rec.row["events"])
    kinds = []
    if lost.early:
        kinds.append(
            f"{plural(lost.early, 'event')} early beyond ASA's fixed 5-minute window (fix: "
            "synchronise the senders' clocks with NTP)"
        )
    if lost.invalid:
        kinds.append(
            f"{plural(lost.invalid, 'event')} without a valid time (fix: the senders' timestamps)"
        )
    share = f"{100 * lost.total / events:.2f}%" if events else "all"
    return (
        f"{plural(lost.total, 'event')} ({share}) no setting can keep, counted apart from the "
        f"budget: {listed(kinds)}; the budget is {rec.rule.budget_pct:g}% of the other "
        f"{events - lost.total:,} events"
    )


def clauses(rec: Recommendation, partitions: int) -> list[str]:
    """What each clause of the recommended setting is there for, with numbers, and the
    events no setting can keep (:func:`unsaveable_note`)."""
    chosen = rec.row
    notes: list[str] = []
    if chosen["over"] and chosen["partition_by"] and partitions > 1:
        notes.append(
            f"PARTITION BY PartitionId is written because OVER {chosen['over']} needs it on "
            f"an input of {partitions} partitions (ASA requires it)"
        )
    elif chosen["partition_by"]:
        without = rec.best_with(partition_by=False, over="")
        if without is not None:
            notes.append(
                "PARTITION BY PartitionId lets each partition release on its own: the best "
                f"setting without it {_both(without)}"
            )
    if chosen["over"]:
        without = rec.best_with(over="")
        if without is not None:
            notes.append(
                f"OVER {chosen['over']} gives each sender its own timeline: the best setting "
                f"without it {_both(without)}"
            )
    lost = unsaveable_note(rec)
    return notes + ([lost] if lost else [])


def came_close(rec: Recommendation, most: int = CLOSE) -> list[dict]:
    """The best measured setting of each other kind (OVER, PARTITION BY, action) within the
    budget, nearest p95 delay first: the settings that came close."""
    table = rec.table.filter(~pl.col("recommended"))
    budget = rec.rule.budget_pct + 1e-12
    table = table.filter(budget_expr() <= budget)
    best = (
        table.sort("delay_p95_s", nulls_last=True)
        .group_by("over", "partition_by", "action", maintain_order=True)
        .first()
        .sort("delay_p95_s", nulls_last=True)
    )
    return best.head(most).to_dicts()


def close_lines(rec: Recommendation, most: int = CLOSE) -> list[str]:
    """The settings that came close, each with its numbers and why it lost."""
    chosen = rec.row
    return [
        f"{setting_words(r)}: {numbers_words(r)}; not chosen: {_why(rec, r, chosen)}"
        for r in came_close(rec, most)
    ]


_GROUP_BY = re.compile(r"\bGROUP\s+BY\s+(.+?)(?:\bHAVING\b|\bINTO\b|\bSELECT\b|;|$)", re.I | re.S)


def aggregation_note(query: str | None, rec: Recommendation) -> str | None:
    """For a query that aggregates per key (``GROUP BY key, TumblingWindow(...)``), how
    PARTITION BY and OVER affect its results; ``None`` otherwise."""
    if not query:
        return None
    match = _GROUP_BY.search(query)
    if match is None or "window" not in match.group(1).lower():
        return None
    keys = [
        k.strip().split(".")[-1].strip("[]")
        for k in re.split(r",(?![^()]*\))", match.group(1))
        if "window" not in k.lower() and k.strip()
    ]
    if not keys:
        return None
    chosen = rec.row
    over = [k for k in chosen["over"].split(",") if k]
    text = f"The query aggregates per {listed(keys)} in windows. "
    if over and {k.lower() for k in over} <= {k.lower() for k in keys}:
        text += (
            f"With OVER {', '.join(over)} each {over[0]}'s windows close on its own events' "
            "times, so a late sender no longer holds back or shifts the windows of the others; "
            f"the window results per {over[0]} are those of its own events"
        )
    elif over:
        text += (
            f"OVER {', '.join(over)} orders events per {over[0]}, which is not a key of the "
            "aggregation: a window can close for one sender before another's late events arrive, "
            "and those events then count in a later window"
        )
    else:
        text += "Without OVER, every window waits for the slowest sender of its partition"
    if chosen["partition_by"]:
        text += (
            "; PARTITION BY PartitionId computes each partition's windows on its own, which "
            f"gives the same results as long as each {keys[0]} sends to one partition"
        )
    return text + "."


def explain_choice(
    rec: Recommendation, proposed: Proposed, partitions: int, query: str | None = None
) -> list[str]:
    """Every sentence of why: the sender column, left out, clauses, aggregation."""
    senders = (
        [f"sender column: {rec.senders.column} ({rec.senders.reason})"]
        if rec.senders is not None and rec.senders.column
        else []
    )
    notes = senders + left_out(rec, proposed) + clauses(rec, partitions)
    note = aggregation_note(query, rec)
    return notes + ([note] if note else [])
