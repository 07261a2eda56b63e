"""Query edits: the needed clauses inserted in the right place, every other byte untouched."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from diagnostics.engine.policy import OrderingPolicy
from diagnostics.errors import InputError
from diagnostics.jobdef.query import parse_query
from diagnostics.jobdef.rewrite import _check, identifier, rewrite_query

OVER_PB = OrderingPolicy(timestamp_by="ts", over=("device id",), partition_by=True)


def _without(new: str, old: str, inserted: list[str]) -> str:
    for piece in inserted:
        new = new.replace(piece, "", 1)
    return new


def test_over_and_partition_by_in_the_step_that_reads_the_input():
    query = (
        "WITH s AS (\n  SELECT * FROM input TIMESTAMP BY ts -- the reader\n),\n"
        "t AS (SELECT * FROM s)\nSELECT * INTO o FROM t\n"
    )
    new = rewrite_query(parse_query(query), "input", OVER_PB)
    assert (
        "FROM input TIMESTAMP BY ts OVER [device id] PARTITION BY PartitionId -- the reader" in new
    )
    assert _without(new, query, [" OVER [device id]", " PARTITION BY PartitionId"]) == query


def test_existing_over_is_replaced_and_partition_by_kept():
    query = "SELECT * FROM [input] TIMESTAMP BY ts OVER a PARTITION BY PartitionId INTO 4 WHERE x"
    new = rewrite_query(parse_query(query), "input", OVER_PB)
    assert new == (
        "SELECT * FROM [input] TIMESTAMP BY ts OVER [device id] PARTITION BY PartitionId INTO 4 WHERE x"
    )


def test_timestamp_by_added_after_the_alias_when_missing():
    query = "SELECT * FROM input i JOIN other o ON i.k = o.k"
    policy = OrderingPolicy(timestamp_by="event_time", partition_by=True)
    new = rewrite_query(parse_query(query), "input", policy)
    assert new == (
        "SELECT * FROM input i TIMESTAMP BY event_time PARTITION BY PartitionId "
        "JOIN other o ON i.k = o.k"
    )


def test_every_read_is_edited_and_nothing_else():
    query = (
        "SELECT 'FROM input' FROM input TIMESTAMP BY ts\nUNION SELECT * FROM input TIMESTAMP BY ts"
    )
    new = rewrite_query(
        parse_query(query), "input", OrderingPolicy(timestamp_by="ts", partition_by=True)
    )
    assert new.count("PARTITION BY PartitionId") == 2
    assert new.startswith(
        "SELECT 'FROM input' FROM input TIMESTAMP BY ts PARTITION BY PartitionId\n"
    )


@pytest.mark.parametrize(
    ("edited", "count"),
    [
        ("SELECT * FROM input TIMESTAMP BY ts", "1 time, not 2"),
        ("SELECT * FROM input TIMESTAMP BY ts UNION SELECT * FROM input TIMESTAMP BY ts "
         "UNION SELECT * FROM input TIMESTAMP BY ts", "3 times, not 2"),
    ],
)  # fmt: skip
def test_an_edit_that_changes_the_number_of_reads_is_refused_in_words(edited, count):
    query = "SELECT * FROM input TIMESTAMP BY ts UNION SELECT * FROM input TIMESTAMP BY ts"
    policy = OrderingPolicy(timestamp_by="ts")
    with pytest.raises(InputError) as caught:
        _check(parse_query(query), edited, "input", policy, unify=False)
    assert f"(it reads the input {count}); change the query by hand" in str(caught.value)


def test_unchanged_policy_gives_the_same_text():
    query = "SELECT * FROM input TIMESTAMP BY ts OVER d PARTITION BY PartitionId"
    policy = OrderingPolicy(timestamp_by="ts", over=("d",), partition_by=True)
    assert rewrite_query(parse_query(query), "input", policy) == query


def test_identifier_brackets_only_what_needs_it():
    assert identifier("event_time") == "event_time"
    assert identifier("body.event time") == "body.[event time]"
    assert identifier("a]b") == "[a]]b]"


@given(
    st.text(alphabet="abc \n", max_size=20),
    st.text(alphabet="abc \n", max_size=20),
)
def test_text_around_the_clause_is_byte_identical(before, after):
    query = f"SELECT {before!s}x FROM input TIMESTAMP BY ts\nSELECT y{after} FROM z"
    new = rewrite_query(parse_query(query), "input", OVER_PB)
    head, _, tail = query.partition("TIMESTAMP BY ts")
    assert new.startswith(head + "TIMESTAMP BY ts OVER [device id] PARTITION BY PartitionId")
    assert new.endswith(tail)


CASE = (
    "CASE WHEN event_time IS NULL OR x BETWEEN 1 AND 2 THEN arrival_time\n"
    "       ELSE event_time END"
)


def test_over_goes_after_a_whole_case_expression():
    query = f"SELECT * INTO o FROM [telemetry] TIMESTAMP BY {CASE}\nWHERE a = 1 AND b = 2"
    policy = OrderingPolicy(timestamp_by="event_time", over=("device_id",), partition_by=True)
    new = rewrite_query(parse_query(query), "telemetry", policy)
    assert new == (
        f"SELECT * INTO o FROM [telemetry] TIMESTAMP BY {CASE} OVER device_id "
        "PARTITION BY PartitionId\nWHERE a = 1 AND b = 2"
    )
    (ref,) = parse_query(new).reads("telemetry")
    assert (ref.timestamp_text, ref.over, ref.partition_by) == (
        CASE,
        ("device_id",),
        "PartitionId",
    )


def test_unify_reads_every_step_with_the_chosen_column():
    query = (
        "WITH a AS (SELECT * FROM input TIMESTAMP BY event_time),\n"
        "b AS (SELECT * FROM input TIMESTAMP BY arrival_time OVER device_id),\n"
        f"c AS (SELECT * FROM input TIMESTAMP BY {CASE}),\n"
        "d AS (SELECT * FROM input)\n"
        "SELECT * INTO o FROM a UNION SELECT * FROM b"
    )
    policy = OrderingPolicy(timestamp_by="event_time", over=("k",))
    new = rewrite_query(parse_query(query), "input", policy, unify=True)
    assert new == (
        "WITH a AS (SELECT * FROM input TIMESTAMP BY event_time OVER k),\n"
        "b AS (SELECT * FROM input TIMESTAMP BY event_time OVER k),\n"
        "c AS (SELECT * FROM input TIMESTAMP BY event_time OVER k),\n"
        "d AS (SELECT * FROM input TIMESTAMP BY event_time OVER k)\n"
        "SELECT * INTO o FROM a UNION SELECT * FROM b"
    )
    # without unify a TIMESTAMP BY is kept as written
    kept = rewrite_query(parse_query(query), "input", policy)
    assert "TIMESTAMP BY arrival_time OVER k" in kept
    assert f"TIMESTAMP BY {CASE} OVER k" in kept


def test_match_recognize_keeps_its_place():
    query = (
        "SELECT * INTO o FROM input TIMESTAMP BY ts MATCH_RECOGNIZE (LIMIT DURATION(minute, 1) "
        "PARTITION BY k MEASURES Last(A.v) AS v PATTERN (A) DEFINE A AS A.v > 1) AS T"
    )
    new = rewrite_query(parse_query(query), "input", OVER_PB)
    assert new == query.replace(
        "BY ts MATCH", "BY ts OVER [device id] PARTITION BY PartitionId MATCH"
    )
