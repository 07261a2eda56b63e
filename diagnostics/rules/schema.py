"""The JSON Schema of a rule file (``rules/schema.json`` is this dict, written out).

The schema checks shape and vocabulary; what it cannot express (SQL parsing, columns known to
the table, durations, template references) is checked by :mod:`diagnostics.rules.loader`.
``tests/rules`` asserts that ``rules/schema.json`` equals :data:`RULE_FILE_SCHEMA`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from diagnostics.kinds import Severity
from diagnostics.rules.model import Comparison
from diagnostics.rules.tables import TableName

_IDENT = "^[A-Za-z_][A-Za-z0-9_]*$"
_DURATION = {
    "type": "string",
    "minLength": 1,
    "description": "A duration such as 30s, 5m, 1h30m (a multiple of one minute, or 0).",
}
_PARAM_SCALAR = {"type": ["string", "number", "boolean"]}

RULE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": [
        "id",
        "title",
        "severity",
        "description",
        "table",
        "aggregate",
        "op",
        "threshold",
        "cause",
    ],
    "properties": {
        "id": {"type": "string", "pattern": "^[a-z0-9][a-z0-9_.-]*$", "maxLength": 100},
        "title": {"type": "string", "minLength": 1},
        "severity": {"enum": [s.value for s in Severity]},
        "description": {"type": "string", "minLength": 1},
        "table": {"enum": [t.value for t in TableName]},
        "where": {
            "type": "string",
            "minLength": 1,
            "description": "A SQL boolean expression over the table's columns; :name binds a "
            "param.",
        },
        "time_column": {"type": "string", "pattern": _IDENT},
        "window": _DURATION,
        "aggregate": {
            "type": "string",
            "minLength": 1,
            "description": "count | sum(col) | max(col) | min(col) | avg(col) | rate | "
            "rate(col) | ratio(col, col)",
        },
        "op": {"enum": [c.value for c in Comparison]},
        "threshold": {
            "oneOf": [
                {"type": "number"},
                {"type": "string", "pattern": "^:[A-Za-z_][A-Za-z0-9_]*$"},
            ],
            "description": "A number, or :name of a numeric param.",
        },
        "group_by": {
            "type": "array",
            "items": {"type": "string", "pattern": _IDENT},
            "uniqueItems": True,
        },
        "for": _DURATION,
        "keep_firing_for": _DURATION,
        "labels": {
            "type": "object",
            "propertyNames": {"pattern": _IDENT},
            "additionalProperties": {"type": "string"},
        },
        "annotations": {
            "type": "object",
            "propertyNames": {"pattern": _IDENT},
            "additionalProperties": {"type": "string"},
        },
        "cause": {"type": "string", "pattern": "^[a-z][a-z0-9_]*$"},
        "params": {
            "type": "object",
            "propertyNames": {"pattern": _IDENT},
            "additionalProperties": {
                "oneOf": [_PARAM_SCALAR, {"type": "array", "items": _PARAM_SCALAR}]
            },
        },
    },
}

RULE_FILE_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "orderdoc-rules.schema.json",
    "title": "orderdoc alerting rules",
    "type": "object",
    "additionalProperties": False,
    "required": ["rules"],
    "properties": {"rules": {"type": "array", "items": {"$ref": "#/$defs/rule"}}},
    "$defs": {"rule": RULE_SCHEMA},
}


def schema_json() -> str:
    """The schema as written to ``rules/schema.json`` (sorted keys, two-space indent)."""
    return json.dumps(RULE_FILE_SCHEMA, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def write_schema(path: Path) -> None:
    """Write :func:`schema_json` to ``path``."""
    path.write_text(schema_json(), encoding="utf-8")
