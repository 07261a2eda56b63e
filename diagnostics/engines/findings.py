"""Findings in Flink's or Spark's own terms: why a replay under the engine's rules dropped or
delayed events, the evidence, and the engine setting that fixes it (the what-if's
recommendation, :mod:`diagnostics.whatif.engines`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from diagnostics.durations import SECOND, format_duration
from diagnostics.engines.policy import EngineRules, FlinkRules, FlinkVersion
from diagnostics.engines.summary import drop_counter
from diagnostics.kinds import Severity
from diagnostics.whatif.engines import EngineRecommendation, describe_setting
from diagnostics.words import noun


@dataclass(frozen=True, slots=True)
class EngineFinding:
    """One cause: what happened (``title``), why, the evidence and the fix."""

    severity: Severity
    title: str
    why: str
    evidence: tuple[str, ...]
    fix: str | None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {
            "severity": self.severity.value,
            "title": self.title,
            "why": self.why,
            "evidence": list(self.evidence),
            "fix": self.fix,
        }


def _engine(rules: EngineRules) -> str:
    return "Flink" if isinstance(rules, FlinkRules) else "Spark"


def _measured(row: dict) -> str:
    return (
        f"dropped {row['dropped']:,} ({row['pct_dropped']:g}%), p95 emission delay "
        f"{row['delay_p95_s']} s"
    )


def _fix(rec: EngineRecommendation) -> str | None:
    if rec.rules == rec.current:
        return None
    return (
        f"{describe_setting(rec.rules)}: {_measured(rec.row)} (now: {_measured(rec.current_row)})"
    )


def dropped_finding(out: pl.DataFrame, rec: EngineRecommendation) -> EngineFinding | None:
    """The events the engine drops as late, if any."""
    rules = rec.current
    dropped = out.filter(pl.col("dropped") & ~pl.col("invalid_timestamp"))
    if dropped.is_empty():
        return None
    n, total = dropped.height, out.height
    engine = _engine(rules)
    if isinstance(rules, FlinkRules):
        lateness = (
            f" + allowedLateness({format_duration(rules.allowed_lateness_ns)})"
            if rules.allowed_lateness_ns
            else ""
        )
        idle = (
            ""
            if rules.idleness_ns is None or rules.version is FlinkVersion.V2_1
            else f"; Flink {rules.version.value} takes the maximum while every split is idle"
        )
        why = (
            "each arrived when the watermark (the minimum over the active splits of the largest "
            f"event time seen − {format_duration(rules.out_of_orderness_ns)} − 1 ms{idle}) had "
            f"passed the end of its {format_duration(rules.window_ns)} window{lateness}"
        )
    else:
        why = (
            "each arrived in a micro-batch whose previous batch's watermark (the largest event "
            f"time of earlier micro-batches − {format_duration(rules.watermark_delay_ns)}) was "
            f"at or past the end of its {format_duration(rules.window_ns)} window"
        )
    behind = (
        dropped["watermark"] - dropped["application_time"]
    ).dt.total_nanoseconds().to_numpy() / SECOND
    evidence = [
        f"behind the watermark by up to {behind.max():.3f} s "
        f"(median {float(np.median(behind)):.3f} s)",
    ]
    by_part = (
        dropped.group_by("partition").len().sort(["len", "partition"], descending=[True, False])
    )
    evidence += [
        f"partition {p}: {c:,} {noun(c, 'event')} dropped" for p, c in by_part.head(3).iter_rows()
    ]
    fix = _fix(rec)
    keep = rec.least_delay_keeping_all()
    if keep is not None and keep[0] != rec.rules:
        also = f"{describe_setting(keep[0])}: {_measured(keep[1])}"
        fix = f"{fix}; to keep every event: {also}" if fix else f"to keep every event: {also}"
    return EngineFinding(
        Severity.CRITICAL if 100 * n / total > rec.rule.budget_pct else Severity.WARNING,
        f"{engine} drops {n:,} of {total:,} {noun(total, 'event')} as late ({drop_counter(rules)})",
        why,
        tuple(evidence),
        fix,
    )


def held_back_finding(out: pl.DataFrame, rec: EngineRecommendation) -> EngineFinding | None:
    """Flink: a silent split held the watermark (the minimum over the splits) back, and the
    recommended idleness lowers the emission delay by more than the no-difference threshold."""
    rules, best = rec.current, rec.rules
    if not isinstance(rules, FlinkRules) or not isinstance(best, FlinkRules):
        return None
    now, then = rec.current_row["delay_p95_s"], rec.row["delay_p95_s"]
    if best.idleness_ns == rules.idleness_ns or now is None or then is None:
        return None
    if now - then <= rec.rule.no_difference_s:
        return None
    part, gap = longest_silence(out)
    return EngineFinding(
        Severity.WARNING,
        f"a silent split held Flink's watermark back: p95 emission delay {now} s",
        "the watermark is the minimum over the splits; a split that sends nothing holds it "
        "until withIdleness marks the split idle",
        (f"partition {part} sent nothing for {format_duration(gap)}",),
        _fix(rec),
    )


def pushed_finding(out: pl.DataFrame, rec: EngineRecommendation) -> EngineFinding | None:
    """Events stamped ahead of their arrival moved the watermark forward and made later
    events late (:mod:`diagnostics.engines.pushers`)."""
    from diagnostics.engines.pushers import watermark_pushers

    found = watermark_pushers(out, rec.current)
    if found is None:
        return None
    engine = _engine(rec.current)
    lines = found.lines(engine)
    return EngineFinding(
        Severity.WARNING,
        f"events stamped ahead of their arrival made {found.made_late:,} later "
        f"{noun(found.made_late, 'event')} late",
        f"{engine}'s watermark follows the largest event time seen and never goes back: a "
        "sender whose clock runs fast (or a far-off time) moves it past the time the engine "
        "reads at, and events with a correct clock arriving after it are behind it. ASA's "
        "early window drops events more than 5 minutes ahead of their arrival; "
        f"{engine} has none: check the senders' clocks, or filter such events before the "
        "watermark",
        tuple(lines),
        None,
    )


def longest_silence(out: pl.DataFrame) -> tuple[int, int]:
    """The partition with the longest stretch without events (from the capture's first
    arrival to its last, whole seconds) and that stretch (ns)."""
    arrival = out["arrival"].dt.epoch("ns").to_numpy()
    part = out["partition"].to_numpy()
    start, end = int(arrival.min()), int(arrival.max())
    best = (int(part[0]), -1)
    for p in np.unique(part):
        times = np.sort(arrival[part == p])
        gap = int(np.diff(np.concatenate(([start], times, [end]))).max())
        if gap > best[1]:
            best = (int(p), gap)
    return best[0], best[1] // SECOND * SECOND


def engine_findings(out: pl.DataFrame, rec: EngineRecommendation) -> list[EngineFinding]:
    """The findings of a replay under the job's engine settings, most important first."""
    found = [
        f
        for f in (dropped_finding(out, rec), pushed_finding(out, rec), held_back_finding(out, rec))
        if f is not None
    ]
    if not found and rec.rules != rec.current:
        found.append(
            EngineFinding(
                Severity.INFO,
                f"{_engine(rec.current)} keeps every event; a setting emits output sooner",
                "a smaller bound or delay emits windows sooner while dropping within the budget",
                (),
                _fix(rec),
            )
        )
    return sorted(found, key=lambda f: -f.severity.rank)


def render_findings(findings: list[EngineFinding], rec: EngineRecommendation) -> str:
    """The findings and the recommendation as text."""
    engine = _engine(rec.current)
    lines = [f"{engine} rules: {rec.current.describe()}"]
    if not findings:
        lines.append(f"no finding: {engine} keeps every event and no setting measured better")
    for i, f in enumerate(findings, 1):
        lines += ["", f"{i}. [{f.severity.value}] {f.title}", f"   why: {f.why}"]
        lines += [f"   - {e}" for e in f.evidence]
        if f.fix:
            lines.append(f"   fix: {f.fix}")
    lines += [
        "",
        f"recommended: {describe_setting(rec.rules)} ({_measured(rec.row)}; rule: least p95 "
        f"emission delay with dropped <= {rec.rule.budget_pct:g}% of the events)",
    ]
    return "\n".join(lines)
