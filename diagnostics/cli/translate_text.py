"""``orderdoc translate``'s report as text: the mapping, what has no equivalent, the steps
not translated, the measured difference (with ``--events``) and, last, the script to paste."""

from __future__ import annotations

from typing import Any

from diagnostics.words import noun

#: What each target's script is and where it goes.
_SCRIPT = {
    "flink-sql": "Flink SQL script: fill in each FILL IN (connector options), then paste it "
    "into Flink's SQL client",
    "flink-datastream": "Flink DataStream settings (Java)",
    "spark": "PySpark Structured Streaming script: fill in each FILL IN (connector options), "
    "then run it with spark-submit",
}


def report(data: dict[str, Any], engine: str) -> str:
    """The whole report."""
    lines = [f"ASA job     {data['job']}"]
    if data["window"] is not None:
        lines.append(
            f"measured    {data['window']['window']} (query step {data['window']['step']})"
        )
    lines += ["", "how each setting was chosen:"]
    lines += [f"  - {line}" for line in data["mapping"]]
    lines += ["", f"ASA features with no equivalent in {engine}:"]
    lines += [f"  - {line}" for line in data["no_equivalent"]]
    if data["not_translated"]:
        lines += ["", "query steps not translated:"]
        lines += [f"  - {line}" for line in data["not_translated"]]
    measured = data.get("measured")
    if measured is not None:
        lines += measured_text(measured, engine)
    lines += ["", f"{_SCRIPT[data['target']]}:"]
    if "script_file" in data:
        lines.append(f"  written to {data['script_file']}")
    else:
        lines += ["", data["script"].rstrip("\n")]
    return "\n".join(lines)


def _when(change: float | None) -> str:
    """``2.5s later``, ``0.4s earlier`` or ``at the same time`` (engine − ASA, seconds)."""
    if not change:
        return "at the same time"
    return f"{abs(change)}s {'later' if change > 0 else 'earlier'}"


def _setting(row: dict[str, Any]) -> str:
    return (
        f"dropped {row['dropped']:,} ({row['pct_dropped']:g}%), p95 emission delay "
        f"{row['emission_delay_p95_seconds']} s"
    )


def measured_text(m: dict[str, Any], engine: str) -> list[str]:
    """The measured section."""
    n = m["events"]
    keep = m["asa_keeps_engine_drops"]
    a, e, d = (
        m["asa_emission_delay_seconds"],
        m["engine_emission_delay_seconds"],
        m["emission_change_seconds"],
    )
    lines = [
        "",
        f"measured on {m['capture']} ({n:,} {noun(n, 'event')}):",
        f"  ASA keeps {keep:,} {noun(keep, 'event')} that {engine} would drop as late"
        f" ({m['asa_keeps_engine_drops_adjusted']:,} of them adjusted by ASA)",
        f"  {engine} keeps {m['engine_keeps_asa_drops']:,} that ASA drops"
        f" (ASA drops {m['asa_dropped']:,}, {engine} {m['engine_dropped']:,})",
    ]
    if a["p50"] is not None and e["p50"] is not None:
        lines.append(
            f"  emission delay (arrival to its window's output) p50 / p95: ASA {a['p50']}s / "
            f"{a['p95']}s, {engine} {e['p50']}s / {e['p95']}s"
        )
    if d["p50"] is not None:
        lines.append(
            f"  per event emitted by both, {engine} emits its window {_when(d['p50'])} at the "
            f"median ({_when(d['p95'])} at the 95th percentile)"
        )
    pushed = m.get("watermark_pushers_text") or []
    if pushed:
        lines.append(f"  why {engine} drops them:")
        lines += [f"    - {line}" for line in pushed]
    rec, literal = m["recommended"], m["literal"]
    lines += [
        f"  the literal translation: {literal['setting']}: {_setting(literal)}",
        (
            f"  recommended (the search of whatif --rules {m['replay'].split('--rules ')[1].split()[0]}"
            f", dropped <= {rec['budget_pct']:g}%): "
            + (
                "the literal translation itself"
                if rec["same_as_literal"]
                else f"{rec['setting']}: {_setting(rec)}"
            )
        ),
        f"  replay it: {m['replay']}",
    ]
    if rec.get("note"):
        lines.append(f"  note: {rec['note']}")
    if not rec["same_as_literal"]:
        lines.append(f"  replay the recommendation: {rec['replay']}")
    return lines
