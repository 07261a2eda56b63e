"""Reading an ASA job definition in any of the three shapes users have.

* an ARM deployment template: ``resources[]`` holding a
  ``Microsoft.StreamAnalytics/streamingjobs`` resource; ``[parameters('x')]`` and
  ``[variables('x')]`` values are resolved from a parameter file, the parameter's
  ``defaultValue`` or the template's ``variables``;
* one resource as JSON (the portal's resource JSON view): ``{"type": ..., "properties": {...}}``;
* the flattened output of ``az stream-analytics job show`` (the properties at the top level).

The document is kept as read (:attr:`JobDefinition.document`) together with where each field
came from, so that :mod:`diagnostics.jobdef.fix` can write the corrected definition in the same
shape, every other value untouched. docs/explain.md maps every field.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from diagnostics.engine.policy import MAX_TOLERANCE_S
from diagnostics.errors import InputError, Setting

JOB_TYPE = "microsoft.streamanalytics/streamingjobs"
#: The last quoted text of an ARM name expression: "[concat(parameters('job'), '/in')]".
_LAST_LITERAL = re.compile(r"'([^']*)'\s*\)\s*\]$")
_REFERENCE = re.compile(r"^\[\s*(parameters|variables)\(\s*'([^']+)'\s*\)\s*\]$", re.IGNORECASE)
#: A job's resource id: ``/subscriptions/.../resourceGroups/RG/providers/Microsoft.StreamAnalytics/streamingjobs/NAME``.
_RESOURCE_ID = re.compile(
    r"/resourceGroups/([^/]+)/providers/Microsoft\.StreamAnalytics/streamingjobs/([^/]+)/?$",
    re.IGNORECASE,
)

#: Names of the three policy properties (the same in every shape).
LATE = "eventsLateArrivalMaxDelayInSeconds"
OUT_OF_ORDER = "eventsOutOfOrderMaxDelayInSeconds"
POLICY = "eventsOutOfOrderPolicy"


class Shape(StrEnum):
    """The three shapes a job definition comes in."""

    ARM_TEMPLATE = "arm-template"
    RESOURCE = "resource"
    AZ_SHOW = "az-show"


@dataclass(frozen=True, slots=True)
class JobInput:
    """One input of the job: ``kind`` is ``Stream`` or ``Reference``; ``source`` the data
    source type (e.g. ``Microsoft.ServiceBus/EventHub``)."""

    name: str
    kind: str
    source: str | None


@dataclass(frozen=True, slots=True)
class JobDefinition:
    """A job definition as read. Tolerances are whole seconds (``late_seconds`` ``None`` =
    unlimited, ASA's -1); ``properties_path`` locates the job's properties object in
    ``document`` (keys and list indexes)."""

    path: Path
    shape: Shape
    name: str | None
    resource_group: str | None
    late_seconds: int | None
    out_of_order_seconds: int
    action: str
    compatibility_level: str | None
    inputs: tuple[JobInput, ...]
    query: str | None
    transformation_name: str
    document: Any
    properties_path: tuple[str | int, ...]
    query_path: tuple[str | int, ...] | None
    #: how summaries name the file (default: its path), e.g. the name it was uploaded as
    label: str | None = None

    @property
    def shown_as(self) -> str:
        """The file as summaries name it: :attr:`label`, else the path."""
        return self.label or str(self.path)

    @property
    def stream_inputs(self) -> list[JobInput]:
        """The inputs of type Stream (the only ones with event ordering)."""
        return [i for i in self.inputs if i.kind.lower() == "stream"]

    def input_named(self, name: str) -> JobInput | None:
        """The input called ``name`` (case-insensitive, as in ASA)."""
        return next((i for i in self.inputs if i.name.lower() == name.lower()), None)


class _Resolver:
    """Resolves ``[parameters('x')]`` / ``[variables('x')]`` values of an ARM template."""

    def __init__(self, path: Path, template: Mapping[str, Any], values: Mapping[str, Any]):
        self.path = path
        self.parameters = template.get("parameters") or {}
        self.variables = template.get("variables") or {}
        self.values = values

    def __call__(self, value: Any, field: str) -> Any:
        if not is_arm_expression(value):
            return value
        if value.startswith("[["):  # an escaped literal: "[[x]" is the text "[x]"
            return value[1:]
        if not (match := _REFERENCE.match(value)):
            msg = f"{self.path}: {field} is the ARM expression {value!r}, which orderdoc cannot evaluate; write the value literally"
            raise InputError(msg)
        kind, name = match.group(1).lower(), match.group(2)
        if kind == "variables":
            if name not in self.variables:
                msg = f"{self.path}: {field} uses variable '{name}', which the template does not define"
                raise InputError(msg)
            return self(self.variables[name], field)
        if name in self.values:
            return self.values[name]
        declared = self.parameters.get(name)
        if isinstance(declared, Mapping) and "defaultValue" in declared:
            return self(declared["defaultValue"], field)
        msg = f"{self.path}: parameter '{name}' (used by {field}) has no value: give it in an ARM parameter file or as a defaultValue"
        raise InputError(msg, Setting.PARAMETERS)


def is_arm_expression(value: Any) -> bool:
    """True for a string ARM reads as an expression, or as an escaped literal (``[[...]``)."""
    return isinstance(value, str) and value.startswith("[") and value.endswith("]")


def arm_literal(value: str) -> str:
    """``value`` as an ARM template writes the literal text (``[x]`` escaped as ``[[x]``)."""
    return "[" + value if is_arm_expression(value) else value


def _load_json(path: Path, what: Setting) -> Any:
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError as exc:
        msg = f"{what.value} {path}: no such file"
        raise InputError(msg, what) from exc
    except (OSError, UnicodeDecodeError) as exc:
        msg = f"{what.value} {path}: cannot read ({exc})"
        raise InputError(msg, what) from exc
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        msg = f"{path}: not JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})"
        raise InputError(msg) from exc


def read_parameters(path: Path) -> dict[str, Any]:
    """An ARM parameter file (``{"parameters": {"x": {"value": ...}}}``) as ``{x: value}``."""
    data = _load_json(path, Setting.PARAMETERS)
    params = data.get("parameters") if isinstance(data, Mapping) else None
    if not isinstance(params, Mapping):
        msg = f"{path}: not an ARM parameter file (no 'parameters' object)"
        raise InputError(msg)
    values: dict[str, Any] = {}
    for name, entry in params.items():
        if not isinstance(entry, Mapping) or "value" not in entry:
            msg = f"{path}: parameter '{name}' has no 'value' (Key Vault references are not read)"
            raise InputError(msg)
        values[name] = entry["value"]
    return values


def _is_job(node: Any) -> bool:
    return isinstance(node, Mapping) and str(node.get("type", "")).lower() == JOB_TYPE


def _locate(path: Path, data: Any) -> tuple[Shape, tuple[str | int, ...]]:
    """The shape and the path of the job's properties object."""
    if not isinstance(data, Mapping):
        msg = f"{path}: not a job definition (the JSON is not an object)"
        raise InputError(msg)
    if isinstance(data.get("resources"), list):
        jobs = [i for i, r in enumerate(data["resources"]) if _is_job(r)]
        if not jobs:
            msg = f"{path}: no Microsoft.StreamAnalytics/streamingjobs resource in resources[]"
            raise InputError(msg)
        if len(jobs) > 1:
            msg = f"{path}: {len(jobs)} streaming jobs in resources[]; keep one per file"
            raise InputError(msg)
        return Shape.ARM_TEMPLATE, ("resources", jobs[0], "properties")
    if _is_job(data) and isinstance(data.get("properties"), Mapping):
        return Shape.RESOURCE, ("properties",)
    if any(k in data for k in (LATE, OUT_OF_ORDER, POLICY, "transformation", "jobId")):
        return Shape.AZ_SHOW, ()
    msg = f"{path}: no streaming job in it (expected an ARM template, a Microsoft.StreamAnalytics/streamingjobs resource or 'az stream-analytics job show' output)"
    raise InputError(msg)


def get_path(data: Any, keys: tuple[str | int, ...]) -> Any:
    """``data[k0][k1]...``."""
    for key in keys:
        data = data[key]
    return data


def _int(path: Path, value: Any, field: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int | str):
        msg = f"{path}: {field} is {value!r}, not a whole number of seconds"
        raise InputError(msg)
    try:
        return int(value)
    except ValueError as exc:
        msg = f"{path}: {field} is {value!r}, not a whole number of seconds"
        raise InputError(msg) from exc


def _children(data: Any, job: int) -> list[tuple[str, tuple[str | int, ...], Mapping[str, Any]]]:
    """The job's inputs and transformation written as child resources of an ARM template
    (``Microsoft.StreamAnalytics/streamingjobs/inputs``, ``.../transformations``), beside
    the job or in its own ``resources``: ``(inputs|transformations, path, resource)``."""
    found: list[tuple[str, tuple[str | int, ...], Mapping[str, Any]]] = []
    places: list[tuple[tuple[str | int, ...], Any]] = [(("resources",), data["resources"])]
    nested = data["resources"][job].get("resources")
    if isinstance(nested, list):
        places.append((("resources", job, "resources"), nested))
    for where, resources in places:
        for i, resource in enumerate(resources):
            kind = str(resource.get("type", "")).lower() if isinstance(resource, Mapping) else ""
            kind = kind.removeprefix(JOB_TYPE + "/")
            if kind in ("inputs", "transformations"):
                found.append((kind, (*where, i), resource))
    return found


def _child_name(path: Path, raw: Any, resolve: _Resolver | None, field: str) -> str:
    """A child resource's own name: ``job/telemetry``, ``telemetry``,
    ``[concat(parameters('job'), '/telemetry')]`` and ``[parameters('x')]`` all work."""
    if resolve is not None and isinstance(raw, str) and _REFERENCE.match(raw):
        raw = resolve(raw, field)
    elif is_arm_expression(raw) and not raw.startswith("[["):
        match = _LAST_LITERAL.search(raw)
        raw = match.group(1) if match else None
    name = raw.split("/")[-1] if isinstance(raw, str) else ""
    if not name:
        msg = f"{path}: cannot tell the name of {field} ({raw!r}); write it as 'job/name'"
        raise InputError(msg)
    return name


def _inputs(path: Path, raw: Any, resolve: _Resolver | None) -> tuple[JobInput, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        msg = f"{path}: inputs is not a list"
        raise InputError(msg)
    found = []
    for n, item in enumerate(raw):
        if not isinstance(item, Mapping) or not item.get("name"):
            msg = f"{path}: inputs[{n}] has no name"
            raise InputError(msg)
        name = _child_name(path, item["name"], resolve, f"inputs[{n}]")
        nested = item.get("properties")
        props: Mapping[str, Any] = nested if isinstance(nested, Mapping) else item
        kind = str(props.get("type") or "Stream")
        if "/" in kind:  # a resource type, not Stream/Reference
            kind = "Stream"
        datasource = props.get("datasource")
        source = datasource.get("type") if isinstance(datasource, Mapping) else None
        found.append(JobInput(name=name, kind=kind, source=source))
    return tuple(found)


def _from_resource_id(value: Any) -> tuple[str | None, str | None]:
    """The resource group and job name of a streaming job's resource ``id``, if it is one."""
    if not isinstance(value, str) or is_arm_expression(value):
        return None, None
    match = _RESOURCE_ID.search(value)
    return (match.group(1), match.group(2)) if match else (None, None)


def read_job_definition(
    path: Path | str, parameters: Path | str | None = None, *, label: str | None = None
) -> JobDefinition:
    """The job definition in ``path`` (any of the three shapes); errors name the file;
    ``label``: how summaries name it instead of the path (e.g. an uploaded file's name)."""
    path = Path(path)
    data = _load_json(path, Setting.JOB_DEFINITION)
    shape, props_path = _locate(path, data)
    if parameters and shape is not Shape.ARM_TEMPLATE:
        msg = f"{path} is {shape.value} JSON, not an ARM template: the ARM parameter file {parameters} applies to templates only; leave it out"
        raise InputError(msg)
    values = read_parameters(Path(parameters)) if parameters else {}
    resolve = _Resolver(path, data, values) if shape is Shape.ARM_TEMPLATE else None
    props = get_path(data, props_path)

    def field(key: str, default: Any = None) -> Any:
        if key not in props:
            return default
        return resolve(props[key], key) if resolve else props[key]

    late_raw = field(LATE)
    late = None if late_raw is None else _int(path, late_raw, LATE)
    if late is not None and not -1 <= late <= MAX_TOLERANCE_S:
        msg = f"{path}: {LATE} is {late}; ASA accepts -1 (unlimited) to {MAX_TOLERANCE_S}"
        raise InputError(msg)
    ooo = _int(path, field(OUT_OF_ORDER, 0), OUT_OF_ORDER)
    if not 0 <= ooo <= MAX_TOLERANCE_S:
        msg = f"{path}: {OUT_OF_ORDER} is {ooo}; ASA accepts 0 to {MAX_TOLERANCE_S}"
        raise InputError(msg)
    action = str(field(POLICY, "Adjust"))
    if action.lower() not in ("adjust", "drop"):
        msg = f"{path}: {POLICY} is {action!r}; ASA accepts Adjust or Drop"
        raise InputError(msg)
    transformation = props.get("transformation") or {}
    query_path: tuple[str | int, ...] | None = None
    if isinstance(transformation, Mapping):
        if isinstance(transformation.get("properties"), Mapping) and (
            "query" in transformation["properties"]
        ):
            query_path = (*props_path, "transformation", "properties", "query")
        elif "query" in transformation:
            query_path = (*props_path, "transformation", "query")
    transformation_name = (
        str(transformation.get("name") or "Transformation")
        if isinstance(transformation, Mapping)
        else "Transformation"
    )
    inputs = _inputs(path, props.get("inputs"), resolve)
    if shape is Shape.ARM_TEMPLATE:
        job = props_path[1]
        assert isinstance(job, int)
        for kind, where, child in _children(data, job):
            label = f"resources{''.join(f'[{k}]' for k in where[1:] if isinstance(k, int))}"
            child_props = child.get("properties")
            if kind == "inputs":
                inputs += _inputs(path, [{**child, "name": child.get("name")}], resolve)
            elif query_path is None and isinstance(child_props, Mapping) and "query" in child_props:
                query_path = (*where, "properties", "query")
                transformation_name = _child_name(path, child.get("name"), resolve, label)
    query = get_path(data, query_path) if query_path else None
    if resolve and query is not None:
        query = resolve(query, "transformation query")
    if query is not None and not isinstance(query, str):
        msg = f"{path}: the transformation query is not a string"
        raise InputError(msg)
    container = data if shape is Shape.AZ_SHOW else get_path(data, props_path[:-1])
    name = container.get("name")
    if resolve and name is not None:
        try:
            name = resolve(name, "name")
        except InputError:
            name = None
    id_group, id_name = _from_resource_id(container.get("id"))
    group = data.get("resourceGroup") if shape is Shape.AZ_SHOW else None
    return JobDefinition(
        path=path,
        shape=shape,
        name=name if isinstance(name, str) and name else id_name,
        resource_group=group if isinstance(group, str) and group else id_group,
        late_seconds=None if late is None or late == -1 else late,
        out_of_order_seconds=ooo,
        action=action.capitalize(),
        compatibility_level=None
        if field("compatibilityLevel") is None
        else str(field("compatibilityLevel")),
        inputs=inputs,
        query=query,
        transformation_name=transformation_name,
        document=data,
        properties_path=props_path,
        query_path=query_path,
        label=label,
    )
