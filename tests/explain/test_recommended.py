"""With a capture, the one recommendation as explain carries it: what it says beside the
setting when the fix does not write it into the live job."""

from __future__ import annotations

import threading
from pathlib import Path

import polars as pl
import pytest

import diagnostics.explain as explain_module
from diagnostics.durations import SECOND
from diagnostics.engine.policy import OrderingPolicy
from diagnostics.errors import InputError, UsageError
from diagnostics.explain import Cause, explain
from diagnostics.explain import recommended as recommended_module
from diagnostics.explain.recommended import BACKFILL_ONLY


def test_an_unlimited_recommendation_for_old_data_says_it_is_for_a_backfill_job() -> None:
    """Historical replay with a capture: the recommendation keeps every event with an
    unlimited late tolerance, which the fix does not write into the live job: it says so."""
    capture = Path(__file__).resolve().parents[2] / "sample_logs" / "scenarios"
    events = pl.read_csv(capture / "historical_replay" / "capture.csv")
    policy = OrderingPolicy(timestamp_by="event_time", late_arrival_ns=5 * SECOND)
    report = explain(None, events=events, policy=policy, partitions=[0, 1, 2, 3])
    assert report.recommended is not None
    assert report.recommended.late_seconds is None
    assert any(f.cause is Cause.HISTORICAL_REPLAY for f in report.findings)
    assert BACKFILL_ONLY in report.recommended.notes


def _late_senders() -> tuple[pl.DataFrame, OrderingPolicy]:
    capture = Path(__file__).resolve().parents[2] / "sample_logs" / "scenarios"
    events = pl.read_csv(capture / "late_senders" / "capture.csv")
    return events, OrderingPolicy(timestamp_by="event_time", late_arrival_ns=5 * SECOND)


def test_the_evidence_is_worked_out_beside_the_search_and_changes_nothing(monkeypatch) -> None:
    """The capture's evidence runs in a thread of its own while the recommender searches
    (in the caller's thread); the report is the one made one after the other."""
    events, policy = _late_senders()
    threads: dict[str, str] = {}
    evidence, search = explain_module.from_capture, recommended_module.search

    def watched_evidence(*args, **kwargs):
        threads["evidence"] = threading.current_thread().name
        return evidence(*args, **kwargs)

    def watched_search(*args, **kwargs):
        threads["search"] = threading.current_thread().name
        return search(*args, **kwargs)

    monkeypatch.setattr(explain_module, "from_capture", watched_evidence)
    monkeypatch.setattr(recommended_module, "search", watched_search)
    report = explain(None, events=events, policy=policy, partitions=[0, 1, 2, 3])
    assert threads["search"] == threading.current_thread().name
    assert threads["evidence"].startswith("orderdoc-evidence")
    monkeypatch.undo()
    findings = explain_module.diagnose(
        explain_module.from_capture(events, policy, partitions=[0, 1, 2, 3])
    )
    rec = recommended_module.search(events, policy, columns=None, partitions=[0, 1, 2, 3])
    alone, said = recommended_module.with_recommendation(
        findings, events, policy, rec, columns=None, partitions=[0, 1, 2, 3]
    )
    assert report.findings == alone
    assert report.recommended == said


def test_an_error_of_the_evidence_is_said_before_one_of_the_search(monkeypatch) -> None:
    """Both failing: the evidence's error is the one raised, as when the search followed."""
    events, policy = _late_senders()

    def evidence_fails(*args, **kwargs):
        raise InputError("the evidence's own error")

    def search_fails(*args, **kwargs):
        raise UsageError("the search's error")

    monkeypatch.setattr(explain_module, "from_capture", evidence_fails)
    monkeypatch.setattr(recommended_module, "search", search_fails)
    with pytest.raises(InputError, match="the evidence's own error"):
        explain(None, events=events, policy=policy)
    monkeypatch.setattr(explain_module, "from_capture", lambda *a, **k: None)
    with pytest.raises(UsageError, match="the search's error"):
        explain(None, events=events, policy=policy)


def test_an_interrupt_of_the_search_stays_an_interrupt(monkeypatch) -> None:
    """Ctrl-C during the search: the interrupt is raised, not an error of the evidence."""
    events, policy = _late_senders()

    def evidence_fails(*args, **kwargs):
        raise InputError("the evidence's own error")

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(explain_module, "from_capture", evidence_fails)
    monkeypatch.setattr(recommended_module, "search", interrupted)
    with pytest.raises(KeyboardInterrupt):
        explain(None, events=events, policy=policy)
