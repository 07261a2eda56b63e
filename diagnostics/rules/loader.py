"""Load rule files: YAML with line numbers, JSON Schema, then the checks a schema cannot do.

:func:`load_rules` either returns a :class:`RuleSet` whose every rule is valid, or raises one
:class:`RuleError` listing *every* problem found across all files, each with file, rule id,
field and line. Nothing in a rule is ever executed as Python.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator

from diagnostics.durations import MINUTE, DurationError, parse_duration
from diagnostics.kinds import Severity
from diagnostics.resources import packaged_rules
from diagnostics.rules.model import (
    AggregateFn,
    Comparison,
    ParamValue,
    Rule,
    RuleError,
    RuleProblem,
    RuleSet,
    display_path,
)
from diagnostics.rules.schema import RULE_FILE_SCHEMA
from diagnostics.rules.sqlcheck import ExprError, check_aggregate, check_where
from diagnostics.rules.tables import TABLES, TableName
from diagnostics.rules.templates import TemplateError, check_template
from diagnostics.rules.yamlsrc import YamlDoc, YamlError, load_yaml

#: Evaluation step: windows, ``for`` and ``keep_firing_for`` are multiples of it.
STEP_NS = MINUTE
RESERVED_LABELS = frozenset({"alertname", "severity"})
RULE_SUFFIXES = (".yaml", ".yml")
_VALIDATOR = Draft202012Validator(RULE_FILE_SCHEMA)


class _Problem(Exception):
    """One semantic problem in one field of one rule (internal)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


def default_rules_dir() -> Path:
    """The default rule pack shipped with the package (:mod:`diagnostics.resources`)."""
    return packaged_rules()


def rule_files(paths: Iterable[str | Path]) -> tuple[list[Path], list[RuleProblem]]:
    """Expand files and directories (recursively, ``*.yaml``/``*.yml``) in a stable order."""
    files: list[Path] = []
    problems: list[RuleProblem] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found = sorted(p for p in path.rglob("*") if p.suffix in RULE_SUFFIXES)
            if not found:
                problems.append(RuleProblem(str(raw), 0, None, None, "no rule files (*.yaml)"))
            files.extend(found)
        elif path.is_file():
            files.append(path)
        else:
            problems.append(RuleProblem(str(raw), 0, None, None, "no such file or directory"))
    unique: dict[Path, Path] = {}
    for path in files:  # a file named twice (as itself and inside a folder) is read once
        unique.setdefault(path.resolve(), path)
    return list(unique.values()), problems


def load_rules(paths: Iterable[str | Path]) -> RuleSet:
    """Load and validate every rule in ``paths`` (files or directories).

    Raises :class:`RuleError` listing all problems; rule ids must be unique across files.
    """
    files, problems = rule_files(paths)
    rules: list[Rule] = []
    for path in files:
        file_rules, file_problems = load_file(path)
        rules.extend(file_rules)
        problems.extend(file_problems)
    first_seen: dict[str, Rule] = {}
    for rule in rules:
        if rule.id in first_seen:
            other = first_seen[rule.id]
            msg = f"duplicate rule id, first defined at {other.file}:{other.line}"
            problems.append(RuleProblem(rule.file, rule.line, rule.id, "id", msg))
        else:
            first_seen[rule.id] = rule
    if problems:
        raise RuleError(problems)
    return RuleSet(tuple(rules), tuple(display_path(p) for p in files))


def load_file(path: Path) -> tuple[list[Rule], list[RuleProblem]]:
    """Load one file; return its valid rules and the problems of the others."""
    name = display_path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        why = f"not UTF-8 text (byte 0x{exc.object[exc.start]:02x} at offset {exc.start})"
        return [], [RuleProblem(name, 0, None, None, f"cannot read the file: {why}")]
    except OSError as exc:
        return [], [RuleProblem(name, 0, None, None, f"cannot read the file: {exc}")]
    try:
        doc = load_yaml(text)
    except YamlError as exc:
        return [], [RuleProblem(name, exc.line, None, None, str(exc))]
    return parse_document(doc, name)


#: jsonschema's message for one missing property.
_REQUIRED = re.compile(r"^'([^']+)' is a required property$")


def _rule_label(data: Any, index: int) -> str:
    rules = data.get("rules") if isinstance(data, dict) else None
    if isinstance(rules, list) and index < len(rules) and isinstance(rules[index], dict):
        rule_id = rules[index].get("id")
        if isinstance(rule_id, str) and rule_id:
            return rule_id
    return f"rules[{index}]"


def _schema_problems(doc: YamlDoc, name: str) -> tuple[list[RuleProblem], set[int]]:
    problems: list[RuleProblem] = []
    bad_rules: set[int] = set()
    errors = sorted(_VALIDATOR.iter_errors(doc.data), key=lambda e: list(map(str, e.path)))
    for error in errors:
        path = tuple(error.absolute_path)
        rule_id: str | None = None
        field: str | None = None
        if len(path) >= 2 and path[0] == "rules" and isinstance(path[1], int):
            bad_rules.add(path[1])
            rule_id = _rule_label(doc.data, path[1])
            if len(path) >= 3:
                field = ".".join(str(p) for p in path[2:])
        elif path:
            field = ".".join(str(p) for p in path)
        message = error.message
        if error.validator == "required" and isinstance(error.instance, dict):
            # one error per missing property, which its message names ("'x' is a required ...")
            named = _REQUIRED.match(error.message)
            missing = [k for k in error.validator_value if k not in error.instance]
            absent = named.group(1) if named else (missing[0] if missing else None)
            field = ".".join(filter(None, [field, absent])) or None
            message = "is required"
        elif not path and error.validator == "type" and doc.data is None:
            message = "the file is empty: a rule file holds 'rules:' and a list of rules"
        elif error.validator == "type" and error.instance is None:
            message = "has no value"
        elif error.validator == "additionalProperties" and isinstance(error.instance, dict):
            allowed = set(error.schema.get("properties", {}))
            extra = sorted(k for k in error.instance if k not in allowed)
            if extra:
                field = ".".join(filter(None, [field, extra[0]]))
                path = (*path, extra[0])
                message = f"unknown field (allowed: {', '.join(sorted(allowed))})"
        elif error.validator == "oneOf" and field == "threshold":
            message = f"{error.instance!r} is neither a number nor ':param'"
        problem = RuleProblem(name, doc.line_of(path), rule_id, field, message)
        if problem not in problems:  # the schema's branches may report one problem twice
            problems.append(problem)
    return problems, bad_rules


