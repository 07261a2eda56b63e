"""The query parser: TIMESTAMP BY / OVER / PARTITION BY per input, over tricky text."""

from __future__ import annotations

import pytest

from diagnostics.jobdef.query import parse_query

MULTI = """-- FROM telemetry TIMESTAMP BY not_this
WITH Clean AS (
    SELECT device, 'FROM telemetry TIMESTAMP BY nor_this' AS s /* JOIN telemetry */
    FROM [telemetry] AS t TIMESTAMP BY body.[event time] OVER device, [site id]
        PARTITION BY PartitionId INTO 4
), Ref AS (SELECT * FROM devices)
SELECT * INTO out1 FROM Clean c JOIN Ref r ON c.device = r.device
UNION
SELECT * FROM "telemetry" TIMESTAMP BY body.[event time] OVER device, [site id]
"""


def test_every_read_with_its_clauses():
    parsed = parse_query(MULTI)
    assert parsed.steps == ("Clean", "Ref")
    reads = parsed.reads("TELEMETRY")  # case-insensitive, like ASA
    assert len(reads) == 2
    first, second = reads
    assert first.step == "Clean"
    assert second.step is None
    assert first.timestamp_by == "body.event time"
    assert first.timestamp_text == "body.[event time]"
    assert first.over == ("device", "site id")
    assert first.partition_by == "PartitionId"
    assert first.partition_into == 4
    assert MULTI[first.clause_end - 1] == "4"
    assert second.partition_by is None
    assert [r.name for r in parsed.sources] == ["telemetry", "devices", "Clean", "Ref", "telemetry"]


def test_plain_quoted_and_aliased_sources():
    for text, column in [
        ("SELECT * FROM input TIMESTAMP BY ts", "ts"),
        ("SELECT * FROM input i TIMESTAMP BY [ts]", "ts"),
        ('SELECT * FROM input AS i TIMESTAMP BY "my ts"', "my ts"),
        ("SELECT * FROM input TIMESTAMP BY payload.header.ts WHERE x > 1", "payload.header.ts"),
    ]:
        (ref,) = parse_query(text).reads("input")
        assert ref.timestamp_by == column, text
        assert ref.timestamp_is_column


def test_partition_by_before_timestamp_by_and_no_timestamp():
    (ref,) = parse_query("SELECT * FROM input PARTITION BY PartitionId TIMESTAMP BY ts").sources
    assert ref.partition_by == "PartitionId"
    assert ref.timestamp_by == "ts"
    (bare,) = parse_query("SELECT * INTO o FROM input GROUP BY TumblingWindow(second, 5)").sources
    assert bare.timestamp_text is None
    assert bare.alias_end == bare.clause_end


def test_expressions_are_recognised_as_not_columns():
    for expr in [
        "CAST(ts AS datetime)",
        "DATEADD(second, -5, ts)",
        "CASE WHEN a IS NULL THEN b ELSE a END",
        "ts + 1",
    ]:
        (ref,) = parse_query(f"SELECT * FROM input TIMESTAMP BY {expr} OVER k").sources
        assert not ref.timestamp_is_column, expr
        assert ref.timestamp_text == expr
        assert ref.over == ("k",)


def test_window_functions_and_subqueries_are_not_sources():
    text = (
        "SELECT LAG(v) OVER (PARTITION BY device LIMIT DURATION(minute, 1)) AS prev "
        "FROM input TIMESTAMP BY ts WHERE x IN (SELECT y FROM other)"
    )
    parsed = parse_query(text)
    (ref,) = parsed.reads("input")
    assert ref.over == ()
    assert ref.partition_by is None
    assert [r.name for r in parsed.sources] == ["input", "other"]


CASE = (
    "CASE WHEN event_time IS NULL OR DATEDIFF(second, event_time, arrival_time) "
    "BETWEEN 0 AND 60 THEN arrival_time\n"
    "     WHEN x = 1 AND (y = 2 OR z BETWEEN 1 AND 3) THEN CASE WHEN a THEN b END\n"
    "     ELSE event_time END"
)


