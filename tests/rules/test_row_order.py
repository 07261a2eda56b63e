"""Alerts do not depend on the order of the rows in the aggregate tables: the Spark job and the
polars reference write the same rows in different orders, and both must alert alike."""

from __future__ import annotations

import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

from aggtables import write_table
from conftest import RULES_DIR
from hypothesis import given, settings
from hypothesis import strategies as st

from diagnostics.rules import evaluate, load_rules
from diagnostics.rules.tables import TableName

T0 = datetime(2024, 3, 5, 10, 0, tzinfo=UTC)
KINDS = ("EarlyInputEvent", "InvalidInputTimeStamp", "LateInputEvent", "OutOfOrderEvent")

rollup_rows = st.lists(
    st.fixed_dictionaries(
        {
            "job": st.sampled_from(["ORDERS-JOB", "PAYMENTS-JOB", None]),
            "kind": st.sampled_from(KINDS),
            "partition_id": st.integers(0, 3),
            "minute": st.integers(0, 90).map(lambda m: T0 + timedelta(minutes=m)),
            "event_count": st.integers(1, 50),
            "records": st.just(1),
        }
    ),
    min_size=1,
    max_size=25,
).filter(lambda rows: any(row["kind"] == "EarlyInputEvent" for row in rows))


#: The default rule pack, loaded once: rules are frozen configuration, the same for every example.
RULES = load_rules([RULES_DIR])


def alerts_of(rows: list[dict[str, object]]) -> list[dict[str, object]]:
    with tempfile.TemporaryDirectory() as tmp:
        write_table(Path(tmp), TableName.ERROR_ROLLUP, rows)
        found = evaluate(RULES, tmp, now=T0 + timedelta(hours=2))
    return [alert.to_dict() for alert in found]


@settings(max_examples=20, deadline=None)
@given(rows=rollup_rows, seed=st.randoms(use_true_random=False))
def test_alerts_and_their_order_ignore_row_order(rows, seed) -> None:  # type: ignore[no-untyped-def]
    shuffled = list(rows)
    seed.shuffle(shuffled)
    want = alerts_of(rows)
    assert want  # an early event always fires the dropped-events rule
    assert alerts_of(shuffled) == want
