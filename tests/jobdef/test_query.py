"""The query parser: TIMESTAMP BY / OVER / PARTITION BY per input, over tricky text."""

from __future__ import annotations

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
