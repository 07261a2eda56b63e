"""Every consumer's view of an aggregate folder, for comparing the folders of every producer.

Producers: the app's builder (:func:`diagnostics.appdata.build.build_from_logs`), the demo
(:func:`diagnostics.report.pipeline.write_agg_dir`) and the Spark job (tests/spark). Consumers:
the app (:mod:`diagnostics.appdata.store`), the explainer
(:func:`diagnostics.explain.evidence.from_agg_dir`) and the rules engine.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from diagnostics.aggregates import TableName
from diagnostics.appdata.store import collect, open_aggregate, scan
from diagnostics.explain.evidence import Evidence, from_agg_dir
from diagnostics.logs.inputs import InputFiles, expand_inputs
from diagnostics.rules import default_rules_dir, evaluate, load_rules

ROOT = Path(__file__).resolve().parents[2] / "sample_logs"


def sample_inputs() -> InputFiles:
    """Every log shape and malformed records (asa/), late events, idle notices, metrics and
    job lifecycle records (asa-real/'s Authoring and activity-log exports)."""
    return expand_inputs(
        [
            str(ROOT / "asa"),
            str(ROOT / "asa-real" / "authoring-PT1H.json"),
            str(ROOT / "asa-real" / "activity-log-storage.json"),
            str(ROOT / "asa-real" / "activity-log-portal.json"),
            str(ROOT / "scenarios/late_senders/diagnostics.jsonl"),
            str(ROOT / "scenarios/late_senders/metrics.parquet"),
            str(ROOT / "scenarios/idle_partition/diagnostics.jsonl"),
        ]
    )


def rows(frame: pl.DataFrame) -> list[tuple[Any, ...]]:
    """The rows of ``frame`` (columns by name) in a total order."""
    frame = frame.select(sorted(frame.columns))
    return sorted(frame.rows(), key=lambda row: tuple((v is None, str(v)) for v in row))


def _evidence(evidence: Evidence) -> dict[str, Any]:
    kinds = {
        name: (
            s.events,
            s.records,
            s.partitions,
            sorted(zip(s.lateness.tolist(), s.weights.tolist(), strict=True)),
            s.by_minute,
        )
        for name, s in evidence.kinds.items()
    }
    idle = sorted(evidence.idle, key=lambda item: sorted((k, str(v)) for k, v in item.items()))
    return {
        "sources": evidence.sources,
        "total": evidence.total_events,
        "kinds": kinds,
        "idle": idle,
        "partition_events": evidence.partition_events,
        "watermark_delay": evidence.watermark_delay,
        "time_range": evidence.time_range,
    }


@dataclass(frozen=True)
class Views:
    """What each consumer read from one folder."""

    app_tables: dict[TableName, list[tuple[Any, ...]]]
    app_summary: dict[str, Any]
    evidence: dict[str, Any]
    alerts: list[dict[str, Any]]


def read_everywhere(agg_dir: Path) -> Views:
    """``agg_dir`` read by the app, the explainer and the rules engine."""
    agg = open_aggregate(agg_dir)
    tables = {}
    for table in agg.tables:
        lazy = scan(agg, table)
        assert lazy is not None, table
        tables[table] = rows(collect(lazy, agg, table))
    rules = load_rules([default_rules_dir()])
    alerts = [alert.to_dict() for alert in evaluate(rules, agg_dir)]
    return Views(tables, agg.summary, _evidence(from_agg_dir(agg_dir)), alerts)
