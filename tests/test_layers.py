"""Layering: the command line sits on the library, never the other way round.

Every module of ``diagnostics`` outside ``diagnostics/cli`` (and ``python -m diagnostics``) is
library code: it imports nothing from ``diagnostics.cli`` and does not parse command lines (no
``argparse``). The app's pages import nothing from ``diagnostics.cli`` either (its start-up
script reads its own ``--agg-dir``).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CLI = ROOT / "diagnostics" / "cli"
ENTRY = ROOT / "diagnostics" / "__main__.py"


def library_modules() -> list[Path]:
    """Every Python file of the library and the app pages."""
    files = [*(ROOT / "diagnostics").rglob("*.py"), *(ROOT / "app").rglob("*.py")]
    return sorted(p for p in files if CLI not in p.parents and p != ENTRY)


def imported(path: Path) -> set[str]:
    """The modules ``path`` imports (``from a import b`` yields ``a`` and ``a.b``)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def test_the_library_is_found() -> None:
    names = {p.relative_to(ROOT).as_posix() for p in library_modules()}
    assert "diagnostics/aggregates/folder.py" in names
    assert "diagnostics/report/pipeline.py" in names
    assert not any(name.startswith("diagnostics/cli/") for name in names)


def test_no_library_module_imports_the_cli_or_parses_a_command_line() -> None:
    offences = []
    for path in library_modules():
        names = imported(path)
        cli = sorted(n for n in names if n == "diagnostics.cli" or n.startswith("diagnostics.cli."))
        if cli:
            offences.append(f"{path.relative_to(ROOT)} imports {', '.join(cli)}")
        if "argparse" in names and path.is_relative_to(ROOT / "diagnostics"):
            offences.append(f"{path.relative_to(ROOT)} imports argparse")
    assert offences == []


def test_the_check_sees_an_import_of_the_cli(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text("def f():\n    from diagnostics.cli import main\n    import argparse\n")
    assert {"diagnostics.cli", "diagnostics.cli.main", "argparse"} <= imported(module)
