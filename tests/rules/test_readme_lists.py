"""rules/README.md's lists are the code's: the tables and columns a rule's ``where`` can use
(the aggregate folder's schema) and the causes of ``orderdoc explain`` a rule may name."""

from __future__ import annotations

import re
from pathlib import Path

from diagnostics.aggregates import TABLES
from diagnostics.explain.model import Cause

README = Path(__file__).resolve().parents[2] / "rules" / "README.md"


def test_the_tables_and_their_columns_are_the_schemas() -> None:
    text = README.read_text(encoding="utf-8")
    rows = dict(re.findall(r"^\| `(\w+)` \| ([a-z_, ]+) \| (?:`\w+`|none) \|$", text, re.M))
    assert set(rows) == {str(name) for name in TABLES}
    for name, spec in TABLES.items():
        assert rows[str(name)].split(", ") == list(spec.columns), name


def test_the_causes_are_explains() -> None:
    text = README.read_text(encoding="utf-8")
    listed = re.search(r"\(`diagnostics\.explain\.model\.Cause`: ([^)]*)\)", text)
    assert listed is not None
    assert re.findall(r"`(\w+)`", listed.group(1)) == [cause.value for cause in Cause]
