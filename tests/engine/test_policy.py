"""OrderingPolicy: ASA's OVER-needs-PARTITION-BY rule (partition_problem, used by the engine
and the what-if sweep alike) and the tolerances' range."""

from __future__ import annotations

import pytest

from diagnostics.durations import SECOND
from diagnostics.engine.engine import OrderingEngine
from diagnostics.engine.policy import OrderingPolicy
from diagnostics.errors import InputError, PolicyError, Setting

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


#: ASA's largest finite tolerance: the ARM reference's range of both tolerance settings ends at
#: 1,814,399 s, which is 20 days 23:59:59 (docs/semantics.md, "Policy settings").
ASA_MAX_SECONDS = 1_814_399


@pytest.mark.parametrize("seconds", [0, 20 * 86_400, ASA_MAX_SECONDS])
def test_tolerances_up_to_asas_largest_are_accepted(seconds: int) -> None:
    policy = OrderingPolicy(
        timestamp_by="t", late_arrival_ns=seconds * SECOND, out_of_order_ns=seconds * SECOND
    )
    assert (policy.late_arrival_ns, policy.out_of_order_ns) == (seconds * SECOND,) * 2


@pytest.mark.parametrize(
    ("settings", "setting", "text"),
    [
        (
            {"late_arrival_ns": (ASA_MAX_SECONDS + 1) * SECOND},
            Setting.LATE_ARRIVAL,
            "late-arrival tolerance 21d is out of range: it must be 0s to 20d23h59m59s "
            "(1814399s), or unlimited",
        ),
        (
            {"out_of_order_ns": (ASA_MAX_SECONDS + 1) * SECOND},
            Setting.OUT_OF_ORDER,
            "out-of-order tolerance 21d is out of range: it must be 0s to 20d23h59m59s (1814399s)",
        ),
        (
            {"late_arrival_ns": -SECOND},
            Setting.LATE_ARRIVAL,
            "late-arrival tolerance -1s is out of range",
        ),
    ],
)
def test_tolerances_past_asas_range_name_the_range(
    settings: dict[str, int], setting: Setting, text: str
) -> None:
    with pytest.raises(PolicyError) as caught:
        OrderingPolicy(timestamp_by="t", **settings)  # type: ignore[arg-type]
    assert str(caught.value).startswith(text)
    assert caught.value.setting is setting


def test_declared_partitions_run_from_one_to_the_limit() -> None:
    from diagnostics.engine.replay import MAX_PARTITIONS, declared_partitions

    assert declared_partitions(1) == (0,)
    assert declared_partitions(MAX_PARTITIONS) == tuple(range(MAX_PARTITIONS))
    for count, text in (
        (0, "an input has at least one partition"),
        (MAX_PARTITIONS + 1, "at most"),
    ):
        with pytest.raises(InputError, match=text) as caught:
            declared_partitions(count)
        assert caught.value.setting is Setting.PARTITIONS