def parse_document(doc: YamlDoc, name: str) -> tuple[list[Rule], list[RuleProblem]]:
    """Validate a parsed rule file against the schema, then build each rule."""
    problems, bad_rules = _schema_problems(doc, name)
    if not isinstance(doc.data, dict) or not isinstance(doc.data.get("rules"), list):
        return [], problems
    rules: list[Rule] = []
    for index, raw in enumerate(doc.data["rules"]):
        if index in bad_rules:
            continue
        try:
            rules.append(build_rule(raw, name, doc.line_of(("rules", index))))
        except _Problem as exc:
            line = doc.line_of(("rules", index, *exc.field.split(".")))
            problems.append(RuleProblem(name, line, raw["id"], exc.field, exc.message))
    return rules, problems


def _duration(raw: Mapping[str, Any], field: str, *, positive: bool = False) -> int | None:
    if field not in raw:
        return None
    text = str(raw[field])
    try:
        value = parse_duration(text)
    except DurationError as exc:
        raise _Problem(field, str(exc)) from exc
    if value < 0 or (positive and value == 0):
        raise _Problem(field, f"'{text}' must be {'positive' if positive else 'at least 0'}")
    if value % STEP_NS:
        msg = f"'{text}' must be a whole number of minutes (the evaluation step is 1m)"
        raise _Problem(field, msg)
    return value


def _params(raw: Mapping[str, Any]) -> dict[str, ParamValue]:
    params: dict[str, ParamValue] = {}
    for key, value in (raw.get("params") or {}).items():
        params[key] = tuple(value) if isinstance(value, list) else value
    return params


def build_rule(raw: Mapping[str, Any], file: str, line: int) -> Rule:
    """Build one rule from schema-valid data; raise ``_Problem`` naming the bad field."""
    table = TableName(raw["table"])
    spec = TABLES[table]
    params = _params(raw)
    time_column = raw.get("time_column", spec.time_column)
    if spec.time_column is None:
        for field in ("time_column", "window", "for", "keep_firing_for"):
            if field in raw:
                msg = f"table '{table}' has no time column, so a rule on it cannot set {field}"
                raise _Problem(field, msg)
    elif time_column not in spec.timestamp_columns():
        allowed = ", ".join(spec.timestamp_columns())
        msg = f"'{time_column}' is not a timestamp column of '{table}' ({allowed})"
        raise _Problem("time_column", msg)
    window = _duration(raw, "window", positive=True)
    if spec.time_column is not None and window is None:
        raise _Problem("window", f"is required for table '{table}', e.g. window: 5m")
    for_ns = _duration(raw, "for") or 0
    keep_ns = _duration(raw, "keep_firing_for") or 0
    try:
        where_sql = check_where(raw["where"], spec, params) if "where" in raw else None
    except ExprError as exc:
        raise _Problem("where", str(exc)) from exc
    try:
        aggregate = check_aggregate(raw["aggregate"], spec)
    except ExprError as exc:
        raise _Problem("aggregate", str(exc)) from exc
    if aggregate.fn is AggregateFn.RATE and window is None:
        msg = f"rate needs a window, and table '{table}' has no time column; use count or sum"
        raise _Problem("aggregate", msg)
    threshold = raw["threshold"]
    if isinstance(threshold, str):
        value = params.get(threshold[1:])
        if value is None:
            raise _Problem("threshold", f"param '{threshold}' is not declared in 'params'")
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise _Problem("threshold", f"param '{threshold}' is {value!r}, not a number")
        threshold = value
    group_by = tuple(raw.get("group_by", ()))
    for column in group_by:
        if column not in spec.columns:
            known = ", ".join(spec.columns)
            msg = f"unknown column '{column}' for table '{table}' (columns: {known})"
            raise _Problem("group_by", msg)
    labels = dict(raw.get("labels", {}))
    for key in labels:
        if key in RESERVED_LABELS or key in group_by:
            msg = f"label '{key}' is set by the alert itself (alertname, severity, group_by)"
            raise _Problem(f"labels.{key}", msg)
    label_names = set(labels) | set(group_by) | RESERVED_LABELS
    annotations = dict(raw.get("annotations", {}))
    for key, template in annotations.items():
        try:
            check_template(template, label_names, set(params))
        except TemplateError as exc:
            raise _Problem(f"annotations.{key}", str(exc)) from exc
    return Rule(
        id=raw["id"],
        title=raw["title"],
        severity=Severity(raw["severity"]),
        description=raw["description"],
        table=table,
        where=raw.get("where"),
        where_sql=where_sql,
        time_column=time_column if spec.time_column else None,
        window_ns=window,
        aggregate=aggregate,
        op=Comparison(raw["op"]),
        threshold=float(threshold),
        group_by=group_by,
        for_ns=for_ns,
        keep_firing_for_ns=keep_ns,
        labels=tuple(sorted(labels.items())),
        annotations=tuple(annotations.items()),
        cause=raw["cause"],
        params=tuple(params.items()),
        file=file,
        line=line,
    )
