"""Settings weighed by the job's results: the rule with ``optimise=results`` picks the
setting that changes the fewest windows, where the events rule picks the least delay."""

from __future__ import annotations

import polars as pl
import pytest

from diagnostics.whatif.rule import Optimise, Rule, measures


def table(rows: list[dict]) -> pl.DataFrame:
    base = {
        "late_arrival_s": 5.0, "out_of_order_s": 0.0, "partition_by": False, "over": "",
        "pct_adjusted": 0.0, "pct_dropped": 0.0, "delay_p95_s": 5.0, "never_released": 0,
        "windows_changed": 0, "windows_off": 0, "p95_relative_error": 0.0,
    }  # fmt: skip
    return pl.DataFrame([{**base, **row} for row in rows])


def test_results_pick_the_fewest_changed_windows_where_events_pick_the_least_delay():
    frame = table(
        [
            # within the 1% budget and fast, but 3 windows wrong
            {
                "pct_adjusted": 0.5,
                "delay_p95_s": 5.0,
                "windows_changed": 3,
                "p95_relative_error": 0.4,
            },
            # no window wrong, 2 minutes of delay
            {"late_arrival_s": 121.0, "delay_p95_s": 120.0},
            # one window slightly wrong
            {
                "late_arrival_s": 60.0,
                "delay_p95_s": 60.0,
                "windows_changed": 1,
                "p95_relative_error": 0.01,
            },
        ]
    )
    assert Rule().choose(frame) == 0
    assert Rule(optimise=Optimise.RESULTS).choose(frame) == 1
    assert measures(frame, Rule(optimise=Optimise.RESULTS)).tolist() == [3.0, 0.0, 1.0]


def test_results_ties_go_to_the_smaller_error_then_the_least_delay():
    frame = table(
        [
            {"windows_changed": 2, "p95_relative_error": 0.5, "delay_p95_s": 1.0},
            {"windows_changed": 2, "p95_relative_error": 0.1, "delay_p95_s": 9.0},
            {"windows_changed": 2, "p95_relative_error": 0.1, "delay_p95_s": 3.0},
        ]
    )
    assert Rule(optimise=Optimise.RESULTS).choose(frame) == 2


def test_the_job_as_it_is_and_the_simpler_clause_are_kept_when_no_worse():
    frame = table(
        [
            {"windows_changed": 0, "delay_p95_s": 5.5},  # the job as it is
            {"windows_changed": 0, "delay_p95_s": 5.0, "over": "device_id", "partition_by": True},
        ]
    )
    rule = Rule(optimise=Optimise.RESULTS)
    assert rule.choose(frame, keep=0) == 0
    # without the job among them, the setting without OVER and PARTITION BY is as good
    assert rule.choose(frame) == 0
    worse = table(
        [{"windows_changed": 1}, {"windows_changed": 0, "over": "device_id", "partition_by": True}]
    )
    assert rule.choose(worse, keep=0) == 1


def test_the_results_rule_says_itself_and_needs_the_measures():
    assert "fewest windows" in Rule(optimise=Optimise.RESULTS).text
    with pytest.raises(ValueError, match="measured without a query"):
        Rule(optimise=Optimise.RESULTS).choose(table([{}]).drop("windows_changed"))
