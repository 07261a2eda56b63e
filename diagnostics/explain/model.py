"""The findings model: causes, suggestions, findings and the report, as frozen data.

Invariants: a :class:`Finding`'s ``confidence`` is in 0..1; a :class:`Report` holds its
findings most important first (see :func:`diagnostics.explain.rank.rank`); ``to_dict`` gives
plain JSON-ready values only.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from types import MappingProxyType
from typing import Any, NotRequired, TypedDict

from diagnostics.errors import Setting
from diagnostics.kinds import Severity


class Cause(StrEnum):
    """Why events were adjusted, dropped or delayed (one per finding)."""

    IDLE_PARTITION = "idle_partition"
    LATE_ARRIVALS = "late_arrivals"
    EARLY_ARRIVALS = "early_arrivals"
    BATCHING_SENDERS = "batching_senders"
    SLOW_CLOCKS = "slow_clocks"
    FAST_CLOCKS = "fast_clocks"
    OUT_OF_ORDER = "out_of_order"
    HISTORICAL_REPLAY = "historical_replay"
    TOLERANCE_TOO_LOOSE = "tolerance_too_loose"
    INVALID_TIMESTAMPS = "invalid_timestamps"
    HOT_PARTITION = "hot_partition"
    CTI_VIOLATIONS = "cti_violations"
    INPUT_DATA_ERRORS = "input_data_errors"
    OUTPUT_DATA_ERRORS = "output_data_errors"
    UNKNOWN_DATA_ERRORS = "unknown_data_errors"
    WATERMARK_DELAY = "watermark_delay"
    HEALTHY = "healthy"


class SuggestionKind(StrEnum):
    """What a suggestion changes."""

    LATE_ARRIVAL_TOLERANCE = "late_arrival_tolerance"
    OUT_OF_ORDER_TOLERANCE = "out_of_order_tolerance"
    PARTITION_BY = "partition_by"
    TIMESTAMP_BY_OVER = "timestamp_by_over"
    FEED_ALL_PARTITIONS = "feed_all_partitions"
    FIX_SENDER_CLOCKS = "fix_sender_clocks"
    FLUSH_MORE_OFTEN = "flush_more_often"
    FIX_PAYLOAD = "fix_payload"
    SEPARATE_REPLAY_JOB = "separate_replay_job"
    SCALE_OUT = "scale_out"
    CTI_DELAY = "cti_delay"
    FIX_INPUT_DATA = "fix_input_data"
    FIX_OUTPUT_SCHEMA = "fix_output_schema"
    MEASURE_LATENESS = "measure_lateness"
    INSPECT_RECORDS = "inspect_records"


class SnippetForm(StrEnum):
    """What a suggestion's text is, so that a page shows it right: sentences as text, query
    text and settings as code."""

    #: what to do, in words (sentences; shown as text, whole)
    PROSE = "prose"
    #: a portal setting with its value (``Event ordering > Events that arrive late: ...``)
    SETTING = "setting"
    #: ASA query text (``FROM input PARTITION BY PartitionId``)
    QUERY = "query"
    #: program code of another product (StreamInsight's C#)
    CODE = "code"


@dataclass(frozen=True, slots=True)
class Suggestion:
    """One concrete change. ``value_seconds`` is set for tolerances and delays (``None`` for
    an unlimited tolerance or a change without a value); ``snippet`` is the exact ASA query
    text or portal setting to apply, or what to do in words, as ``form`` says; ``settings``:
    the settings that doing it gives orderdoc (the command line adds their flags, the app
    its fields)."""

    kind: SuggestionKind
    value_seconds: float | None
    snippet: str
    settings: tuple[Setting, ...] = ()
    form: SnippetForm = SnippetForm.PROSE

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "kind": self.kind.value,
            "value_seconds": self.value_seconds,
            "snippet": self.snippet,
            "form": self.form.value,
        }


class Impact(TypedDict):
    """What a finding's cause costs, JSON-ready (keys absent unless the cause sets them).

    ``events_affected``: events adjusted or dropped because of the cause; ``delay_seconds``:
    release delay it adds (0 when none); ``dropped``: how many of the affected were dropped;
    ``effect``: what happens to the events, in words; ``fix_adds_release_delay_seconds``: the
    release delay the suggested fix adds (``None``: it can hold output back indefinitely);
    ``fix_release_delay_p95_seconds`` / ``release_delay_p95_now_seconds``: with a capture, the
    p95 release delay measured under the one recommended setting and under the job as it is;
    ``consequence_of``: the cause (value of :class:`Cause`) this finding follows from;
    ``events_on_hot_partition``, ``events_caught``: counts some causes add; ``lost``: the
    affected events are lost (data errors), not moved by a time rule; ``minimum``:
    ``events_affected`` is a lower bound (some log records named no count); ``delay``: the
    delay in words (e.g. unknown without the job's late tolerance); ``fate_unknown``: the
    logs report the events but not what happened to them (a kind orderdoc does not know).
    """

    events_affected: int
    delay_seconds: float
    dropped: NotRequired[int]
    effect: NotRequired[str]
    fix_adds_release_delay_seconds: NotRequired[float | None]
    fix_release_delay_p95_seconds: NotRequired[float | None]
    release_delay_p95_now_seconds: NotRequired[float | None]
    consequence_of: NotRequired[str]
    events_on_hot_partition: NotRequired[int]
    events_caught: NotRequired[int]
    lost: NotRequired[bool]
    minimum: NotRequired[bool]
    delay: NotRequired[str]
    fate_unknown: NotRequired[bool]


def _no_impact() -> Impact:
    return {"events_affected": 0, "delay_seconds": 0.0}


def _freeze(values: Mapping[str, Any]) -> Mapping[str, Any]:
    return MappingProxyType(dict(values))


@dataclass(frozen=True, slots=True)
class Finding:
    """One diagnosed cause with its evidence, impact and suggested fixes.

    ``impact`` (:class:`Impact`, read-only) holds at least ``events_affected`` (adjusted or
    dropped events attributed to the cause) and ``delay_seconds`` (release delay the cause
    adds, 0 when none); ``score`` orders findings of equal severity (larger first).
    """

    cause: Cause
    severity: Severity
    title: str
    explanation: str
    evidence: Mapping[str, Any] = field(default_factory=dict)
    impact: Impact = field(default_factory=_no_impact)
    suggestions: tuple[Suggestion, ...] = ()
    confidence: float = 0.5
    #: the job the finding is about (``None``: one unnamed job, or a capture)
    job: str | None = None
    #: what the finding proposed that the one recommendation leaves out, and why (numbers)
    left_out: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not 0.0 <= self.confidence <= 1.0:
            msg = f"finding {self.cause}: confidence {self.confidence} is outside 0..1"
            raise ValueError(msg)
        object.__setattr__(self, "evidence", _freeze(self.evidence))
        object.__setattr__(self, "impact", _freeze(self.impact))
        object.__setattr__(self, "suggestions", tuple(self.suggestions))

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickle (the app caches reports) through the constructor: the read-only mappings
        are passed as plain dicts and frozen again."""
        return (
            Finding,
            (
                self.cause,
                self.severity,
                self.title,
                self.explanation,
                dict(self.evidence),
                dict(self.impact),
                self.suggestions,
                self.confidence,
                self.job,
                self.left_out,
            ),
        )

    @property
    def score(self) -> float:
        """Impact as one number: events affected plus one event per second of delay added."""
        return float(self.impact.get("events_affected", 0)) + float(
            self.impact.get("delay_seconds", 0.0)
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "cause": self.cause.value,
            "severity": self.severity.value,
            "title": self.title,
            "explanation": self.explanation,
            "evidence": _plain(self.evidence),
            "impact": _plain(self.impact),
            "suggestions": [s.to_dict() for s in self.suggestions],
            "confidence": round(self.confidence, 2),
            "job": self.job,
            **({"left_out": list(self.left_out)} if self.left_out else {}),
        }


def _plain(value: Any) -> Any:
    """Mappings and sequences turned into dicts and lists, recursively."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


@dataclass(frozen=True, slots=True)
class Recommended:
    """The one recommended setting for a capture (``diagnostics.whatif.recommend``) with the
    engine's numbers, the rule, what its clauses are for and the settings that came close."""

    setting: str
    numbers: str
    adjusted: int
    dropped: int
    delay_p95_s: float | None
    late_seconds: int | None
    ooo_seconds: int
    over: tuple[str, ...] = ()
    partition_by: bool = False
    rule: str = ""
    notes: tuple[str, ...] = ()
    close: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "setting": self.setting,
            "adjusted": self.adjusted,
            "dropped": self.dropped,
            "delay_p95_s": self.delay_p95_s,
            "late_arrival_seconds": self.late_seconds,
            "out_of_order_seconds": self.ooo_seconds,
            "over": list(self.over),
            "partition_by": self.partition_by,
            "rule": self.rule,
            "notes": list(self.notes),
            "came_close": list(self.close),
        }


