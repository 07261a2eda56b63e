"""Every command that reads inputs says in its --help that they may be storage URLs."""

from __future__ import annotations

import pytest

from diagnostics.cli import build_parser


@pytest.mark.parametrize(
    "command", ["aggregate", "explain", "replay", "whatif", "impact", "translate", "cti", "watch"]
)
def test_help_names_storage_urls(command: str) -> None:
    sub = build_parser(command)._subparsers._group_actions[0].choices[command]  # type: ignore[union-attr]
    text = " ".join(sub.format_help().split())
    assert "az://" in text, command
    assert "storage URL" in text, command
