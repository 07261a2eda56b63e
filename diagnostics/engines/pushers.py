"""Events that moved another engine's watermark forward and so made later events late
(docs/engines.md, "Why the other engine drops events").

Flink's and Spark's watermarks follow the largest event time seen (per split, or over the
whole input) and never go back. An event stamped ahead of its own arrival by more than the
engine's bound (a sender whose clock runs fast, a far-off time such as 2099) moves the
watermark past the time the engine is reading at, and every event with a correct clock that
arrives after it is behind that watermark. ASA's early window drops events more than 5
minutes ahead and its late arrival tolerance bounds the rest, so ASA keeps those events.

The count of events they made late is measured, not guessed: the capture is replayed again
under the same rules with those events' times set back to their arrival (as if their clocks
were right), and the events dropped the first time but kept the second are counted.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

import numpy as np
import polars as pl

from diagnostics.durations import SECOND, format_duration
from diagnostics.engine.columns import EventColumns
from diagnostics.engines.policy import EngineRules, FlinkRules
from diagnostics.engines.replay import replay_rules
from diagnostics.scalars import as_datetime
from diagnostics.whatif.senders import choose_senders, lateness_seconds

#: An event counts as ahead when its time is past its arrival by more than the engine's
#: bound plus this (clock jitter of a few milliseconds moves nothing that matters).
MARGIN_NS = SECOND
#: Senders named at most.
MOST_SENDERS = 5


@dataclass(frozen=True, slots=True)
class Sender:
    """One sender whose events moved the watermark forward: how many did, the first one's
    arrival and time, and how far ahead of its arrival the farthest one was (ns)."""

    name: str | None
    events: int
    first_arrival: datetime
    first_time: datetime
    most_ahead_ns: int


@dataclass(frozen=True, slots=True)
class WatermarkPushers:
    """The events that moved the watermark forward (``ahead``: how many, of ``senders`` by
    ``column``), the events they made late (``made_late`` of the ``dropped``), the highest
    watermark they set and the event that set it, and the farthest the watermark got ahead
    of the events arriving (``lead_ns``, at ``lead_arrival``)."""

    column: str | None
    ahead: int
    senders: tuple[Sender, ...]
    made_late: int
    dropped: int
    lead_ns: int
    lead_watermark: datetime | None
    lead_arrival: datetime | None

    def lines(self, engine: str) -> list[str]:
        """The finding in a few lines of prose."""
        who = f"{self.column} " if self.column else ""
        lines = [
            f"{self.ahead:,} event{'s' if self.ahead != 1 else ''} stamped ahead of their "
            f"arrival moved {engine}'s watermark forward and made {self.made_late:,} of the "
            f"{self.dropped:,} dropped events late (replayed with those times set back to "
            "their arrival, they are kept)"
        ]
        if self.lead_watermark is not None and self.lead_arrival is not None:
            lines.append(
                f"the watermark was already at {_when(self.lead_watermark)} while events "
                f"were arriving at {_when(self.lead_arrival)} "
                f"({format_duration(self.lead_ns)} ahead)"
            )
        for s in self.senders:
            lines.append(
                f"{who}{s.name if s.name is not None else '(all)'}: {s.events:,} "
                f"event{'s' if s.events != 1 else ''} up to {format_duration(s.most_ahead_ns)} "
                f"ahead, the first stamped {_when(s.first_time)}, arriving at "
                f"{_when(s.first_arrival)}"
            )
        return lines

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {
            "sender_column": self.column,
            "events_ahead": self.ahead,
            "made_late": self.made_late,
            "dropped": self.dropped,
            "watermark_lead_seconds": self.lead_ns / SECOND,
            "watermark_at": None
            if self.lead_watermark is None
            else self.lead_watermark.isoformat(),
            "arriving_at": None if self.lead_arrival is None else self.lead_arrival.isoformat(),
            "senders": [
                {
                    "sender": s.name,
                    "events": s.events,
                    "first_arrival": s.first_arrival.isoformat(),
                    "first_time": s.first_time.isoformat(),
                    "most_ahead_seconds": s.most_ahead_ns / SECOND,
                }
                for s in self.senders
            ],
        }


def _when(t: datetime) -> str:
    return t.strftime("%Y-%m-%d %H:%M:%S")


def bound_ns(rules: EngineRules) -> int:
    """How far behind the largest time seen the engine's watermark stays."""
    if isinstance(rules, FlinkRules):
        return rules.out_of_orderness_ns
    return rules.watermark_delay_ns


