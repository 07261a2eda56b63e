"""Alerts data: the rule files with their validation problems, and the alerts they raise.

Rules are loaded file by file (:func:`diagnostics.rules.loader.load_file`), so that one broken
file shows its problems while the valid rules of every file are still evaluated.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import polars as pl

from diagnostics.appdata.workdir import shown, shown_column
from diagnostics.rules import AlertState, RuleProblem, RuleSet, evaluate_detailed
from diagnostics.rules.loader import load_file, rule_files
from diagnostics.rules.model import Alert, Rule, display_path

ALERT_SCHEMA: dict[str, pl.DataType] = {
    "rule_id": pl.String(),
    "title": pl.String(),
    "state": pl.String(),
    "severity": pl.String(),
    "starts_at": pl.Datetime("us", "UTC"),
    "ends_at": pl.Datetime("us", "UTC"),
    "value": pl.Float64(),
    "group": pl.String(),
    "summary": pl.String(),
    "cause": pl.String(),
}


@dataclass(frozen=True)
class RuleFile:
    """One rule file: its text, the ids of its valid rules and its problems."""

    path: str
    text: str
    rule_ids: tuple[str, ...]
    problems: tuple[RuleProblem, ...]


@dataclass(frozen=True)
class RulePack:
    """Rule files as loaded. Invariant: ``rules`` holds exactly the valid rules, ids unique."""

    files: tuple[RuleFile, ...]
    rules: RuleSet
    problems: tuple[RuleProblem, ...]


def load_pack(paths: Sequence[str | Path]) -> RulePack:
    """Load every rule file under ``paths``, keeping the valid rules and listing all problems."""
    found, problems = rule_files(paths)
    files: list[RuleFile] = []
    rules: list[Rule] = []
    seen: set[str] = set()
    for path in found:
        valid, file_problems = load_file(path)
        unique = []
        for rule in valid:
            if rule.id in seen:
                msg = "duplicate rule id (defined in an earlier file)"
                file_problems.append(RuleProblem(rule.file, rule.line, rule.id, "id", msg))
                continue
            seen.add(rule.id)
            unique.append(rule)
        rules.extend(unique)
        problems.extend(file_problems)
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            text = f"# cannot read this file: {exc}"
        files.append(
            RuleFile(display_path(path), text, tuple(r.id for r in unique), tuple(file_problems))
        )
    names = tuple(f.path for f in files)
    return RulePack(tuple(files), RuleSet(tuple(rules), names), tuple(problems))


def check_text(
    text: str, name: str = "edited.yaml"
) -> tuple[tuple[str, ...], tuple[RuleProblem, ...]]:
    """Validate rule YAML given as text: the valid rule ids and the problems."""
    from diagnostics.rules.loader import parse_document
    from diagnostics.rules.yamlsrc import YamlError, load_yaml

    try:
        doc = load_yaml(text)
    except YamlError as exc:
        return (), (RuleProblem(name, exc.line, None, None, str(exc)),)
    rules, problems = parse_document(doc, name)
    return tuple(r.id for r in rules), tuple(problems)


def problems_frame(problems: Sequence[RuleProblem]) -> pl.DataFrame:
    """Problems as rows: ``file``, ``line``, ``rule``, ``field``, ``message``."""
    return pl.DataFrame(
        {
            "file": [p.file for p in problems],
            "line": [p.line for p in problems],
            "rule": [p.rule_id or "" for p in problems],
            "field": [p.field or "" for p in problems],
            "message": [p.message for p in problems],
        },
        schema={
            "file": pl.String,
            "line": pl.Int64,
            "rule": pl.String,
            "field": pl.String,
            "message": pl.String,
        },
    )


def _row(alert: Alert) -> dict:
    notes = dict(alert.annotations)
    return {
        "rule_id": alert.rule_id,
        "title": alert.title,
        "state": alert.state.value,
        "severity": alert.severity.value,
        "starts_at": alert.starts_at,
        "ends_at": alert.ends_at,
        "value": alert.value,
        "group": ", ".join(f"{k}={v}" for k, v in alert.group),
        "summary": notes.get("summary", ""),
        "cause": alert.cause,
    }


@dataclass(frozen=True)
class AlertsView:
    """Alerts of one evaluation as a frame (schema :data:`ALERT_SCHEMA`), newest first."""

    alerts: pl.DataFrame
    now: datetime | None
    skipped: tuple[tuple[str, str], ...]

    def count(self, state: AlertState) -> int:
        """Alerts in ``state``."""
        return int((self.alerts["state"] == state.value).sum())


def evaluate_pack(pack: RulePack, agg_dir: Path) -> AlertsView:
    """Evaluate the valid rules of ``pack`` on ``agg_dir`` (as of the end of the data)."""
    if not len(pack.rules):
        return AlertsView(pl.DataFrame(schema=ALERT_SCHEMA), None, ())
    result = evaluate_detailed(pack.rules, agg_dir)
    frame = pl.DataFrame([_row(a) for a in result.alerts], schema=ALERT_SCHEMA, orient="row")
    frame = frame.with_columns(shown_column("group"))
    frame = frame.sort(["starts_at", "rule_id", "group"], descending=[True, False, False])
    skipped = tuple((rule, shown(reason)) for rule, reason in result.skipped)
    return AlertsView(frame, result.now, skipped)


def alert_markers(alerts: pl.DataFrame, bucket: str = "1m") -> pl.DataFrame:
    """Alert episodes grouped per time ``bucket`` (the chart's) and severity, one marker each:
    ``time`` (bucket of the firing or pending time), ``severity``, ``alerts`` (episodes),
    ``firing`` (of which still firing), ``label`` (count, firing, up to three titles with
    their groups); sorted by time, severity. Keeps a chart of many alerts light."""
    schema: dict[str, pl.DataType | type[pl.DataType]] = {
        "time": pl.Datetime("us", "UTC"),
        "severity": pl.String,
        "alerts": pl.Int64,
        "firing": pl.Int64,
        "label": pl.String,
    }
    if alerts.is_empty():
        return pl.DataFrame(schema=schema)
    named = pl.concat_str(
        [
            pl.col("title"),
            pl.when(pl.col("group") != "")
            .then(pl.lit(" (") + pl.col("group") + pl.lit(")"))
            .otherwise(pl.lit("")),
        ]
    )
    grouped = (
        alerts.with_columns(
            pl.col("starts_at").dt.truncate(bucket).alias("time"), named.alias("named")
        )
        .group_by("time", "severity")
        .agg(
            pl.len().cast(pl.Int64).alias("alerts"),
            (pl.col("state") == AlertState.FIRING.value).sum().cast(pl.Int64).alias("firing"),
            pl.col("named").unique(maintain_order=True).sort().head(3).alias("titles"),
        )
    )
    label = pl.format(
        "{} {}, {} firing: {}",
        pl.col("alerts"),
        pl.when(pl.col("alerts") == 1).then(pl.lit("alert")).otherwise(pl.lit("alerts")),
        pl.col("firing"),
        pl.col("titles").list.join("; "),
    )
    return grouped.select("time", "severity", "alerts", "firing", label.alias("label")).sort(
        "time", "severity"
    )


def firing_first(alerts: pl.DataFrame) -> pl.DataFrame:
    """Firing alerts first, then pending, then resolved; newest first within a state."""
    order = {AlertState.FIRING.value: 0, AlertState.PENDING.value: 1, AlertState.RESOLVED.value: 2}
    return (
        alerts.with_columns(pl.col("state").replace_strict(order, default=3).alias("_o"))
        .sort(["_o", "starts_at"], descending=[False, True])
        .drop("_o")
    )
