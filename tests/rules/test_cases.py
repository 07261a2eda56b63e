"""Rule tests as data, in the style of ``promtool test rules``.

Each ``cases/*.yaml`` gives the rules (``rule_files`` from the default pack in ``rules/``, or
inline ``rules``), the evaluation time ``now``, input aggregate rows per table (``input``, rows
as mappings; ``series`` for a column's per-minute values, ``"5 5 _ 30x3"`` where ``_`` is no
row and ``VxN`` repeats V N times), and ``expected_alerts``: exactly the alerts the evaluation
must produce (``rule``, ``state``, ``labels``, ``active_at``, ``starts_at``, ``ends_at``,
``value``; ``annotations`` when given).
"""

from __future__ import annotations

import importlib
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml
from aggtables import parse_time, write_table
from conftest import HERE, RULES_DIR

from diagnostics.rules import evaluate, load_rules
from diagnostics.rules.loader import parse_document
from diagnostics.rules.model import RuleSet, iso
from diagnostics.rules.yamlsrc import load_yaml

CASES = sorted((HERE / "cases").glob("*.yaml"))


def expand_series(spec: dict[str, Any]) -> list[dict[str, Any]]:
    """Rows from ``{table, time_column, start, column, values, row}`` (one row per minute)."""
    start = parse_time(spec["start"])
    assert start is not None
    rows = []
    minute = 0
    for token in str(spec["values"]).split():
        value, _, times = token.partition("x")
        for _ in range(int(times) if times else 1):
            if value != "_":
                moment = start + timedelta(minutes=minute)
                rows.append(
                    {
                        **spec.get("row", {}),
                        spec["time_column"]: moment,
                        spec["column"]: float(value) if "." in value else int(value),
                    }
                )
            minute += 1
    return rows


def case_rules(case: dict[str, Any], path: Path) -> RuleSet:
    if "rules" in case:
        doc = load_yaml(yaml.safe_dump({"rules": case["rules"]}, sort_keys=False))
        rules, problems = parse_document(doc, path.name)
        assert not problems, [str(p) for p in problems]
        return RuleSet(tuple(rules))
    return load_rules([RULES_DIR / name for name in case["rule_files"]])


def actual(alert: Any, with_annotations: bool) -> dict[str, Any]:
    out = {
        "rule": alert.rule_id,
        "state": alert.state.value,
        "labels": dict(alert.labels),
        "active_at": iso(alert.active_at),
        "starts_at": iso(alert.starts_at),
        "ends_at": iso(alert.ends_at) if alert.ends_at else None,
        "value": alert.value,
    }
    if with_annotations:
        out["annotations"] = dict(alert.annotations)
    return out


def normalise(expected: dict[str, Any]) -> dict[str, Any]:
    out = dict(expected)
    for key in ("active_at", "starts_at", "ends_at"):
        if out.get(key) is not None:
            out[key] = iso(parse_time(out[key]))  # type: ignore[arg-type]
    out["labels"] = {k: str(v) for k, v in out["labels"].items()}
    if out.get("value") is not None:
        out["value"] = float(out["value"])
    return out


@pytest.mark.parametrize("grid", ["auto", "sparse"])
@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_rule_case(path: Path, grid: str, agg_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every case gives the same alerts on the dense numpy grid (chosen for these small
    inputs) and on the sparse polars windows."""
    if grid == "sparse":
        module = importlib.import_module("diagnostics.rules.evaluate")
        monkeypatch.setattr(module, "dense_ok", lambda *_args: False)
    case = yaml.safe_load(path.read_text(encoding="utf-8"))
    tables: dict[str, list[dict[str, Any]]] = {}
    for table, rows in (case.get("input") or {}).items():
        tables.setdefault(table, []).extend(rows)
    for spec in case.get("series") or []:
        tables.setdefault(spec["table"], []).extend(expand_series(spec))
    for table, rows in tables.items():
        write_table(agg_dir, table, rows)
    rules = case_rules(case, path)
    alerts = evaluate(rules, agg_dir, now=parse_time(case["now"]))
    expected = [normalise(e) for e in case["expected_alerts"] or []]
    annotated = any("annotations" in e for e in expected)
    got = [actual(a, annotated) for a in alerts]
    key = lambda item: (item["rule"], sorted(item["labels"].items()), item["active_at"])  # noqa: E731
    assert sorted(got, key=key) == sorted(expected, key=key)