@dataclass(frozen=True, slots=True)
class Senders:
    """With a capture: the column whose values the findings name as senders (``None``: none
    found) and why it was chosen (docs/explain.md, "How the sender column is chosen")."""

    column: str | None
    reason: str

    @property
    def line(self) -> str:
        """``sender column: deviceId (its 200 values repeat ...)``."""
        return f"sender column: {self.column or 'none'} ({self.reason})"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"column": self.column, "reason": self.reason}


@dataclass(frozen=True, slots=True)
class Report:
    """Findings, most important first, and where the evidence came from; with a capture,
    the one recommended setting and the sender column."""

    findings: list[Finding]
    sources: tuple[str, ...] = ()
    policy: str | None = None
    recommended: Recommended | None = None
    #: which tolerances each job was read with, where that needs saying: the job a job
    #: definition applies to, and the jobs read with ASA's defaults (assumed)
    #: (:mod:`diagnostics.explain.assumed`)
    tolerances: tuple[str, ...] = ()
    senders: Senders | None = None

    def to_dict(self) -> dict[str, Any]:
        """``{"findings": [...], "sources": [...], "policy": ..., "tolerances": [...],
        "recommended": ..., "senders": ...}``."""
        return {
            "findings": [f.to_dict() for f in self.findings],
            "sources": list(self.sources),
            "policy": self.policy,
            "tolerances": list(self.tolerances),
            "recommended": None if self.recommended is None else self.recommended.to_dict(),
            "senders": None if self.senders is None else self.senders.to_dict(),
        }

    @property
    def top(self) -> Finding | None:
        """The most important finding, if any."""
        return self.findings[0] if self.findings else None
