"""``CtiViolation`` diagnostics in ASA's resource-log envelope (docs/semantics.md, "Diagnostics ASA writes"), and the delay advice.

Violations are aggregated exactly as the ASA replay aggregates data errors
(:mod:`diagnostics.instrument`): one record per (source, kind) and processing-time window
``floor(τ / error_window)``, carrying the count, the first and last processing times and one
example event (the window's first, by τ then event id), in the same envelope, time formats
and ``orderdoc`` extras object. The ``BriefMessage`` keeps ASA's wording "application
timestamp '…' and arrival time '…'" so that log readers find the example's times; the extras
add the policy's delay, the CTI lag statistics and the suggested delay.

τ of a violation is its event's arrival time; without arrival times (a pure application-time
replay) the event's start stands in for it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import polars as pl

from diagnostics.cti.events import CtiOrigin, CtiViolation, Shape
from diagnostics.cti.policy import INFINITY
from diagnostics.durations import SECOND
from diagnostics.instrument import timefmt
from diagnostics.instrument.correlation import correlation_id
from diagnostics.instrument.options import InstrumentOptions
from diagnostics.instrument.records import data_error_envelope, data_error_message
from diagnostics.kinds import ErrorKind
from diagnostics.scalars import as_int

KIND = ErrorKind.CTI_VIOLATION.value


def processing_ns(violation: CtiViolation) -> int:
    """The violation's processing time τ: arrival, else (application time only) its start."""
    return violation.arrival_ns if violation.arrival_ns is not None else violation.start_ns


def _cti_text(ns: int) -> str:
    return "+infinity" if ns == INFINITY else timefmt.iso_ticks_naive(ns)


def brief_message(violation: CtiViolation) -> str:
    """One sentence naming the example's times, the CTI and what the policy did."""
    checked = "end" if violation.shape is Shape.EDGE_END else "start"
    outcome = (
        "its start was adjusted to the CTI"
        if violation.adjusted_start_ns is not None
        else "the event was dropped"
    )
    return (
        f"Input event with application timestamp '{timefmt.iso_ticks_naive(violation.start_ns)}' "
        f"and arrival time '{timefmt.iso_ticks_naive(processing_ns(violation))}' has its "
        f"{checked} before the current CTI '{_cti_text(violation.cti_ns)}' "
        f"({violation.cti_origin.value}); {outcome}."
    )


def _quantiles(values: Sequence[int]) -> dict[str, float]:
    ordered = sorted(values)
    last = len(ordered) - 1

    def pick(q: float) -> float:
        return ordered[round(q * last)] / SECOND

    return {"min": pick(0.0), "p50": pick(0.5), "p95": pick(0.95), "max": pick(1.0)}


def _example(violation: CtiViolation, payload: Mapping[str, Any] | None) -> str:
    event: dict[str, Any] = dict(payload or {})
    event.update(
        {
            "StartTime": timefmt.iso_ticks(violation.start_ns),
            "EndTime": None if violation.end_ns is None else timefmt.iso_ticks(violation.end_ns),
        }
    )
    return json.dumps([event], ensure_ascii=False, default=str)


def run_correlation(violations: Sequence[CtiViolation], policy_text: str) -> str:
    """A deterministic correlation ID from the violations and the policy text."""
    digest = hashlib.sha256()
    for v in violations:
        digest.update(f"{v.stream},{v.event_id},{v.start_ns},{processing_ns(v)};".encode())
    return correlation_id(digest.hexdigest(), policy_text)


