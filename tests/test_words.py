"""Counts in words: the noun and the verb agree with the count."""

from __future__ import annotations

from diagnostics.words import noun, number, plural, verb


def test_one_is_singular_and_every_other_count_plural() -> None:
    assert [noun(n, "record") for n in (0, 1, 2)] == ["records", "record", "records"]
    assert noun(1.0, "time") == "time"
    assert noun(None, "file") == "files"
    assert noun(2, "query", "queries") == "queries"
    assert plural(1, "alert") == "1 alert"
    assert plural(12_345, "record") == "12,345 records"
    assert plural(3, "record", minimum=True) == "at least 3 records"
    assert verb(1, "was", "were") == "was"
    assert verb(0, "was", "were") == "were"


def test_numbers_are_grouped_and_short() -> None:
    assert number(1234) == "1,234"
    assert number(4.567) == "4.57"
    assert number(12_345.6) == "12,346"
    assert number(True) == "yes"
    assert number("n/a") == "n/a"
