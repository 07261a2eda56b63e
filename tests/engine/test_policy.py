"""OrderingPolicy.partition_problem: ASA's OVER-needs-PARTITION-BY rule, used by the engine
and the what-if sweep alike."""

from __future__ import annotations

import pytest

from diagnostics.engine.engine import OrderingEngine
from diagnostics.engine.policy import OrderingPolicy
from diagnostics.errors import InputError

OVER = OrderingPolicy(timestamp_by="t", over=("device",))


def test_over_on_several_partitions_needs_partition_by() -> None:
    assert OVER.partition_problem(3) == (
        "TIMESTAMP BY ... OVER device on an input with 3 partitions needs PARTITION BY "
        "PartitionId, as ASA requires"
    )


@pytest.mark.parametrize(
    ("policy", "partitions"),
    [
        (OVER, 1),
        (OrderingPolicy(timestamp_by="t", over=("device",), partition_by=True), 3),
        (OrderingPolicy(timestamp_by="t"), 3),
    ],
)
def test_settings_asa_accepts_have_no_problem(policy: OrderingPolicy, partitions: int) -> None:
    assert policy.partition_problem(partitions) is None


def test_the_engine_refuses_what_the_rule_refuses() -> None:
    with pytest.raises(InputError) as caught:
        OrderingEngine(OVER, partitions=[0, 1])
    assert str(caught.value) == OVER.partition_problem(2)
