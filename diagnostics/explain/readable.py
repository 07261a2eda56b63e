"""A finding's evidence and impact in words: labelled values and short sentences instead of
raw JSON, for the terminal, Markdown, the HTML report and the app (``--format json`` keeps
the data as it is)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from diagnostics.explain.assumed import ASSUMED_KEY, HOW_TO_GIVE, TOLERANCE_KEYS, seconds_assumed
from diagnostics.explain.sender_groups import compact
from diagnostics.words import number, partitions, plural

#: Labels of the evidence and impact values findings carry (others: the key in words).
LABELS = {
    "events": "events",
    "records": "log records",
    "share_of_events": "share of all events",
    "partitions": "events per partition",
    "events_per_partition": "events per partition",
    "events_per_minute": "events per minute",
    "top_keys": "top senders",
    "senders": "senders",
    "gateway": "all the senders of",
    "upload_period_seconds": "uploads every",
    "lateness": "lateness",
    "disorder": "out of order by",
    "current_late_tolerance_seconds": "late-arrival tolerance now",
    "out_of_order_events_alongside": "out-of-order events alongside",
    "late_events_alongside": "late events alongside",
    "over_key_analysis": "one timeline per key (OVER)",
    "share_following_late_events": "share right after a late event",
    "idle_partitions": "silent partitions",
    "episodes": "silent periods",
    "idle_minutes_total": "silent minutes in all",
    "watermark_delay_seconds": "watermark delay",
    "release_delay_seconds": "release delay",
    "lateness_p99_9_seconds": "lateness, 99.9th percentile",
    "lateness_max_seconds": "lateness, largest",
    "invalid_timestamp": "events without a usable timestamp",
    "invalid_key": "events without an OVER key",
    "unparsable": "of which a value that is not a time",
    "missing_or_null": "of which no value (the field missing, null or empty)",
    "field_missing": "of which the event does not have the field",
    "null_or_empty": "of which the field is null or empty",
    "hot_partition": "busiest partition",
    "fair_share": "fair share",
    "share": "share",
    "early_by": "early by",
    "sources": "evidence from",
    "events_by_kind": "events per kind",
    "records_without_count": "log records without a count (each at least one event)",
    "events_are_a_minimum": "the event count is a minimum",
    "events_by_source": "events per input or output",
    "events_by_column": "events per column named",
    "asa_page": "ASA's page",
    "backlogged_input_events_max": "backlogged input events, most in a minute",
    "late_arrival_tolerance_seconds": "late-arrival tolerance",
    "current_out_of_order_tolerance_seconds": "out-of-order tolerance now",
    "events_between_suggestion_and_current": "events between the suggested and the current "
    "tolerance",
    "events_caught": "events only the extra tolerance keeps",
    "events_on_hot_partition": "events on the busiest partition",
    "log_records_read": "log records read",
    "log_records_quarantined": "log records that could not be read (quarantined)",
}
_PERCENT = {"share_of_events", "share_following_late_events", "fair_share", "share"}


def _seconds(value: Any) -> str:
    """``"4.6 s"``; an hour or more also in hours or days (``"2,276,540 s (about 26.3
    days)"``), never in exponent notation; ``None`` is unlimited."""
    if value is None:
        return "unlimited"
    seconds = float(value)
    if abs(seconds) < 3_600:
        return f"{seconds:g} s"
    about = (
        f"{seconds / 86_400:.1f} days" if abs(seconds) >= 86_400 else f"{seconds / 3_600:.1f} hours"
    )
    return f"{seconds:,.0f} s (about {about})"


def _stats(value: Mapping[str, Any]) -> str:
    """``{"p50_seconds": .., "p95_seconds": .., ...}`` as a sentence."""
    names = {
        "p50": "median",
        "p95": "95th percentile",
        "p99": "99th percentile",
        "p99_9": "99.9th percentile",
        "max": "largest",
    }
    parts = [
        f"{label} {_seconds(value[name])}"
        for key, label in names.items()
        for name in (f"{key}_seconds", key)
        if value.get(name) is not None
    ]
    text = ", ".join(parts)
    if value.get("from"):
        text += f", {value['from']}" if text else str(value["from"])
    covered = value.get("share_covered_by_suggestion")
    if covered is not None:
        text += f"; the suggested tolerance covers {covered:.0%} of them"
    if value.get("estimate"):
        text += f"; the suggested tolerance is an estimate {value['estimate']}"
    if value.get("far_off"):
        text += f"; {far_off_words(value['far_off'])}"
    return text