def test_case_and_parentheses_are_one_expression_whatever_they_hold():
    # AND, OR and BETWEEN ... AND inside CASE ... END (nested, and inside parentheses)
    # belong to the expression; OVER and PARTITION BY after END are still read
    text = (
        f"SELECT * INTO o FROM [telemetry] TIMESTAMP BY {CASE} OVER device_id "
        "PARTITION BY PartitionId WHERE value > 1 AND x = 1"
    )
    (ref,) = parse_query(text).reads("telemetry")
    assert ref.timestamp_text == CASE
    assert not ref.timestamp_is_column
    assert text[ref.timestamp_start : ref.timestamp_end] == CASE
    assert ref.over == ("device_id",)
    assert ref.partition_by == "PartitionId"
    for expr in [
        "CAST(CASE WHEN a OR b THEN c END AS datetime)",
        "(CASE WHEN a BETWEEN 1 AND 2 THEN c ELSE d END)",
        "DATEADD(second, CASE WHEN a AND b THEN 1 ELSE 0 END, ts)",
    ]:
        (ref,) = parse_query(f"SELECT * FROM input TIMESTAMP BY {expr} OVER k WHERE a").sources
        assert (ref.timestamp_text, ref.over) == (expr, ("k",)), expr


#: What ASA lets follow ``FROM input TIMESTAMP BY ts [OVER k]``, with a continuation each.
FOLLOWERS = [
    "PARTITION BY PartitionId",
    "WHERE a = 1 AND b = 2",
    "GROUP BY TumblingWindow(minute, 1)",
    "HAVING COUNT(*) > 1",
    "JOIN other o ON i.k = o.k AND DATEDIFF(second, i, o) BETWEEN 0 AND 5",
    "INNER JOIN other o ON i.k = o.k",
    "LEFT OUTER JOIN other o ON i.k = o.k",
    "CROSS APPLY GetArrayElements(i.items) AS e",
    "UNION SELECT * FROM other",
    "INTO out2",
    "MATCH_RECOGNIZE (LIMIT DURATION(minute, 1) PARTITION BY k MEASURES Last(A.v) AS v "
    "PATTERN (A B+) DEFINE A AS A.v > 1, B AS B.v < 1) AS T",
    "LIMIT DURATION(minute, 1)",
    "WITH s AS (SELECT 1)",
    "ORDER BY a",
    "AS T",
]


@pytest.mark.parametrize("over", ["", " OVER k"], ids=["no-over", "over"])
@pytest.mark.parametrize("follower", FOLLOWERS, ids=lambda f: f.split()[0])
def test_clause_words_end_timestamp_by_and_over(follower, over):
    text = f"SELECT * FROM input i TIMESTAMP BY ts{over} {follower}"
    ref = parse_query(text).reads("input")[0]
    assert ref.timestamp_by == "ts"
    assert ref.timestamp_is_column
    assert ref.over == (("k",) if over else ())


def test_match_recognize_after_timestamp_by_over():
    text = (
        "SELECT * INTO o FROM [telemetry] TIMESTAMP BY event_time OVER device_id\n"
        "MATCH_RECOGNIZE (\n"
        "    LIMIT DURATION(minute, 5) PARTITION BY device_id\n"
        "    MEASURES Last(High.value) AS peak AFTER MATCH SKIP TO NEXT ROW\n"
        "    PATTERN (Low High+) DEFINE Low AS Low.value < 10, High AS High.value > 50\n"
        ") AS T"
    )
    (ref,) = parse_query(text).sources
    assert (ref.name, ref.timestamp_by, ref.over) == ("telemetry", "event_time", ("device_id",))
    assert ref.partition_by is None  # the PARTITION BY inside MATCH_RECOGNIZE is not the input's
    assert text[: ref.clause_end].endswith("OVER device_id")