def watermark_pushers(out: pl.DataFrame, rules: EngineRules) -> WatermarkPushers | None:
    """The events of ``out`` (a replay under ``rules``) that moved the watermark forward
    while ahead of their arrival, and the events they made late; ``None`` when none did or
    none of the dropped events is owed to them."""
    t = out["application_time"].dt.epoch("ns")
    arrival = out["arrival"].dt.epoch("ns")
    ahead_ns = (t - arrival).fill_null(np.iinfo(np.int64).min).to_numpy()
    ahead = ahead_ns > bound_ns(rules) + MARGIN_NS
    dropped = (out["dropped"] & ~out["invalid_timestamp"]).to_numpy()
    if not ahead.any() or not dropped.any():
        return None
    group = out["timeline"].to_numpy() if isinstance(rules, FlinkRules) else np.zeros(out.height)
    raised = ahead & _raises_max(
        arrival.to_numpy(), t.fill_null(np.iinfo(np.int64).min).to_numpy(), group
    )
    if not raised.any():
        return None
    fixed_t = np.where(ahead, arrival.to_numpy(), t.fill_null(0).to_numpy())
    again = _replay_with_times(out, rules, fixed_t)
    owed = dropped & ~ahead & ~again
    made_late = int(owed.sum())
    if made_late == 0:
        return None
    column = _sender_column(out, rules)
    return WatermarkPushers(
        column,
        int(raised.sum()),
        _senders(out, raised, ahead_ns, column),
        made_late,
        int(dropped.sum()),
        *_lead(out.filter(pl.Series(owed))),
    )


def _raises_max(arrival: np.ndarray, t: np.ndarray, group: np.ndarray) -> np.ndarray:
    """Events whose time is a new largest one on their group, taken in arrival order."""
    order = np.lexsort((np.arange(len(arrival)), arrival))
    frame = pl.DataFrame({"g": group[order], "t": t[order]})
    before = frame.select(pl.col("t").cum_max().shift(1).over("g").alias("m"))["m"]
    new = (frame["t"] > before.fill_null(np.iinfo(np.int64).min)).to_numpy()
    out = np.zeros(len(arrival), dtype=bool)
    out[order] = new
    return out


def _replay_with_times(out: pl.DataFrame, rules: EngineRules, times: np.ndarray) -> np.ndarray:
    """``dropped`` of the same replay with each event's time set to ``times`` (ns)."""
    valid = ~out["invalid_timestamp"].to_numpy()
    stamp = pl.Series("__t", times).cast(pl.Datetime("ns", "UTC"))
    frame = pl.DataFrame(
        {
            "__arr": out["arrival"],
            "__part": out["partition"],
            "__t": stamp.set(pl.Series(~valid), None),
        }
    )
    columns = EventColumns(arrival="__arr", partition="__part")
    again = replay_rules(
        frame,
        replace(rules, event_time="__t"),
        partitions=sorted(set(out["partition"].to_list())),
        columns=columns,
    )
    return again.outcomes["dropped"].to_numpy()


def _sender_column(out: pl.DataFrame, rules: EngineRules) -> str | None:
    """The capture's sender column by the one rule
    (:func:`diagnostics.whatif.senders.choose_senders`, on the events' lateness)."""
    from diagnostics.engine.columns import OUTCOME_COLUMNS

    events = out.drop([c for c in OUTCOME_COLUMNS if c in out.columns])
    lateness = lateness_seconds(out["arrival"], out["application_time"])
    exclude = (rules.event_time, "arrival_time", "partition_id")
    partition = out["partition"] if "partition" in out.columns else None
    return choose_senders(events, lateness, exclude, partition).column


def _senders(
    out: pl.DataFrame, raised: np.ndarray, ahead_ns: np.ndarray, column: str | None
) -> tuple[Sender, ...]:
    frame = out.select(
        (pl.col(column).cast(pl.String) if column else pl.lit(None, pl.String)).alias("s"),
        "arrival",
        "application_time",
    ).with_columns(pl.Series("ahead", ahead_ns), pl.Series("raised", raised))
    frame = frame.filter(pl.col("raised")).sort("arrival")
    grouped = (
        frame.group_by("s", maintain_order=True)
        .agg(
            pl.len().alias("n"),
            pl.col("arrival").first().alias("a"),
            pl.col("application_time").first().alias("t"),
            pl.col("ahead").max().alias("most"),
        )
        .sort(["n", "most"], descending=True)
        .head(MOST_SENDERS)
    )
    return tuple(
        Sender(
            row["s"], int(row["n"]), as_datetime(row["a"]), as_datetime(row["t"]), int(row["most"])
        )
        for row in grouped.iter_rows(named=True)
    )


def _lead(owed: pl.DataFrame) -> tuple[int, datetime | None, datetime | None]:
    """How far the watermark was ahead of the arrival of the first event they made late."""
    gone = owed.filter(pl.col("watermark").is_not_null()).sort("arrival")
    if gone.is_empty():
        return 0, None, None
    first = gone.row(0, named=True)
    lead = int((first["watermark"] - first["arrival"]).total_seconds() * SECOND)
    return max(0, lead), as_datetime(first["watermark"]), as_datetime(first["arrival"])
