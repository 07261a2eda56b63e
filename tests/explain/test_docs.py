"""docs/schemas.md, "Explain report and what-if table", lists exactly the causes, suggestion
kinds and impact keys the explainer writes (``--format json``), so the list cannot drift."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from diagnostics.explain.model import Cause, Impact, SnippetForm, SuggestionKind

SCHEMAS = Path(__file__).resolve().parents[2] / "docs" / "schemas.md"
HEADING = "## Explain report and what-if table"


def explain_section(text: str) -> str:
    """The section's text, from its heading to the next ``## `` heading, with every run of
    blanks and line breaks as one space (the list may be wrapped anywhere)."""
    start = text.index(HEADING)
    end = text.find("\n## ", start + len(HEADING))
    return " ".join(text[start : end if end >= 0 else len(text)].split())


def listed(section: str, lead: str) -> set[str]:
    """The backquoted names in the parenthesis that starts with ``lead`` (``one of: ...``)."""
    match = re.search(re.escape(lead) + r"([^)]*)\)", section)
    assert match, f"{lead!r} not found in docs/schemas.md, {HEADING!r}"
    return set(re.findall(r"`([a-z_]+)`", match.group(1)))


@pytest.fixture(scope="module")
def section() -> str:
    return explain_section(SCHEMAS.read_text(encoding="utf-8"))


def test_the_cause_list_is_every_cause(section: str) -> None:
    assert listed(section, "`cause` (String, one of:") == {c.value for c in Cause}


def test_the_suggestion_kind_list_is_every_kind(section: str) -> None:
    assert listed(section, "`kind` one of:") == {k.value for k in SuggestionKind}


def test_the_snippet_form_list_is_every_form(section: str) -> None:
    assert listed(section, "`form` one of") == {f.value for f in SnippetForm}


def test_every_impact_key_is_named(section: str) -> None:
    missing = [key for key in Impact.__annotations__ if f"`{key}`" not in section]
    assert missing == []


def test_the_check_sees_a_missing_member() -> None:
    text = SCHEMAS.read_text(encoding="utf-8").replace("`watermark_delay`, ", "", 1)
    assert Cause.WATERMARK_DELAY.value not in listed(
        explain_section(text), "`cause` (String, one of:"
    )
