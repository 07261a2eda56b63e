"""The repository stands alone: no file of it points outside it.

A user who clones the repository has its files only. So no file (docs, docstrings, code
comments, command-line text, tests, samples) names a development machine's path or a document
kept outside the repository, and none cites sections by number of a document the user does not
have: the docs restate what they rely on (docs/semantics.md) and cite ASA's and StreamInsight's
public pages by title; code cites docs/semantics.md sections by title.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SECTION = "\u00a7"  # the section sign, spelled so that this file does not hold it
#: What points outside the repository, and why it is wrong.
OUTSIDE = {
    "a document kept outside the repository": re.compile(
        r"shared/(?:spec|reference)\b|ordering-semantics\.md|\.\./(?:spec|reference)/"
    ),
    "an absolute path of a development machine": re.compile(
        r"(?<![\w.~-])/(?:work|home|Users)/[\w.-]"
    ),
    "a section number of a document the user does not have": re.compile(
        rf"{SECTION}|\bspec (?:section|{SECTION})|\b(?:the spec|spec's)\b", re.IGNORECASE
    ),
}
#: Folders that are not the repository's content (tools' caches, build output).
SKIPPED = {".git", ".venv", "build", "dist", "out", "node_modules", "__pycache__"}


def repository_files() -> list[Path]:
    """The files of the checkout git knows of or would add; without git, every file outside
    hidden and build folders."""
    try:
        listed = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=ROOT,
            check=True,
            capture_output=True,
        ).stdout.decode()
        files = [ROOT / name for name in listed.split("\0") if name]
    except (OSError, subprocess.CalledProcessError):
        files = [
            p
            for p in ROOT.rglob("*")
            if not any(
                part in SKIPPED or part.startswith(".") for part in p.relative_to(ROOT).parts[:-1]
            )
        ]
    return sorted(p for p in files if p.is_file() and not p.is_symlink())


def text_of(path: Path) -> str | None:
    """A file's text, or ``None`` for a binary file (gzip, parquet, avro, images)."""
    data = path.read_bytes()
    if b"\0" in data[:8192]:
        return None
    return data.decode("utf-8", "replace")


def pointers_outside(text: str) -> list[tuple[int, str, str]]:
    """(line, why, what) of each reference to something outside the repository."""
    found = []
    for number, line in enumerate(text.splitlines(), start=1):
        for why, pattern in OUTSIDE.items():
            match = pattern.search(line)
            if match:
                found.append((number, why, match.group(0)))
    return found


def test_the_patterns_catch_what_the_issue_found() -> None:
    """The scanner sees the references that were in the docs (so an empty scan means
    something)."""
    seen = [
        "The contract is `../shared/spec/ordering-semantics.md` (spec).",
        "(`/work/shared/reference/004_ef1db73183fb073a.txt`, Italian)",
        f"Semantics: spec {SECTION}5",
        f'"""Golden tests: every worked example of spec {SECTION}6."""',
        "see /home/dev/notes.md",
        "a literal event-by-event reading of the spec.",
    ]
    assert [len(pointers_outside(line)) > 0 for line in seen] == [True] * len(seen)
    fine = [
        'docs/semantics.md, "Worked examples"',
        "/subscriptions/0000/resourceGroups/rg/providers/Microsoft.StreamAnalytics/streamingjobs/j",
        "flock /tmp/bench.lock .venv/bin/python bench/aggregate_floor.py",
        "spec = TABLES[table]",
    ]
    assert [pointers_outside(line) for line in fine] == [[]] * len(fine)


def test_no_file_of_the_repository_points_outside_it() -> None:
    files = repository_files()
    assert any(p.name == "semantics.md" for p in files)  # the scan sees the docs
    found = []
    for path in files:
        if path == Path(__file__).resolve():  # its examples above are meant to be caught
            continue
        text = text_of(path)
        if text is None:
            continue
        for line, why, what in pointers_outside(text):
            found.append(f"{path.relative_to(ROOT)}:{line}: {why}: {what!r}")
    assert found == []
