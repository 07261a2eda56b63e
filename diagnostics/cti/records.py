"""``CtiViolation`` diagnostics in ASA's resource-log envelope (spec §5), and the delay advice.

Violations are aggregated the way ASA aggregates data errors: one record per (source, kind)
and processing-time window (tumbling, aligned to multiples of ``window_ns``, one minute by
default), carrying the count, the first and last processing times and one example event (the
window's first). The ``BriefMessage`` keeps ASA's wording "application timestamp '…' and
arrival time '…'" so that log readers find the example's times. orderdoc's extras (policy,
lag statistics and the suggested delay) live under the top-level ``"orderdoc"`` key.

Processing time of a violation is its event's arrival time; without arrival times (pure
application-time replays) the event's start time stands in for it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from diagnostics.cti.events import CtiOrigin, CtiViolation, Shape
from diagnostics.cti.policy import INFINITY
from diagnostics.durations import MINUTE, SECOND
from diagnostics.kinds import ErrorKind
from diagnostics.timestamps import iso

#: The subscription and resource group used in resourceId when the user gives none.
DEFAULT_SUBSCRIPTION = "00000000-0000-0000-0000-000000000000"
DEFAULT_RESOURCE_GROUP = "ORDERDOC"


@dataclass(frozen=True, slots=True)
class RecordContext:
    """Who emits the records: the job, the input (``Source``) and the resource path parts."""

    job: str = "orderdoc-replay"
    source: str = "input"
    subscription: str = DEFAULT_SUBSCRIPTION
    resource_group: str = DEFAULT_RESOURCE_GROUP
    window_ns: int = MINUTE

    @property
    def resource_id(self) -> str:
        """ASA's upper-case resource path ending in ``STREAMINGJOBS/<JOB>``."""
        return (
            f"/SUBSCRIPTIONS/{self.subscription}/RESOURCEGROUPS/{self.resource_group}"
            f"/PROVIDERS/MICROSOFT.STREAMANALYTICS/STREAMINGJOBS/{self.job}".upper()
        )


def processing_ns(violation: CtiViolation) -> int:
    """The violation's processing time: arrival, else (application-time only) its start."""
    return violation.arrival_ns if violation.arrival_ns is not None else violation.start_ns


def _cti_text(ns: int) -> str:
    return "+infinity" if ns == INFINITY else str(iso(ns))


def brief_message(violation: CtiViolation) -> str:
    """One sentence naming the example's times, the CTI and what the policy did."""
    checked = "end" if violation.shape is Shape.EDGE_END else "start"
    outcome = (
        "its start was adjusted to the CTI"
        if violation.adjusted_start_ns is not None
        else "it was dropped"
    )
    return (
        f"Input event with application timestamp '{iso(violation.start_ns)}' and arrival time "
        f"'{iso(processing_ns(violation))}' has its {checked} before the current CTI "
        f"'{_cti_text(violation.cti_ns)}' ({violation.cti_origin.value}); {outcome}."
    )


def _quantiles(values: Sequence[int]) -> dict[str, float]:
    ordered = sorted(values)
    last = len(ordered) - 1

    def pick(q: float) -> float:
        return ordered[round(q * last)] / SECOND

    return {"min": pick(0.0), "p50": pick(0.5), "p95": pick(0.95), "max": pick(1.0)}


def _example(violation: CtiViolation, payload: Mapping[str, object] | None) -> str:
    event: dict[str, object] = dict(payload or {})
    event.update(
        {
            "event_id": violation.event_id,
            "shape": violation.shape.value,
            "StartTime": iso(violation.start_ns),
            "EndTime": iso(violation.end_ns),
            "ArrivalTime": iso(violation.arrival_ns),
        }
    )
    return json.dumps([event], default=str)


def violation_records(
    violations: Iterable[CtiViolation],
    context: RecordContext,
    *,
    policy_delay_ns: int | None = None,
    payloads: Mapping[int, Mapping[str, object]] | None = None,
) -> list[dict[str, object]]:
    """Aggregate ``violations`` into resource-log records, in window order.

    Invariant: the ``EventCount`` of all records sums to the number of violations.
    ``payloads`` maps an event id to its input columns, for the example event.
    """
    windows: dict[int, list[CtiViolation]] = {}
    for violation in sorted(violations, key=lambda v: (processing_ns(v), v.stream, v.event_id)):
        windows.setdefault(processing_ns(violation) // context.window_ns, []).append(violation)
    records: list[dict[str, object]] = []
    for window, members in sorted(windows.items()):
        first, last = members[0], members[-1]
        lags = [v.lag_ns for v in members]
        delay = policy_delay_ns if policy_delay_ns is not None else first.delay_ns
        count = len(members)
        brief = brief_message(first)
        message = (
            f"Source '{context.source}' had {count} data errors of kind "
            f"'{ErrorKind.CTI_VIOLATION.value}' between processing times "
            f"'{iso(processing_ns(first))}' and '{iso(processing_ns(last))}'. {brief}"
        )
        records.append(
            {
                "time": iso((window + 1) * context.window_ns),
                "resourceId": context.resource_id,
                "category": "Execution",
                "operationName": "Process Events",
                "level": "Information",
                "properties": {
                    "Source": context.source,
                    "Type": "DataError",
                    "DataErrorType": ErrorKind.CTI_VIOLATION.value,
                    "BriefMessage": brief,
                    "Message": message,
                    "ExampleEvents": _example(first, (payloads or {}).get(first.event_id)),
                    "FromTimestamp": iso(processing_ns(first)),
                    "ToTimestamp": iso(processing_ns(last)),
                    "EventCount": count,
                },
                "orderdoc": {
                    "dropped": sum(1 for v in members if v.adjusted_start_ns is None),
                    "adjusted": sum(1 for v in members if v.adjusted_start_ns is not None),
                    "cti_lag_seconds": _quantiles(lags),
                    "cti_delay_ns": delay,
                    "suggested_cti_delay_ns": suggest_cti_delay(members, delay),
                },
            }
        )
    return records


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


def suggest_from_records(records: Iterable[Mapping[str, object]]) -> int | None:
    """The delay to suggest from ``CtiViolation`` records' ``orderdoc`` extras (``None`` if none).

    The maximum over records of ``suggested_cti_delay_ns``: each is the delay that avoids its
    own window's violations, and a larger delay avoids a superset.
    """
    best: int | None = None
    for record in records:
        props = record.get("properties")
        extras = record.get("orderdoc")
        if not isinstance(props, Mapping) or not isinstance(extras, Mapping):
            continue
        if props.get("DataErrorType") != ErrorKind.CTI_VIOLATION.value:
            continue
        value = extras.get("suggested_cti_delay_ns")
        if isinstance(value, int):
            best = value if best is None else max(best, value)
    return best
