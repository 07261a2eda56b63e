"""A fleet's causes told apart: groups of senders whose lateness stands apart from the fleet's,
read from a replayed capture (docs/explain.md, "A fleet's causes").

Per sender (the column :mod:`diagnostics.whatif.senders` chooses), vectorised: events, the
median lateness and its p10-p90 spread, and the late, early and out-of-order events. The
fleet's typical sender (the median of the senders' medians and spreads) is the yardstick:

* **fast clocks**: a constant offset (spread at most :data:`CONSTANT_SPREAD_S` or a tenth of
  the offset) at least :data:`OFFSET_MIN_S` ahead of the typical sender, most events early;
* **slow clocks**: the same, behind, most events late;
* **batching**: a spread at least :data:`BATCH_SPREAD_MIN_S` (and ten times the typical one),
  some events late, and arrivals in bursts at a regular period (:func:`period_of`): a gateway
  that uploads its devices' readings in batches, so that their lateness is a sawtooth.

Senders of one kind form one group per offset (clocks within :data:`OFFSET_APART` of each
other) or per period (within 10 %). A group whose senders are all those of one or a few values
of another column (``gatewayId`` ``gw-02``) names that column too. Lateness beyond a day either
way (far-off or historical times) is left to the other causes.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

import numpy as np
import polars as pl

from diagnostics.whatif.sender_names import eligible_columns, names_a_sender

#: Lateness beyond this (either way) is not a sender's pattern (far-off or historical times).
FAR_S = 86_400.0
#: A clock group's offset from the typical sender, at least.
OFFSET_MIN_S = 2.0
#: A constant offset spreads at most this much (or a tenth of the offset).
CONSTANT_SPREAD_S = 2.0
#: A batching sender's lateness spreads at least this much.
BATCH_SPREAD_MIN_S = 5.0
#: Clock offsets further apart than this (or 10 %) are separate groups.
OFFSET_APART = 2.0
#: Arrivals further apart than this (and ten typical gaps) start a new burst.
BURST_GAP_S = 1.0
#: A period is regular when the spacing's interquartile range is at most this share of it.
REGULAR = 0.25
#: Senders with fewer events are not classified.
MIN_EVENTS = 5
#: A column names a group (a gateway) when this share of its values' senders is in the group.
GATEWAY_SHARE = 0.8


class GroupKind(StrEnum):
    """What a group of senders has in common."""

    BATCHING = "batching"
    SLOW_CLOCKS = "slow_clocks"
    FAST_CLOCKS = "fast_clocks"


@dataclass(frozen=True)
class SenderGroup:
    """Senders (values of ``column``) with one cause. Counts are of all their events;
    lateness quantiles (seconds) of those within a day; ``offset_s``: their median lateness
    less the typical sender's (``typical_s``); ``spread_s``: their typical p10-p90 spread;
    ``period_s``/``bursts``: a batching group's upload period and the bursts seen;
    ``gateway``: the column and values whose senders these are, if any."""

    kind: GroupKind
    column: str
    senders: tuple[str, ...]
    events: int
    late: int
    early: int
    out_of_order: int
    offset_s: float
    spread_s: float
    typical_s: float
    #: lateness quantiles; for fast clocks how early (application − arrival), earliest tail
    lateness: dict[str, float | None] = field(default_factory=dict)
    partitions: dict[int, int] = field(default_factory=dict)
    period_s: float | None = None
    bursts: int | None = None
    gateway: tuple[str, tuple[str, ...]] | None = None

    @property
    def affected(self) -> int:
        """The events the cause costs: early for fast clocks, else late."""
        return self.early if self.kind is GroupKind.FAST_CLOCKS else self.late

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "kind": self.kind.value,
            "column": self.column,
            "senders": list(self.senders),
            "events": self.events,
            "offset_seconds": self.offset_s,
            "period_seconds": self.period_s,
            **({"gateway": {self.gateway[0]: list(self.gateway[1])}} if self.gateway else {}),
        }


def _round(value: Any) -> float:
    return round(float(value), 3)


def per_sender(frame: pl.DataFrame) -> pl.DataFrame:
    """One row per sender of ``frame`` (``s`` sender, ``l`` lateness s, ``late``, ``early``,
    ``ooo`` flags): ``n``, ``mid``, ``spread`` (p10-p90), ``late``, ``early``, ``ooo``,
    ``share_late``, ``share_early`` (of the events with a lateness within a day)."""
    near = pl.col("l").is_not_null() & (pl.col("l").abs() <= FAR_S)
    return (
        frame.group_by("s")
        .agg(
            near.sum().alias("n"),
            pl.col("l").filter(near).median().alias("mid"),
            (pl.col("l").filter(near).quantile(0.9) - pl.col("l").filter(near).quantile(0.1)).alias(
                "spread"
            ),
            pl.col("late").sum().alias("late"),
            pl.col("early").sum().alias("early"),
            pl.col("ooo").sum().alias("ooo"),
            (pl.col("late") & near).sum().alias("n_late"),
            (pl.col("early") & near).sum().alias("n_early"),
        )
        .with_columns(
            (pl.col("n_late") / pl.col("n")).alias("share_late"),
            (pl.col("n_early") / pl.col("n")).alias("share_early"),
        )
        .sort("s")
    )


def period_of(arrival_ns: np.ndarray) -> tuple[float, int] | None:
    """The period (s) and number of the bursts ``arrival_ns`` (sorted) arrive in, when they
    arrive in bursts at a regular spacing; ``None`` otherwise. A burst starts after a gap of
    more than :data:`BURST_GAP_S` and ten typical gaps; the spacing of the bursts' starts is
    regular when its interquartile range is at most :data:`REGULAR` of its median."""
    if arrival_ns.size < 2 * MIN_EVENTS:
        return None
    gaps = np.diff(arrival_ns)
    cut = max(BURST_GAP_S * 1e9, 10.0 * float(np.median(gaps)))
    starts = arrival_ns[np.r_[0, np.flatnonzero(gaps > cut) + 1]]
    if starts.size < 4 or starts.size > arrival_ns.size / 2:
        return None
    spacing = np.diff(starts)
    period = float(np.median(spacing))
    q1, q3 = np.quantile(spacing, [0.25, 0.75])
    if period <= 0 or (q3 - q1) > REGULAR * period:
        return None
    return round(period / 1e9, 1), int(starts.size)


def _split(values: list[tuple[float, str]], apart: float, share: float) -> list[list[str]]:
    """Senders sorted by value, cut where neighbours differ by more than ``apart`` and
    ``share`` of the value."""
    groups: list[list[str]] = []
    last: float | None = None
    for value, sender in sorted(values):
        if last is None or abs(value - last) > max(apart, share * abs(last)):
            groups.append([])
        groups[-1].append(sender)
        last = value
    return groups


def _gateway(
    frame: pl.DataFrame, key: str, senders: list[str], exclude: set[str]
) -> tuple[str, tuple[str, ...]] | None:
    """A column whose values each belong to one sender group: every sender of the group has
    one value of it, and :data:`GATEWAY_SHARE` of each value's senders are in the group."""
    found: list[tuple[bool, int, str, tuple[str, ...]]] = []
    wanted = pl.col(key).cast(pl.String).is_in(senders)
    for column in eligible_columns(frame, {*exclude, key}):
        sub = frame.filter(wanted & pl.col(column).is_not_null())
        per = sub.group_by(key).agg(pl.col(column).n_unique().alias("u"))
        if per.height < len(senders) or per["u"].max() != 1:
            continue
        values = sub[column].unique().sort()
        if values.len() > max(1, len(senders) // 2):
            continue
        owners = frame.filter(pl.col(column).is_in(values.implode()) & pl.col(key).is_not_null())
        owned = owners[key].cast(pl.String).n_unique()
        if owned and len(senders) / owned >= GATEWAY_SHARE:
            shown = tuple(str(v) for v in values.to_list())
            found.append((not names_a_sender(column), values.len(), column, shown))
    if not found:
        return None
    _, _, column, shown = min(found)
    return column, shown


def sender_groups(
    out: pl.DataFrame, key: str, lateness: pl.Series, exclude: set[str]
) -> tuple[SenderGroup, ...]:
    """The groups of senders of ``out`` (a replay's outcomes, input order) by ``key``;
    ``lateness``: each event's arrival − application time (s); ``exclude``: columns that are
    no gateway (times, arrival, partition, the engine's own)."""
    frame = pl.DataFrame(
        {
            "s": out[key].cast(pl.String),
            "l": lateness,
            "late": out["late"],
            "early": out["early"],
            "ooo": out["out_of_order"],
            "a": out["arrival"].dt.epoch("ns"),
            "p": out["partition"],
        }
    ).filter(pl.col("s").is_not_null())
    stats = per_sender(frame).filter(pl.col("n") >= MIN_EVENTS)
    if stats.height < 2:
        return ()
    typical = float(stats["mid"].median())  # type: ignore[arg-type]
    usual_spread = float(stats["spread"].median())  # type: ignore[arg-type]
    offset = pl.col("mid") - typical
    constant = (pl.col("spread") <= pl.max_horizontal(CONSTANT_SPREAD_S, offset.abs() / 10)) & (
        offset.abs() >= OFFSET_MIN_S
    )
    fast = stats.filter(constant & (offset < 0) & (pl.col("share_early") >= 0.5))
    slow = stats.filter(constant & (offset > 0) & (pl.col("share_late") >= 0.5))
    wide = stats.filter(
        (pl.col("spread") >= max(BATCH_SPREAD_MIN_S, 10 * usual_spread)) & (pl.col("late") > 0)
    )
    found: list[tuple[GroupKind, list[str], float | None, int | None]] = []
    for kind, rows in ((GroupKind.FAST_CLOCKS, fast), (GroupKind.SLOW_CLOCKS, slow)):
        pairs = list(zip((rows["mid"] - typical).to_list(), rows["s"].to_list(), strict=True))
        found += [(kind, g, None, None) for g in _split(pairs, OFFSET_APART, 0.1)]
    found += _batching(frame, wide["s"].to_list())
    return tuple(
        _group(frame, out, key, kind, senders, typical, period, bursts, exclude)
        for kind, senders, period, bursts in found
    )


def _batching(
    frame: pl.DataFrame, senders: list[str]
) -> list[tuple[GroupKind, list[str], float | None, int | None]]:
    """The batching groups among ``senders``: all of them when their arrivals together burst
    at a regular period, else per sender, grouped by period (within 10 %)."""
    if not senders:
        return []
    rows = frame.filter(pl.col("s").is_in(senders)).sort("s", "a")
    pooled = period_of(np.sort(rows["a"].to_numpy()))
    if pooled is not None:
        return [(GroupKind.BATCHING, sorted(senders), *pooled)]
    periods: list[tuple[float, str]] = []
    for sender, part in rows.group_by("s", maintain_order=True):
        found = period_of(part["a"].to_numpy())
        if found is not None:
            periods.append((found[0], str(sender[0])))
    out: list[tuple[GroupKind, list[str], float | None, int | None]] = []
    for group in _split(periods, 0.0, 0.1):
        arrivals = np.sort(rows.filter(pl.col("s").is_in(group))["a"].to_numpy())
        pooled = period_of(arrivals)
        by_sender = [p for p, s in periods if s in group]
        period = pooled[0] if pooled else float(np.median(by_sender))
        out.append((GroupKind.BATCHING, sorted(group), period, pooled[1] if pooled else None))
    return out


def _group(
    frame: pl.DataFrame,
    out: pl.DataFrame,
    key: str,
    kind: GroupKind,
    senders: list[str],
    typical: float,
    period: float | None,
    bursts: int | None,
    exclude: set[str],
) -> SenderGroup:
    rows = frame.filter(pl.col("s").is_in(senders))
    near = rows.filter(pl.col("l").is_not_null() & (pl.col("l").abs() <= FAR_S))
    stats = per_sender(rows)
    # fast clocks: how early (arrival before application time), so the tails are the earliest
    values = -near["l"] if kind is GroupKind.FAST_CLOCKS else near["l"]
    parts = rows.group_by("p").len().sort("p")
    return SenderGroup(
        kind=kind,
        column=key,
        senders=tuple(sorted(senders)),
        events=rows.height,
        late=int(rows["late"].sum()),
        early=int(rows["early"].sum()),
        out_of_order=int(rows["ooo"].sum()),
        offset_s=_round(float(stats["mid"].median()) - typical),  # type: ignore[arg-type]
        spread_s=_round(stats["spread"].median()),
        typical_s=_round(typical),
        lateness={
            "p50_seconds": _round(values.quantile(0.5, "higher")),
            "p99_9_seconds": _round(values.quantile(0.999, "higher")),
            "max_seconds": _round(values.max()),
        }
        if values.len()
        else {},
        partitions={int(p): int(n) for p, n in zip(parts["p"], parts["len"], strict=True)},
        period_s=period,
        bursts=bursts,
        gateway=_gateway(out, key, senders, exclude),
    )


def grouped_senders(groups: tuple[SenderGroup, ...], *, early: bool) -> list[str]:
    """The senders of the groups whose findings count their early events (fast clocks,
    ``early``) or their late events (the others)."""
    return sorted(
        {s for g in groups if (g.kind is GroupKind.FAST_CLOCKS) is early for s in g.senders}
    )


_NUMBERED = re.compile(r"^(.*?)(\d+)$")


def compact(names: Sequence[str]) -> str:
    """Sender names with runs of consecutive numbers as ranges: ``dev-040..dev-059, dev-077``
    (names sorted; zero-padded numbers of one width count as a run)."""
    runs: list[list[str]] = []
    last: tuple[str, int, int] | None = None
    for name in sorted(names):
        match = _NUMBERED.match(name)
        here = (match.group(1), int(match.group(2)), len(match.group(2))) if match else None
        if (
            here is not None
            and last is not None
            and here[0] == last[0]
            and here[2] == last[2]
            and here[1] == last[1] + 1
        ):
            runs[-1].append(name)
        else:
            runs.append([name])
        last = here
    return ", ".join(", ".join(r) if len(r) < 3 else f"{r[0]}..{r[-1]}" for r in runs)
