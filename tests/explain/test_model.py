"""The findings model: a typed, read-only impact that survives pickling (the app caches
reports) and keeps its keys, in order, in the JSON form."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import polars as pl
import pytest

from diagnostics.explain import Cause, Finding, explain, render
from diagnostics.kinds import Severity

from .conftest import PARTITIONS, POLICY

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs" / "scenarios"


def test_a_report_pickles_and_stays_read_only() -> None:
    events = pl.read_csv(SAMPLES / "cross_device_disorder" / "capture.csv")
    report = explain(None, events=events, policy=POLICY, partitions=PARTITIONS)
    copy = pickle.loads(pickle.dumps(report))
    assert copy == report
    assert render(copy, "json") == render(report, "json")
    with pytest.raises(TypeError):
        copy.findings[0].impact["events_affected"] = 0


def test_impact_keys_keep_the_order_each_cause_gives_them() -> None:
    events = pl.read_csv(SAMPLES / "cross_device_disorder" / "capture.csv")
    report = explain(None, events=events, policy=POLICY, partitions=PARTITIONS)
    doc = json.loads(render(report, "json"))
    disorder = next(f for f in doc["findings"] if f["cause"] == "out_of_order")
    assert list(disorder["impact"])[:3] == [
        "events_affected",
        "delay_seconds",
        "fix_adds_output_delay_seconds",
    ]


def test_a_finding_without_impact_affects_nothing() -> None:
    finding = Finding(Cause.HEALTHY, Severity.INFO, "t", "e")
    assert finding.to_dict()["impact"] == {"events_affected": 0, "delay_seconds": 0.0}
    assert finding.score == 0.0
