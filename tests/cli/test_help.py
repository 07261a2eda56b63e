"""Every command's --help reads as plain text: its module docstring's reST markup removed."""

from __future__ import annotations

import re

import pytest

from diagnostics.cli import COMMANDS, main, plain_text

MARKUP = re.compile(r"``|:(?:func|mod|class|data|meth|attr):`")


def test_plain_text_drops_literals_and_roles() -> None:
    text = "``orderdoc demo [--out DIR]``: see :func:`~diagnostics.x.run` and :mod:`m`."
    assert plain_text(text) == "orderdoc demo [--out DIR]: see diagnostics.x.run and m."


@pytest.mark.parametrize("command", COMMANDS)
def test_help_has_no_rest_markup(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main([command, "--help"])
    assert exited.value.code == 0
    shown = capsys.readouterr().out
    assert shown.startswith("usage: orderdoc ")
    assert MARKUP.findall(shown) == []