def far_off_words(far: Mapping[str, Any]) -> str:
    """Far-off application times (``diagnostics.captures.far_off.FarOffTimes.to_dict``) as
    the evidence names them: how many, rows, values and senders, left out of the figures."""
    events = int(far.get("events", 0))
    counted = str(far.get("counted_as") or "")
    rows = ", ".join(number(r) for r in far.get("rows", ()))
    label = str(far.get("rows_are") or "rows")
    values = ", ".join(f"'{v}'" for v in far.get("values", ()))
    more = " ..." if events > len(far.get("rows", ())) else ""
    who = (
        f"; {far['device_column']} {', '.join(str(d) for d in far.get('devices', ()))}"
        if far.get("device_column") and far.get("devices")
        else ""
    )
    what = f"{number(events)} {counted}" if counted else plural(events, "event")
    return (
        f"{what} with an application time far off the others "
        f"({far.get('from')} .. {far.get('to')}), left out of these figures: {label} {rows}"
        f"{more}; values {values}{more}{who}"
    )


def _part(value: Mapping[str, Any]) -> str:
    """A part of the invalid timestamps (``explain.invalid_times``): how many, examples of
    what they hold, and their senders."""
    text = plural(value.get("events"), "event")
    examples = value.get("examples") or []
    if examples:
        text += ", such as " + ", ".join(f"'{v}'" for v in examples)
    senders = value.get("senders") or {}
    if senders:
        named = ", ".join(f"{k}: {number(v)}" for k, v in senders.items())
        text += f"; {value.get('sender_column') or 'senders'} {named}"
    return text


def _mapping(value: Mapping[str, Any], key: str) -> str:
    if any(str(k).startswith("p50") for k in value):
        return _stats(value)
    if "events" in value and ("senders" in value or "examples" in value):
        return _part(value)
    if key == "events_per_minute":
        return (
            f"peak {number(value.get('peak'))}, mean {number(value.get('mean'))} "
            f"over {plural(value.get('minutes'), 'minute')}"
        )
    prefix = "partition " if key in ("partitions", "events_per_partition") else ""
    return ", ".join(f"{prefix}{k}: {number(v)}" for k, v in value.items())


def _time(value: Any) -> str:
    """An ISO time as ``2024-01-01 00:05:59 UTC``."""
    try:
        moment = datetime.fromisoformat(str(value))
    except ValueError:
        return str(value)
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC)
    return moment.strftime("%Y-%m-%d %H:%M:%S UTC")


def _row(item: Mapping[str, Any]) -> str:
    if "partition_id" in item and "start" in item:  # a silent period
        return (
            f"partition {item['partition_id']} from {_time(item['start'])} to {_time(item['end'])} "
            f"({number(item.get('minutes'))} min, {plural(item.get('notices'), 'notice')})"
        )
    if "column" in item and "removed_share" in item:  # an OVER key tried
        return (
            f"OVER {item['column']}: {number(item.get('distinct_keys'))} keys, removes "
            f"{float(item['removed_share']):.0%} of the out-of-order events "
            f"({number(item.get('out_of_order_within_keys'))} remain within a key)"
        )
    return "; ".join(f"{words(str(k))} {_value(str(k), v)}" for k, v in item.items())


#: What each kind of suggestion changes, in words.
SUGGESTION_LABELS = {
    "late_arrival_tolerance": "late-arrival tolerance",
    "out_of_order_tolerance": "out-of-order tolerance",
    "partition_by": "query: PARTITION BY",
    "timestamp_by_over": "query: TIMESTAMP BY ... OVER",
    "feed_all_partitions": "senders",
    "fix_sender_clocks": "sender clocks",
    "flush_more_often": "gateway uploads",
    "fix_payload": "event payload",
    "separate_replay_job": "separate job",
    "scale_out": "scale out",
    "cti_delay": "CTI delay",
    "fix_input_data": "input format or senders",
    "fix_output_schema": "query SELECT or output schema",
    "measure_lateness": "measure first",
    "inspect_records": "the log records",
}


def suggestion_label(kind: str) -> str:
    """A suggestion kind in words."""
    return SUGGESTION_LABELS.get(kind, kind.replace("_", " "))


def cause_label(cause: str) -> str:
    """A cause in words (``late_arrivals`` -> ``late arrivals``)."""
    return cause.replace("_", " ")


def words(key: str) -> str:
    """A value's label: the known one, else the key in words."""
    if key in LABELS:
        return LABELS[key]
    return key.removesuffix("_seconds").replace("_", " ")