def violation_records(
    violations: Iterable[CtiViolation],
    options: InstrumentOptions,
    *,
    policy_text: str = "",
    payloads: Mapping[int, Mapping[str, Any]] | None = None,
) -> list[dict[str, Any]]:
    """Aggregate ``violations`` (of one input, ``options.source``) into records, by window.

    Invariant: the ``EventCount`` of all records sums to the number of violations.
    ``payloads`` maps an event id to its input columns, for the example event.
    """
    ordered = sorted(violations, key=lambda v: (processing_ns(v), v.event_id))
    correlation = run_correlation(ordered, policy_text)
    window_ns = options.error_window_ns
    windows: dict[int, list[CtiViolation]] = {}
    for violation in ordered:
        windows.setdefault(processing_ns(violation) // window_ns, []).append(violation)
    return [
        _record(window, members, options, correlation, (payloads or {}).get(members[0].event_id))
        for window, members in sorted(windows.items())
    ]


def _record(
    window: int,
    members: Sequence[CtiViolation],
    options: InstrumentOptions,
    correlation: str,
    payload: Mapping[str, Any] | None,
) -> dict[str, Any]:
    first, last = members[0], members[-1]
    from_ns, to_ns = processing_ns(first), processing_ns(last)
    brief = brief_message(first)
    message = data_error_message(options.source, KIND, len(members), from_ns, to_ns)
    delay = first.delay_ns
    window_start = window * options.error_window_ns
    extra = {
        "partition_id": None,
        "lateness_seconds": None,
        "example_event_id": first.event_id,
        "window_start": timefmt.iso_ticks(window_start),
        "window_end": timefmt.iso_ticks(window_start + options.error_window_ns),
        "correlation_id": correlation,
        "dropped": sum(1 for v in members if v.adjusted_start_ns is None),
        "adjusted": sum(1 for v in members if v.adjusted_start_ns is not None),
        "cti_lag_seconds": _quantiles([v.lag_ns for v in members]),
        "cti_origins": sorted({v.cti_origin.value for v in members}),
        "cti_delay_ns": delay,
        "suggested_cti_delay_ns": suggest_cti_delay(members, delay),
    }
    return data_error_envelope(
        options,
        kind=KIND,
        brief=brief,
        message=message,
        example=_example(first, payload),
        from_ns=from_ns,
        to_ns=to_ns,
        count=len(members),
        correlation=correlation,
        extra=extra,
    )


def suggest_cti_delay(violations: Iterable[CtiViolation], current_delay_ns: int) -> int:
    """The smallest CTI delay (ns) that would have avoided every violation of generated CTIs.

    A generated CTI is ``max start − delay`` and neither the CTI triggers nor the maximum start
    depend on the delay (violating events start before the CTI, hence before the maximum), so
    raising the delay by the largest lag (CTI − the event's checked time) removes exactly those
    violations. Violations of imported or flush CTIs cannot be fixed by this input's delay and
    are ignored. Without such violations the current delay is returned.
    """
    lags = [
        v.lag_ns for v in violations if v.cti_origin is CtiOrigin.GENERATED and v.cti_ns != INFINITY
    ]
    return current_delay_ns + max(lags) if lags else current_delay_ns


def suggest_from_records(records: Iterable[Mapping[str, Any]]) -> int | None:
    """The delay to suggest from ``CtiViolation`` records' ``orderdoc`` extras (``None`` if none).

    Works on both log forms (only CTI records carry ``suggested_cti_delay_ns``).

    The maximum over records of ``suggested_cti_delay_ns``: each is the delay that avoids its
    own window's violations, and a larger delay avoids a superset.
    """
    best: int | None = None
    for record in records:
        extras = record.get("orderdoc")
        if not isinstance(extras, Mapping):
            continue
        value = extras.get("suggested_cti_delay_ns")
        if isinstance(value, int):
            best = value if best is None else max(best, value)
    return best


def suggest_cti_delay_from_outcomes(outcomes: pl.DataFrame, current_delay_ns: int) -> int:
    """:func:`suggest_cti_delay` over a CTI replay's ``outcomes.parquet`` frame.

    Uses ``violation``, ``latest_cti``, ``latest_cti_origin``, ``shape``, ``application_time`` and
    ``application_end``: the lag of a violation is the CTI minus its start (an end edge: its end).
    """
    checked = (
        pl.when(pl.col("shape") == Shape.EDGE_END.value)
        .then(pl.col("application_end"))
        .otherwise(pl.col("application_time"))
    )
    lags = outcomes.filter(
        pl.col("violation") & (pl.col("latest_cti_origin") == CtiOrigin.GENERATED.value)
    ).select((pl.col("latest_cti").dt.epoch("ns") - checked.dt.epoch("ns")).alias("lag"))["lag"]
    worst = lags.max()
    return current_delay_ns + as_int(worst) if worst is not None else current_delay_ns
