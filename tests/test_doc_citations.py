"""Every citation of a document's section names a section that is there.

Code, docs and the texts users read cite our docs by section title: ``docs/semantics.md, "The
rules, as implemented"`` or ``(docs/schemas.md, "Input contract")``. A cited title must be a
heading of that document (a heading may carry a parenthetical after the title, as
``## Input contract (what ... read; ...)`` does) or the bold label that opens a paragraph
(``**Far-off times and minutes with data.**``). Citations may wrap across lines, comment
markers and Python's implicit string concatenation included.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
#: ``docs/NAME.md, "Title"``, ``docs/NAME.md ("Title")``, ``docs/NAME.md, section "Title"``.
CITATION = re.compile(r'docs/([\w-]+\.md)(?:,|\s*\()\s*(?:sections?\s+)?"([^"]+)"')
#: A string literal closed at a line's end and continued by the next line's (implicit
#: concatenation): the two become one text.
_CONCATENATED = re.compile(r"""["']\s*\n\s*f?["']""")
#: A line break, with the comment marker that continues a comment on the next line.
_BREAK = re.compile(r"\s*\n\s*(?:#:?\s*)?")
SOURCES = ("diagnostics", "app", "docs", "rules", "scripts", "bench", "tests")


def flatten(text: str) -> str:
    """The text on one line, so that a citation wrapped over lines reads as one."""
    return _BREAK.sub(" ", _CONCATENATED.sub("", text))


def citations(text: str) -> list[tuple[str, str]]:
    """(document name, cited title) for every citation in ``text``."""
    return [(m.group(1), m.group(2).strip()) for m in CITATION.finditer(flatten(text))]


def sections(markdown: str) -> tuple[set[str], set[str]]:
    """The document's headings (backticks removed) and its paragraphs' bold opening labels."""
    headings = {
        m.group(1).replace("`", "").strip() for m in re.finditer(r"^#+\s+(.*)$", markdown, re.M)
    }
    labels = {
        m.group(1).strip().rstrip(".:") for m in re.finditer(r"^\*\*([^*]+?)\*\*", markdown, re.M)
    }
    return headings, labels


def names_a_section(title: str, markdown: str) -> bool:
    headings, labels = sections(markdown)
    title = title.rstrip(".")
    return title in labels or any(h == title or h.startswith(f"{title} (") for h in headings)


@cache
def document(name: str) -> str | None:
    path = DOCS / name
    return path.read_text(encoding="utf-8") if path.is_file() else None


def repository_files() -> list[Path]:
    files = [ROOT / "README.md"]
    for folder in SOURCES:
        files += [p for p in (ROOT / folder).rglob("*") if p.suffix in {".py", ".md", ".yaml"}]
    return sorted(p for p in files if p.is_file() and p != Path(__file__))


def test_the_checker_reads_wrapped_citations_and_refuses_a_missing_section() -> None:
    markdown = "# T\n\n## Input contract (what replay reads)\n\n**Far-off times.** text\n"
    assert citations('rule (docs/semantics.md,\n#: "Per-event rules")') == [
        ("semantics.md", "Per-event rules")
    ]
    assert citations('docs/schemas.md ("Input\n    contract")') == [
        ("schemas.md", "Input contract")
    ]
    assert citations("text = ('docs/cti.md, \"The '\n    'model\"')") == [("cti.md", "The model")]
    assert names_a_section("Input contract", markdown)
    assert names_a_section("Far-off times", markdown)
    assert not names_a_section("Input", markdown)
    assert not names_a_section("Per-event rules", markdown)


def test_every_cited_section_exists() -> None:
    found, wrong = 0, []
    for path in repository_files():
        for name, title in citations(path.read_text(encoding="utf-8", errors="replace")):
            found += 1
            markdown = document(name)
            if markdown is None or not names_a_section(title, markdown):
                wrong.append(f"{path.relative_to(ROOT)}: docs/{name}, {title!r}")
    assert found > 50  # the pattern still finds the repository's citations
    assert wrong == []
