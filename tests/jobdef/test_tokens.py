"""The ASA tokenizer: offsets, literals, comments, and one-line errors for unclosed text."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from diagnostics.errors import InputError
from diagnostics.jobdef.tokens import Kind, tokenize


def test_words_quotes_strings_and_comments():
    text = (
        "SELECT 'it''s FROM x' AS [a ]]b], \"q\"\"t\" -- FROM y TIMESTAMP BY z\n"
        "/* outer /* nested FROM */ still comment */ FROM [in put] TIMESTAMP BY body.ts"
    )
    tokens = tokenize(text)
    assert [(t.kind, t.value) for t in tokens] == [
        (Kind.WORD, "SELECT"),
        (Kind.STRING, "it's FROM x"),
        (Kind.WORD, "AS"),
        (Kind.QUOTED, "a ]b"),
        (Kind.PUNCT, ","),
        (Kind.QUOTED, 'q"t'),
        (Kind.WORD, "FROM"),
        (Kind.QUOTED, "in put"),
        (Kind.WORD, "TIMESTAMP"),
        (Kind.WORD, "BY"),
        (Kind.WORD, "body"),
        (Kind.PUNCT, "."),
        (Kind.WORD, "ts"),
    ]
    assert all(text[t.start : t.end] == t.text for t in tokens)


def test_numbers_and_case_insensitive_keywords():
    tokens = tokenize("partition by PartitionId into 16")
    assert tokens[0].is_word("PARTITION")
    assert tokens[1].is_word("BY")
    assert tokens[-1].kind is Kind.NUMBER
    assert tokens[-1].value == "16"


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("SELECT 'open", "line 1, column 8"),
        ("SELECT *\nFROM [in", "line 2, column 6"),
        ("SELECT 1 /* never /* closed */", "line 1, column 10"),
        ('SELECT "x', "line 1, column 8"),
    ],
)
def test_unclosed_text_is_an_error_naming_line_and_column(text, where):
    with pytest.raises(InputError, match=where):
        tokenize(text)


@given(st.text(alphabet="ab_ 1.'[]\"-/*\n(),;", max_size=60))
def test_tokens_are_ordered_slices_of_the_text_or_an_input_error(text):
    try:
        tokens = tokenize(text)
    except InputError:
        return
    end = 0
    for tok in tokens:
        assert tok.start >= end
        assert text[tok.start : tok.end] == tok.text
        end = tok.end
