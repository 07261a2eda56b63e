"""Accounting through the real engine: generated capture → replay → records, any window."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from diagnostics.engine.policy import OrderingPolicy
from diagnostics.engine.replay import replay
from diagnostics.generate import GenerateConfig, Scenario, generate
from diagnostics.instrument import InstrumentOptions, instrument
from diagnostics.instrument.aggregate import KIND_FLAGS

SECOND = 1_000_000_000


@settings(max_examples=20, deadline=None)
@given(
    scenario=st.sampled_from(list(Scenario)),
    seed=st.integers(0, 10_000),
    window_s=st.integers(1, 900),
    late_s=st.sampled_from([0, 5, 60]),
    ooo_s=st.sampled_from([0, 2]),
)
def test_records_account_for_every_flagged_event(scenario, seed, window_s, late_s, ooo_s):
    config = GenerateConfig(events=400, partitions=3, duration_ms=25 * 60_000, seed=seed)
    policy = OrderingPolicy(
        timestamp_by="event_time", late_arrival_ns=late_s * SECOND, out_of_order_ns=ooo_s * SECOND
    )
    run = replay(generate(scenario, config), policy)
    options = InstrumentOptions(error_window_ns=window_s * SECOND)
    result = instrument(run.outcomes, options, policy_text=policy.describe())
    totals: dict[str, int] = {}
    for record in result.records:
        props = record["properties"]
        if props["Type"] == "DataError":
            totals[props["DataErrorType"]] = (
                totals.get(props["DataErrorType"], 0) + props["EventCount"]
            )
            assert props["FromTimestamp"] <= props["ToTimestamp"] == record["time"]
    for kind, flag in KIND_FLAGS:
        assert totals.get(kind.value, 0) == int(run.outcomes[flag].sum())