def _value(key: str, value: Any) -> str:
    if value is None:
        return "unlimited" if "tolerance" in key else "none"
    if key in _PERCENT and isinstance(value, int | float):
        return f"{float(value):.1%}"
    if isinstance(value, Mapping) and key != "gateway":
        return _mapping(value, key)
    if key == "idle_partitions" and isinstance(value, Sequence):
        return partitions(value)
    if key == "senders" and isinstance(value, Sequence) and not isinstance(value, str):
        return f"{compact([str(v) for v in value])} ({number(len(value))})"
    if key == "gateway" and isinstance(value, Mapping):
        return "; ".join(f"{k} {', '.join(str(v) for v in vs)}" for k, vs in value.items())
    if key.endswith("_seconds") or key == "early_by":
        return _seconds(value) if isinstance(value, int | float) else str(value)
    if isinstance(value, Sequence) and not isinstance(value, str):
        if value and all(isinstance(v, Mapping) for v in value):
            return "; ".join(_row(v) for v in value)
        return ", ".join(number(v) for v in value)
    return number(value)


def evidence_lines(evidence: Mapping[str, Any], how: str = HOW_TO_GIVE) -> list[tuple[str, str]]:
    """``(label, value)`` per evidence value worth showing; the job's tolerances marked as
    ASA's defaults, assumed, when the evidence says so (``how``: how to give the real ones,
    the command line's words or the app's)."""
    assumed = bool(evidence.get(ASSUMED_KEY))
    return [
        (
            words(str(k)),
            seconds_assumed(v, how)
            if assumed and k in TOLERANCE_KEYS and isinstance(v, int | float)
            else _value(str(k), v),
        )
        for k, v in evidence.items()
        if v not in (None, {}, [], ()) and k != ASSUMED_KEY
    ]


def _sentence(text: str) -> str:
    """``text`` with its first character upper-cased and the rest as written (``ASA``,
    quoted field names and flags keep their case, unlike ``str.capitalize``)."""
    return text[:1].upper() + text[1:]


def _delay_words(delay: str) -> str:
    """``impact.delay`` as part of a sentence: ``unknown: pass ...`` and ``unlimited: ...``
    say what is unknown or unlimited (the job's late-arrival tolerance)."""
    head, _, rest = delay.partition(": ")
    if head == "unknown" and rest:
        return f"output held back by the job's late-arrival tolerance, unknown: {rest}"
    if head == "unlimited" and rest:
        return f"the late-arrival tolerance is unlimited: {rest}"
    return f"output held back by {delay}"


def impact_sentence(impact: Mapping[str, Any]) -> str:
    """The impact as one or two sentences."""
    parts: list[str] = []
    affected = impact.get("events_affected")
    count = plural(affected, "event", minimum=bool(impact.get("minimum"))) if affected else ""
    if affected and impact.get("fate_unknown"):  # a kind orderdoc does not know
        parts.append(f"{count} reported, fate unknown")
    elif affected and impact.get("lost"):  # data errors: lost, not moved by a time rule
        parts.append(f"{count} lost")
    elif affected:
        parts.append(f"{count} adjusted or dropped")
    elif affected == 0:
        parts.append("no event adjusted or dropped")
    if impact.get("dropped"):
        parts.append(f"{number(impact['dropped'])} of them dropped")
    delay = impact.get("delay_seconds")
    if impact.get("delay"):  # the delay in words (e.g. unknown without the job's tolerance)
        parts.append(_delay_words(str(impact["delay"])))
    elif delay:
        parts.append(f"output held back by up to {_seconds(delay)}")
    text = _sentence("; ".join(parts)) + "." if parts else ""
    fix_cost = impact.get("fix_adds_release_delay_seconds")
    if "fix_adds_release_delay_seconds" in impact:
        if fix_cost == 0:
            text += " The fix adds no release delay."
        elif fix_cost is None:
            text += " The suggested tolerance can hold output back indefinitely."
        else:
            text += (
                f" The suggested tolerance adds up to {_seconds(fix_cost)} of release delay "
                "(none with OVER)."
            )
    if "fix_release_delay_p95_seconds" in impact:
        fixed, now = (
            impact["fix_release_delay_p95_seconds"],
            impact.get("release_delay_p95_now_seconds"),
        )
        text += (
            " Measured on the capture, the recommended setting gives a p95 release delay of "
            + ("never released" if fixed is None else _seconds(fixed))
            + ("" if now is None else f" (now {_seconds(now)})")
            + "."
        )
    if impact.get("consequence_of"):
        text += f" A consequence of the {str(impact['consequence_of']).replace('_', ' ')}."
    if impact.get("effect"):
        text += f" Effect: {impact['effect']}."
    known = {
        "events_affected",
        "dropped",
        "delay_seconds",
        "delay",
        "lost",
        "fate_unknown",
        "minimum",
        "fix_adds_release_delay_seconds",
        "fix_release_delay_p95_seconds",
        "release_delay_p95_now_seconds",
        "consequence_of",
        "effect",
    }
    rest = [
        f"{words(k)}: {_value(k, v)}" for k, v in impact.items() if k not in known and v is not None
    ]
    if rest:
        text += " " + _sentence("; ".join(rest)) + "."
    return text.strip()
