"""YAML reading that keeps line numbers and refuses duplicate keys.

:func:`load_yaml` returns the plain data (safe loader: no Python objects) and a map from each
path inside the document (``("rules", 2, "severity")``) to the 1-based line where that key or
item starts, so that every later error can name its line.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import yaml

Path_ = tuple[str | int, ...]


class YamlError(ValueError):
    """The text is not valid YAML, or repeats a key; :attr:`line` is 1-based (0 if unknown)."""

    def __init__(self, message: str, line: int) -> None:
        super().__init__(message)
        self.line = line


@dataclass(frozen=True)
class YamlDoc:
    """A parsed YAML document and the line of every key and item in it."""

    data: Any
    lines: dict[Path_, int]

    def line_of(self, path: Path_) -> int:
        """The line of ``path``, or of its nearest ancestor that has one (1 for the root)."""
        probe = tuple(path)
        while probe:
            if probe in self.lines:
                return self.lines[probe]
            probe = probe[:-1]
        return self.lines.get((), 1)


def _walk(node: yaml.Node, path: Path_, lines: dict[Path_, int]) -> None:
    if isinstance(node, yaml.MappingNode):
        seen: dict[str, int] = {}
        for key_node, value_node in node.value:
            key = str(key_node.value)
            line = key_node.start_mark.line + 1
            if key in seen:
                msg = f"key '{key}' is repeated (first at line {seen[key]})"
                raise YamlError(msg, line)
            seen[key] = line
            lines[(*path, key)] = line
            _walk(value_node, (*path, key), lines)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            lines[(*path, index)] = item.start_mark.line + 1
            _walk(item, (*path, index), lines)


def load_yaml(text: str) -> YamlDoc:
    """Parse one YAML document with the safe loader, keeping line numbers.

    Raises :class:`YamlError` with the line of a syntax error or of a repeated key.
    """
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return YamlDoc(None, {(): 1})
        lines: dict[Path_, int] = {(): node.start_mark.line + 1}
        _walk(node, (), lines)
        data = loader.construct_document(node)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else 0
        problem = exc.problem or exc.context or "invalid YAML"
        msg = f"invalid YAML: {problem}"
        raise YamlError(msg, line) from exc
    except yaml.YAMLError as exc:
        msg = f"invalid YAML: {exc}"
        raise YamlError(msg, 0) from exc
    finally:
        loader.dispose()
    return YamlDoc(data, lines)
