"""Annotation templates: ``{{ $labels.NAME }}``, ``{{ $params.NAME }}``, ``{{ $value }}`` and
``{{ $threshold }}``, in the spelling of Prometheus' alerting templates.

There is no expression language: a template is split once into literal text and references,
each reference is checked when the rules load (:func:`check_template`) and substituted by plain
lookup when an alert is rendered (:func:`render`). Nothing is evaluated.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Set
from functools import lru_cache

_PLACE = re.compile(r"\{\{(.*?)\}\}", re.DOTALL)
_REF = re.compile(r"^\s*\$(?:(value|threshold)|(labels|params)\.([A-Za-z_][A-Za-z0-9_]*))\s*$")


class TemplateError(ValueError):
    """A template refers to something that does not exist or is not a reference at all."""


def format_value(value: float | None) -> str:
    """A number as people read it: ``3``, ``0.25``, ``1234.5``, ``1.5e+09``; no value is ``-``."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if float(value).is_integer() and abs(value) < 1e15:
        return str(int(value))
    return f"{value:.6g}"


def references(template: str) -> list[tuple[str, str | None]]:
    """The references of a template, as ``("value", None)`` or ``("labels", "job")``.

    Raises :class:`TemplateError` on any ``{{ ... }}`` that is not a reference, and on a
    stray ``{{`` or ``}}``.
    """
    refs: list[tuple[str, str | None]] = []
    for match in _PLACE.finditer(template):
        ref = _REF.match(match.group(1))
        if not ref:
            msg = (
                f"'{{{{{match.group(1)}}}}}' is not a template reference; use {{{{ $value }}}}, "
                "{{ $threshold }}, {{ $labels.NAME }} or {{ $params.NAME }}"
            )
            raise TemplateError(msg)
        scalar, scope, name = ref.groups()
        refs.append((scalar, None) if scalar else (scope, name))
    rest = _PLACE.sub("", template)
    if "{{" in rest or "}}" in rest:
        msg = f"unbalanced '{{{{' or '}}}}' in template {template!r}"
        raise TemplateError(msg)
    return refs


def check_template(template: str, label_names: Set[str], param_names: Set[str]) -> None:
    """Check that every ``$labels.X`` is a label the alert will carry and every ``$params.X``
    is a declared param."""
    for scope, name in references(template):
        if scope == "labels" and name not in label_names:
            known = ", ".join(sorted(label_names))
            msg = f"template refers to label '{name}', which the alert does not have ({known})"
            raise TemplateError(msg)
        if scope == "params" and name not in param_names:
            known = ", ".join(sorted(param_names)) or "none"
            msg = f"template refers to param '{name}', which is not declared ({known})"
            raise TemplateError(msg)


@lru_cache(maxsize=1024)
def _compiled(template: str) -> tuple[tuple[str, str | None], ...]:
    """The template as parts: ``("text", literal)`` or ``(scope, name)`` references."""
    parts: list[tuple[str, str | None]] = []
    pos = 0
    for match in _PLACE.finditer(template):
        parts.append(("text", template[pos : match.start()]))
        ref = _REF.match(match.group(1))
        if ref is None:  # unreachable for a checked template; keep the text as it is
            parts.append(("text", match.group(0)))
        else:
            scalar, scope, name = ref.groups()
            parts.append((scalar, None) if scalar else (scope, name))
        pos = match.end()
    parts.append(("text", template[pos:]))
    return tuple(p for p in parts if p != ("text", ""))


def render(
    template: str,
    *,
    labels: Mapping[str, str],
    params: Mapping[str, object],
    value: float | None,
    threshold: float,
) -> str:
    """Substitute the references of a checked template (a missing label renders empty)."""
    out: list[str] = []
    for scope, name in _compiled(template):
        if scope == "text":
            out.append(name or "")
        elif scope == "value":
            out.append(format_value(value))
        elif scope == "threshold":
            out.append(format_value(threshold))
        elif scope == "labels":
            out.append(labels.get(name or "", ""))
        else:
            item = params.get(name or "", "")
            if isinstance(item, tuple):
                out.append(", ".join(str(v) for v in item))
            elif isinstance(item, int | float) and not isinstance(item, bool):
                out.append(format_value(item))
            else:
                out.append(str(item))
    return "".join(out)
