"""Loading rules: the default pack, the schema file, and bad-rule fixtures with their messages."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from conftest import HERE, RULES_DIR

from diagnostics.kinds import Severity
from diagnostics.rules import AggregateFn, Comparison, RuleError, load_rules
from diagnostics.rules.model import display_path
from diagnostics.rules.schema import RULE_FILE_SCHEMA, schema_json
from diagnostics.rules.tables import TableName

BAD = sorted((HERE / "bad").glob("*.yaml"))


def expected_messages(path: Path) -> list[str]:
    """The ``# expect:`` lines of a bad-rule fixture, with ``{file}`` filled in."""
    lines = path.read_text(encoding="utf-8").splitlines()
    found = [m.group(1) for m in (re.match(r"^# expect: (.*)$", line) for line in lines) if m]
    return [text.replace("{file}", display_path(path)) for text in found]


def test_default_pack_loads_with_every_required_rule() -> None:
    rules = load_rules([RULES_DIR])
    by_id = {rule.id: rule for rule in rules}
    assert set(by_id) == {
        "late-event-spike",
        "early-events",
        "out-of-order-rate",
        "dropped-events",
        "partition-not-progressing",
        "watermark-delay",
        "quarantined-records",
    }
    assert by_id["dropped-events"].severity is Severity.CRITICAL
    assert by_id["dropped-events"].cause == "invalid_timestamps"
    watermark = by_id["watermark-delay"]
    assert watermark.for_ns == 15 * 60 * 10**9
    assert watermark.threshold == 5.0  # the late-arrival tolerance param, ASA's default
    assert dict(watermark.params) == {"late_arrival_tolerance_seconds": 5}
    assert by_id["out-of-order-rate"].aggregate.fn is AggregateFn.RATE
    assert by_id["partition-not-progressing"].op is Comparison.GE
    assert by_id["quarantined-records"].table is TableName.QUARANTINE
    assert by_id["quarantined-records"].window_ns is None


def test_dropped_kinds_list_param_is_bound_as_sql_literals() -> None:
    rules = {rule.id: rule for rule in load_rules([RULES_DIR])}
    assert rules["dropped-events"].where_sql == (
        "kind IN ('EarlyInputEvent', 'InvalidInputTimeStamp', 'InvalidInputTimeStampKey')"
    )
    # an empty list of partitioned jobs excludes no job
    assert rules["partition-not-progressing"].where_sql == "NOT (FALSE)"


def test_schema_file_is_the_schema_the_loader_uses() -> None:
    assert (RULES_DIR / "schema.json").read_text(encoding="utf-8") == schema_json()
    assert json.loads(schema_json()) == RULE_FILE_SCHEMA


@pytest.mark.parametrize("path", BAD, ids=[p.stem for p in BAD])
def test_bad_rule_fixture_fails_with_its_message(path: Path) -> None:
    expected = expected_messages(path)
    assert expected, f"{path.name} has no '# expect:' line"
    with pytest.raises(RuleError) as caught:
        load_rules([path])
    assert [str(p) for p in caught.value.problems] == expected


def test_error_message_names_first_problem_and_counts_the_rest() -> None:
    with pytest.raises(RuleError) as caught:
        load_rules([HERE / "bad" / "two_problems.yaml"])
    first = expected_messages(HERE / "bad" / "two_problems.yaml")[0]
    assert str(caught.value) == f"{first} (and 1 more problem; see 'orderdoc rules check')"
    with pytest.raises(RuleError) as caught:
        load_rules([HERE / "bad"])
    more = len(caught.value.problems) - 1
    assert more > 1
    assert str(caught.value).endswith(f" (and {more} more problems; see 'orderdoc rules check')")


def test_every_bad_fixture_is_reported_in_one_load() -> None:
    with pytest.raises(RuleError) as caught:
        load_rules([HERE / "bad"])
    reported = [str(p) for p in caught.value.problems]
    assert reported == [msg for path in BAD for msg in expected_messages(path)]


def test_duplicate_rule_id_across_files(tmp_path: Path) -> None:
    source = (RULES_DIR / "quarantine.yaml").read_text(encoding="utf-8")
    (tmp_path / "a.yaml").write_text(source, encoding="utf-8")
    (tmp_path / "b.yaml").write_text(source, encoding="utf-8")
    with pytest.raises(RuleError) as caught:
        load_rules([tmp_path])
    [problem] = caught.value.problems
    assert problem.rule_id == "quarantined-records"
    assert problem.field == "id"
    assert problem.file == display_path(tmp_path / "b.yaml")
    assert problem.message == (
        f"duplicate rule id, first defined at {display_path(tmp_path / 'a.yaml')}:4"
    )


def test_missing_path_and_empty_folder(tmp_path: Path) -> None:
    with pytest.raises(RuleError) as caught:
        load_rules([tmp_path / "nope.yaml", tmp_path])
    assert [(p.file, p.message) for p in caught.value.problems] == [
        (str(tmp_path / "nope.yaml"), "no such file or directory"),
        (str(tmp_path), "no rule files (*.yaml)"),
    ]


def test_rule_is_frozen() -> None:
    rule = next(iter(load_rules([RULES_DIR])))
    with pytest.raises(AttributeError):
        rule.threshold = 1.0  # type: ignore[misc]


def test_a_file_named_twice_is_loaded_once() -> None:
    rules = load_rules([RULES_DIR, RULES_DIR / "quarantine.yaml"])
    assert len(rules) == 7
    assert len(rules.files) == 7


def test_default_pack_causes_are_explain_causes() -> None:
    from diagnostics.explain.model import Cause

    causes = {rule.id: rule.cause for rule in load_rules([RULES_DIR])}
    assert causes.pop("quarantined-records") == "pipeline_health"  # the log pipeline, not a job
    assert {Cause(c) for c in causes.values()} == {
        Cause.LATE_ARRIVALS,
        Cause.EARLY_ARRIVALS,
        Cause.OUT_OF_ORDER,
        Cause.INVALID_TIMESTAMPS,
        Cause.IDLE_PARTITION,
        Cause.HOT_PARTITION,
    }


def test_a_file_that_is_not_text_names_the_byte(tmp_path: Path) -> None:
    path = tmp_path / "blob.yaml"
    path.write_bytes(b"rules:\n\x91\x00")
    with pytest.raises(RuleError) as caught:
        load_rules([path])
    (problem,) = caught.value.problems
    assert str(problem).endswith(
        "blob.yaml: cannot read the file: not UTF-8 text (byte 0x91 at offset 7)"
    )
