"""Every ``runbook`` annotation of the default pack resolves to a section of docs/runbooks.md."""

from __future__ import annotations

import re
from pathlib import Path

from diagnostics.rules.loader import load_rules

ROOT = Path(__file__).resolve().parents[2]
SECTIONS = ("What it means", "Confirm with orderdoc", "What to change")


def slug(heading: str) -> str:
    """The anchor GitHub gives a Markdown heading."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def sections() -> dict[str, str]:
    text = (ROOT / "docs" / "runbooks.md").read_text(encoding="utf-8")
    parts = re.split(r"^## (.+)$", text, flags=re.MULTILINE)
    return {slug(title): body for title, body in zip(parts[1::2], parts[2::2], strict=True)}


def test_every_default_rule_has_a_runbook_section() -> None:
    found = sections()
    rules = load_rules([ROOT / "rules"])
    assert len(rules) == 7
    for rule in rules:
        runbook = dict(rule.annotations)["runbook"]
        page, _, anchor = runbook.partition("#")
        assert page == "docs/runbooks.md", rule.id
        assert anchor in found, f"{rule.id}: no section #{anchor} in docs/runbooks.md"
        body = found[anchor]
        assert f"`{rule.id}`" in body, f"section #{anchor} does not name rule {rule.id}"
        for part in SECTIONS:
            assert f"**{part}" in body, f"section #{anchor} lacks '{part}'"


def test_runbook_links_inside_the_page_resolve() -> None:
    text = (ROOT / "docs" / "runbooks.md").read_text(encoding="utf-8")
    found = sections()
    for anchor in re.findall(r"\]\(#([\w-]+)\)", text):
        assert anchor in found, anchor
    semantics = (ROOT / "docs" / "semantics.md").read_text(encoding="utf-8")
    headings = {slug(h) for h in re.findall(r"^#+ (.+)$", semantics, flags=re.MULTILINE)}
    for anchor in re.findall(r"\]\(semantics\.md#([\w-]+)\)", text):
        assert anchor in headings, anchor
