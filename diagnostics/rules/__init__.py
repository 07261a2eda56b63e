"""The rules engine: YAML alerting rules evaluated on the aggregate tables.

Public API (used by ``orderdoc rules``, ``orderdoc alerts``, the app and the demo)::

    rules = load_rules(["rules/"])            # RuleSet, or RuleError listing every problem
    alerts = evaluate(rules, "out/agg", now=None)   # list[Alert]; now defaults to data end
    deliver(alerts, "http://127.0.0.1:9093/hook")   # Alertmanager-style webhook
"""

from __future__ import annotations

from diagnostics.rules.evaluate import Evaluation, evaluate, evaluate_detailed
from diagnostics.rules.loader import default_rules_dir, load_rules
from diagnostics.rules.model import (
    Aggregate,
    AggregateFn,
    Alert,
    AlertState,
    Comparison,
    Rule,
    RuleError,
    RuleProblem,
    RuleSet,
)

__all__ = [
    "Aggregate",
    "AggregateFn",
    "Alert",
    "AlertState",
    "Comparison",
    "Evaluation",
    "Rule",
    "RuleError",
    "RuleProblem",
    "RuleSet",
    "default_rules_dir",
    "evaluate",
    "evaluate_detailed",
    "load_rules",
]
