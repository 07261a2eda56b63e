"""The Findings page on a loaded capture (issue 38, point 5): the explainer starts from the
load's own replay, the corrected job from the explainer's replays and measured settings, a
second visit recomputes nothing, and the What-if page's recommendation reuses the settings
the Findings page measured."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from diagnostics.appdata import jobfix
from diagnostics.appdata.build import capture_context
from diagnostics.engine.policy import OrderingPolicy

from .conftest import JOBS, scenario_folder

pytestmark = pytest.mark.timeout(600)


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> dict[str, Counter]:
    """Calls of the explainer, of the engine's replays (by policy), of the recommender's
    measured settings (by policy) and of the engine's runs on the prepared capture (by
    policy: each measured setting's, and each of a fix's measurements not replayed)."""
    from diagnostics.appdata import insight
    from diagnostics.engine import replay as engine_replay
    from diagnostics.explain import capture as explain_capture
    from diagnostics.whatif import evaluate, replays, results

    calls: dict[str, Counter] = {
        "explain": Counter(),
        "replay": Counter(),
        "measure": Counter(),
        "run": Counter(),
    }
    explain, replay, measure = insight.run_explainer, engine_replay.replay, evaluate.evaluate
    run = evaluate.run

    # an engine run is counted per policy and per part of the capture it ran on (a setting
    # with PARTITION BY runs partition by partition: once each)
    def counted_run(prepared, policy):  # type: ignore[no-untyped-def]
        calls["run"][(policy, prepared.partitions)] += 1
        return run(prepared, policy)

    def counted_explain(*args, **kwargs):  # type: ignore[no-untyped-def]
        calls["explain"][kwargs.get("job")] += 1
        return explain(*args, **kwargs)

    def counted_replay(events, policy, **kwargs):  # type: ignore[no-untyped-def]
        calls["replay"][(policy, "every partition")] += 1
        return replay(events, policy, **kwargs)

    def counted_measure(prepared, policy):  # type: ignore[no-untyped-def]
        calls["measure"][(policy, prepared.partitions)] += 1
        return measure(prepared, policy)

    monkeypatch.setattr(insight, "run_explainer", counted_explain)
    for module in (engine_replay, replays, results, explain_capture):
        monkeypatch.setattr(module, "replay", counted_replay)
    monkeypatch.setattr(evaluate, "evaluate", counted_measure)
    monkeypatch.setattr(evaluate, "run", counted_run)
    sweep = insight.sweep

    def sweep_apart(*args, **kwargs):  # type: ignore[no-untyped-def]
        """The What-if page's own sweep (its sliders' grid): counted apart."""
        kept = calls["measure"].copy()
        try:
            return sweep(*args, **kwargs)
        finally:
            calls["sweep"] += calls["measure"] - kept
            calls["measure"] = kept

    monkeypatch.setattr(insight, "sweep", sweep_apart)
    calls["sweep"] = Counter()
    return calls


def _loaded_with_job(tmp_path: Path, counted: dict[str, Counter]) -> Path:
    """The late_senders capture loaded (a folder of its own: the app's caches are the
    process's) with its job definition saved beside it; the load's calls not counted."""
    agg = scenario_folder(tmp_path, "late_senders")
    jobfix.save(agg, "late_senders.arm.json", (JOBS / "late_senders.arm.json").read_bytes())
    for calls in counted.values():
        calls.clear()
    return agg


def test_findings_start_from_the_loaded_replay_and_a_second_visit_recomputes_nothing(
    open_app, tmp_path, counted
):
    agg = _loaded_with_job(tmp_path, counted)
    ctx = capture_context(agg)
    assert ctx is not None
    at = open_app("Findings", agg)
    assert [h.value for h in at.header] == ["The corrected job"]
    assert at.info[0].value.startswith("**Recommended setting for this capture:**")
    # one explainer run for the findings and the corrected job together
    assert sum(counted["explain"].values()) == 1
    # the load's replay (the job as loaded) is not made again; no replay or setting twice
    loaded: OrderingPolicy = ctx.settings.policy
    assert not [k for k in counted["replay"] if k[0] == loaded]
    # a fix's measurement: a replay, or one engine run that is not a measured setting's
    engine = counted["replay"] + (counted["run"] - counted["measure"])
    assert not [k for k in engine if k[0] == loaded]
    assert engine, "the corrected job is measured on the capture"
    assert max(engine.values()) == 1
    assert max(counted["measure"].values()) == 1
    first = {name: sum(c.values()) for name, c in counted.items()}
    # away and back: nothing is worked out again
    at.sidebar.radio(key="page").set_value("Overview").run()
    at.sidebar.radio(key="page").set_value("Findings").run()
    assert not at.exception, [e.value for e in at.exception]
    assert [h.value for h in at.header] == ["The corrected job"]
    assert {name: sum(c.values()) for name, c in counted.items()} == first


def test_the_what_if_recommendation_reuses_the_settings_findings_measured(
    open_app, tmp_path, counted
):
    agg = _loaded_with_job(tmp_path, counted)
    at = open_app("Findings", agg)
    measured = sum(counted["measure"].values())
    assert measured > 0
    said = at.info[0].value.removeprefix("**Recommended setting for this capture:** ")
    setting = said.split(" (", 1)[0]
    at.sidebar.radio(key="page").set_value("What-if").run()
    assert not at.exception, [e.value for e in at.exception]
    # the recommendation's search is the one the Findings page ran: nothing measured again
    assert sum(counted["measure"].values()) == measured
    assert counted["sweep"], "the What-if page's own sweep (its sliders) is measured apart"
    # and it is the setting the Findings page recommends
    assert at.button(key="wi_try_recommended").label == f"Try the recommended setting ({setting})"
