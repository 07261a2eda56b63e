"""The note on a query that aggregates per key: how OVER and PARTITION BY affect its
windows, the keys named as a sentence names them."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from diagnostics.whatif.choices import aggregation_note
from diagnostics.words import listed

QUERY = (
    "SELECT device_id, site, AVG(value) INTO [out] FROM [in] TIMESTAMP BY t\n"
    "GROUP BY device_id, site, TumblingWindow(minute, 1)"
)


def _rec(over: str, partition_by: bool) -> Any:
    return SimpleNamespace(row={"over": over, "partition_by": partition_by})


def test_the_keys_are_listed_as_a_sentence_lists_them() -> None:
    assert listed([]) == ""
    assert listed(["a"]) == "a"
    assert listed(["a", "b"]) == "a and b"
    assert listed(["a", "b", "c"]) == "a, b and c"


def test_over_a_key_of_the_aggregation_and_partition_by() -> None:
    note = aggregation_note(QUERY, _rec("device_id", True))
    assert note is not None
    assert note.startswith("The query aggregates per device_id and site in windows. ")
    assert "With OVER device_id each device_id's windows close on its own events' times" in note
    assert "as long as each device_id sends to one partition." in note


def test_over_a_column_that_is_not_a_key_and_no_over() -> None:
    other = aggregation_note(QUERY, _rec("sensor", False))
    assert other is not None
    assert "OVER sensor orders events per sensor, which is not a key of the aggregation" in other
    assert "PARTITION BY" not in other
    none = aggregation_note(QUERY, _rec("", False))
    assert none is not None
    assert "Without OVER, every window waits for the slowest sender of its partition" in none


def test_a_query_without_windowed_aggregation_has_no_note() -> None:
    assert aggregation_note("SELECT * INTO [o] FROM [i]", _rec("device_id", True)) is None
    assert aggregation_note(None, _rec("device_id", True)) is None


def test_numbers_say_the_released_events_delay_and_count_those_never_released() -> None:
    from diagnostics.whatif.choices import numbers_words

    row = {"adjusted": 0, "dropped": 0, "delay_p95_s": 16.457, "never_released": 12}
    assert numbers_words(row) == (
        "0 adjusted, 0 dropped, p95 release delay 16.5 s (12 events never released)"
    )
    row = {**row, "never_released": 0}
    assert numbers_words(row) == "0 adjusted, 0 dropped, p95 release delay 16.5 s"
    assert numbers_words({**row, "delay_p95_s": None}).endswith("p95 release delay never released")
