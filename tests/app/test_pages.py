"""Every page of the app under Streamlit's AppTest, with the bundled samples, asserting on
what is shown: numbers, finding titles, chart data.

Expected numbers come from the samples' documentation (sample_logs/*/README.md, checked by
the log and generator tests) or from the engine's committed outcomes, not from the code under
test.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from pathlib import Path

import polars as pl
import pytest

from diagnostics.appdata.build import capture_context
from diagnostics.appdata.lateness import device_column
from diagnostics.appdata.partitions import MERGE_RULE
from diagnostics.durations import SECOND
from diagnostics.engine.replay import replay
from diagnostics.explain.model import SnippetForm
from tests.app.conftest import RULES_BAD, RULES_GOOD, SCENARIOS, figures, metrics, traces

pytestmark = pytest.mark.timeout(600)


def test_without_data_every_page_says_what_to_do(open_app):
    at = open_app("Overview")
    assert "Nothing is loaded yet" in at.info[0].value
    at.sidebar.radio(key="page").set_value("Findings").run()
    assert not at.exception
    assert "Load page" in at.info[0].value


def test_load_starts_on_the_load_page_with_the_samples(open_app):
    at = open_app("Load")
    labels = at.selectbox(key="sample_choice").options
    assert labels[0] == "scenario: late_senders (event capture)"
    assert "ASA log shapes (sample_logs/asa)" in labels


def test_load_a_bundled_sample_then_overview_shows_it(open_app, app_env):
    at = open_app("Load")
    at.button(key="load_sample").click().run()
    assert not at.exception
    assert "Loaded sample scenario: late_senders" in at.success[0].value
    folder = at.session_state["agg_dir"]
    assert folder.startswith(str(app_env))
    at.sidebar.radio(key="page").set_value("Overview").run()
    shown = metrics(at)
    # sample_logs/scenarios/README.md, late_senders: LateInputEvent 513, OutOfOrderEvent 270
    assert shown["Late events"] == "513"
    assert shown["Out-of-order events"] == "270"
    # each event once (265 of the out-of-order ones are also late): the replay's adjusted +
    # dropped, not 513 + 270
    outcomes = pl.read_parquet(SCENARIOS / "late_senders" / "outcomes.parquet")
    errors = int((outcomes["status"] != "accepted").sum())
    assert errors < 513 + 270
    assert shown["Events with data errors"] == f"{errors:,}"


def all_jobs(at):
    """The sidebar's job scope set to the whole folder (sample_logs/asa holds several jobs)."""
    at.sidebar.selectbox(key="job_scope").set_value("All jobs").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_overview_numbers_and_chart_for_the_asa_logs(open_app, agg_asa):
    at = all_jobs(open_app("Overview", agg_asa))
    shown = metrics(at)
    # sample_logs/asa/README.md: 28 records, 5 quarantined; Late 82, Early 5, OutOfOrder 18,
    # InvalidInputTimeStamp 5, 8 idle notices (not events)
    assert shown["Quarantined records"] == "5"
    assert shown["Events with data errors"] == f"{82 + 5 + 18 + 5:,}"
    assert shown["Late events"] == "82"
    assert shown["Idle notices"] == "8"
    # the test rule pack: 5 quarantined records > 0 fires; late-event minutes have resolved
    assert shown["Alerts firing"] == "1"
    # metrics sample (orderdoc-replay/metrics.parquet): worst delay 15 s on job REPLAY
    assert shown["Worst watermark delay"] == "15.0 s"
    (fig,) = figures(at)
    bars = traces(fig)
    totals = {name: sum(t["y"]) for name, t in bars.items() if t["type"] == "bar"}
    assert totals == {
        "LateInputEvent": 82,
        "EarlyInputEvent": 5,
        "OutOfOrderEvent": 18,
        "InvalidInputTimeStamp": 5,
    }
    markers = bars["alerts"]
    # one marker per chart bucket and severity, labelled with its alert episodes:
    # 1 quarantine alert (firing) + 8 late-event episodes (resolved)
    counts = [int(text.split(" ")[0]) for text in markers["text"]]
    assert all(text.startswith(f"{n} {'alert' if n == 1 else 'alerts'}, ") for n, text in zip(counts, markers["text"], strict=True))  # fmt: skip
    assert sum(counts) == 9
    assert any("1 firing: Quarantined log records" in text for text in markers["text"])
    assert len(markers["x"]) == len(set(zip(markers["x"], markers["marker"]["color"], strict=True)))


def test_overview_of_a_capture_has_alert_markers_on_the_late_batches(open_app, agg_late):
    at = open_app("Overview", agg_late)
    (fig,) = figures(at)
    named = traces(fig)
    assert sum(named["LateInputEvent"]["y"]) == 513
    assert sum(named["OutOfOrderEvent"]["y"]) == 270
    # the late senders batch every 2 minutes: one alert episode per batch minute
    minutes = [datetime.fromisoformat(x).minute for x in named["alerts"]["x"]]
    assert minutes
    assert all(m % 2 == 1 for m in minutes)
    assert metrics(at)["Worst watermark delay"] == "10.0 s"  # README: max delay 10.0 s
    # ... in the job's first minute; the tile says so, with the later minutes beside it
    assert (
        "In the job's first minute (2024-01-01 00:00 UTC, its start); the 30 later minutes: "
        "median 5.0 s." in [c.value for c in at.caption]
    )


def test_findings_show_titles_evidence_and_fixes(open_app, agg_late):
    from diagnostics.explain import explain

    at = open_app("Findings", agg_late)
    ctx = capture_context(agg_late)
    events = pl.read_parquet(ctx.events_path)
    report = explain(
        agg_late, events=events, policy=ctx.settings.policy, columns=ctx.settings.columns
    )
    titles = [s.value for s in at.subheader]
    assert titles == [f"{i + 1}. {f.title}" for i, f in enumerate(report.findings)]
    # the scenario's cause: late senders that send in batches; 513 late events (README)
    assert report.findings[0].cause.value == "batching_senders"
    assert "513" in titles[0]
    assert "dev-00000" in titles[0]  # the devices are named
    shown = [m.value for m in at.metric if m.label == "Events affected"]
    assert shown[0] == "513"
    # which column names the senders, and why
    assert any(c.value.startswith("Sender column: device_id (") for c in at.caption)
    # the fix, as copyable code
    snippets = [c.value for c in at.code]
    setting = next(s for s in report.findings[0].suggestions if s.form is not SnippetForm.PROSE)
    assert setting.snippet in snippets
    # the evidence chart of the top finding: per-partition ECDF with the 5 s tolerance line
    evidence = traces(figures(at)[0])
    assert evidence["tolerance"]["x"] == [5.0, 5.0]
    ecdf_ends = [t["y"][-1] for name, t in evidence.items() if name.startswith("partition")]
    assert ecdf_ends
    assert all(end == pytest.approx(1.0) for end in ecdf_ends)


def test_lateness_page_counts_events_beyond_the_tolerance(open_app, agg_late, late_outcomes):
    at = open_app("Lateness", agg_late)
    assert metrics(at)["Configured late-arrival tolerance"] == "5 s"
    table = at.dataframe[0].value
    # every event later than the 5 s tolerance is a LateInputEvent in the engine's outcomes
    assert int(table["beyond_tolerance"].sum()) == int(late_outcomes["late"].sum()) == 513
    assert int(table["events"].sum()) == late_outcomes.height
    (fig,) = figures(at)
    assert traces(fig)["tolerance"]["x"] == [5.0, 5.0]
    # per device: the batching devices are every fifth one (README: dev-00000, -00005, ...)
    at.radio(key="late_by").set_value("device_id").run()
    by_device = at.dataframe[0].value
    late_devices = by_device.loc[by_device["beyond_tolerance"] > 0, "group"].tolist()
    assert late_devices
    assert all(int(name.split("-")[1]) % 5 == 0 for name in late_devices if name != "other")


def test_lateness_page_from_logs_uses_the_example_events(open_app, agg_asa):
    at = all_jobs(open_app("Lateness", agg_asa))
    at.multiselect(key="late_kinds").set_value(["LateInputEvent"]).run()
    table = at.dataframe[0].value
    # the documented activity-log example (292.704 s late, 24 events) is among the values
    assert table["max_s"].max() >= 292.704
    assert int(table["events"].sum()) <= 82


def test_partitions_page_shows_the_idle_partition(open_app, agg_idle):
    at = open_app("Partitions", agg_idle)
    assert at.info[0].value == MERGE_RULE
    idle, delay = figures(at)
    bars = traces(idle)["idle"]
    # README, idle_partition: partition 3 only, 3 idle notices
    assert set(bars["y"]) == {"partition 3"}  # one job: its (upper-case) name is not repeated
    assert sum(int(t.split(", ")[1].split()[0]) for t in bars["text"]) == 3
    lines = traces(delay)
    assert {"job", "partition 0", "partition 3", "tolerance"} <= set(lines)
    assert max(lines["job"]["y"]) == 10.0  # README: max watermark delay 10.0 s
    table = at.dataframe[0].value
    row = table[table["partition_id"] == 3].iloc[0]
    assert row["idle_episodes"] >= 1
    # README: input events per partition {"0": 478, "1": 494, "2": 504, "3": 524}
    assert table.set_index("partition_id")["input_events"].to_dict() == {
        0: 478,
        1: 494,
        2: 504,
        3: 524,
    }


def test_whatif_page_matches_the_engine_at_the_current_policy(open_app, agg_late, late_outcomes):
    at = open_app("What-if", agg_late)
    shown = metrics(at)
    adjusted = (late_outcomes["status"] == "adjusted").sum() / late_outcomes.height * 100
    assert shown["Adjusted"] == f"{adjusted:.1f} %"
    assert shown["Dropped"] == "0.0 %"
    (fig,) = figures(at)
    selected = traces(fig)["selected"]
    assert selected["y"] == [pytest.approx(adjusted)]
    # another setting: the page agrees with a full engine replay under that policy
    at.select_slider(key="wi_late").set_value(180).run()
    at.select_slider(key="wi_ooo").set_value(60).run()
    ctx = capture_context(agg_late)
    policy = replace(ctx.settings.policy, late_arrival_ns=180 * SECOND, out_of_order_ns=60 * SECOND)
    events = pl.read_parquet(ctx.events_path)
    result = replay(events, policy, partitions=ctx.partitions, columns=ctx.settings.columns)
    expected = (result.outcomes["status"] == "adjusted").sum() / events.height * 100
    assert metrics(at)["Adjusted"] == f"{expected:.1f} %"
    assert expected < adjusted


def test_whatif_sliders_reach_the_recommended_setting(open_app, agg_late, late_outcomes):
    """The sliders start on the job's own setting and the button puts them (and the toggles)
    on the recommended one, which the fixed grid alone may not hold; the metrics shown are
    then the recommendation's own numbers, as a full replay under it measures."""
    at = open_app("What-if", agg_late)
    ctx = capture_context(agg_late)
    policy = ctx.settings.policy
    assert at.select_slider(key="wi_late").value == policy.late_arrival_ns / SECOND
    assert at.select_slider(key="wi_ooo").value == policy.out_of_order_ns / SECOND
    at.button(key="wi_try_recommended").click().run()
    assert not at.exception
    recommended = next(m.value for m in at.markdown if m.value.startswith("**Recommended:**"))
    late = at.select_slider(key="wi_late").value
    ooo = at.select_slider(key="wi_ooo").value
    assert f"late {late:g} s" in recommended
    assert f"out-of-order {ooo:g} s" in recommended
    chosen = replace(
        policy,
        late_arrival_ns=round(late * SECOND),
        out_of_order_ns=round(ooo * SECOND),
        partition_by=at.toggle(key="wi_pby").value,
        over=(device_column(late_outcomes, policy.over),) if at.toggle(key="wi_over").value else (),
    )
    assert f"OVER {chosen.over[0]}" in recommended if chosen.over else "OVER" not in recommended
    events = pl.read_parquet(ctx.events_path)
    result = replay(events, chosen, partitions=ctx.partitions, columns=ctx.settings.columns)
    adjusted = (result.outcomes["status"] == "adjusted").sum() / events.height * 100
    assert metrics(at)["Adjusted"] == f"{adjusted:.1f} %"
    assert f"{(result.outcomes['status'] == 'adjusted').sum():,} adjusted" in recommended


def test_whatif_needs_a_capture(open_app, agg_asa):
    at = open_app("What-if", agg_asa)
    assert "needs an event capture" in at.info[0].value


def test_alerts_page_lists_alerts_and_rule_problems(open_app, agg_asa, monkeypatch):
    monkeypatch.setenv("ORDERDOC_RULES", f"{RULES_GOOD}:{RULES_BAD}")
    at = all_jobs(open_app("Alerts", agg_asa))
    shown = metrics(at)
    assert (shown["Firing"], shown["Pending"], shown["Resolved"]) == ("1", "0", "8")
    alerts = at.dataframe[0].value
    assert alerts.iloc[0]["state"] == "firing"
    assert alerts.iloc[0]["title"] == "Quarantined log records"
    problems = at.dataframe[1].value
    assert problems.iloc[0]["rule"] == "app-bad-severity"
    assert "'urgent' is not one of" in problems.iloc[0]["message"]
    assert any("'urgent' is not one of" in e.value for e in at.error)
    yaml_shown = [c.value.strip() for c in at.code]
    assert (RULES_BAD / "broken.yaml").read_text().strip() in yaml_shown
    at.text_area(key="rule_text").set_value("rules:\n  - id: x\n").run()
    at.button(key="validate_rule").click().run()
    assert any("field" in e.value or "required" in e.value for e in at.error)


def test_quarantine_page_lists_records_and_reasons(open_app, agg_asa):
    at = open_app("Quarantine", agg_asa)
    assert metrics(at)["Quarantined records"] == "5"
    table = at.dataframe[0].value
    # sample_logs/asa/README.md: mixed-malformed.json lines 3 to 7
    assert table["source_line"].tolist() == [3, 4, 5, 6, 7]
    assert all(name.endswith("mixed-malformed.json") for name in table["source_file"])
    (fig,) = figures(at)
    assert sum(traces(fig)["records"]["x"]) == 5


def test_whatif_toggles_over_and_partition_by(open_app, agg_late):
    at = open_app("What-if", agg_late)
    at.toggle(key="wi_over").set_value(True).run()
    assert not at.exception
    # OVER on a 4-partition input without PARTITION BY: ASA rejects it, the page says so
    assert any("Skipped (ASA rejects it)" in w.value for w in at.warning)
    assert "Adjusted" not in metrics(at)
    at.toggle(key="wi_pby").set_value(True).run()
    shown = metrics(at)
    assert not [w.value for w in at.warning]
    table = at.dataframe[0].value
    assert set(table["over"]) == {"device_id"}
    assert table["partition_by"].all()
    row = table[(table["late_arrival_s"] == 5.0) & (table["out_of_order_s"] == 0.0)].iloc[0]
    assert shown["Adjusted"] == f"{row['pct_adjusted']:.1f} %"


def test_a_failing_explainer_is_a_message_not_a_traceback(open_app, agg_asa, tmp_path, monkeypatch):
    import shutil

    from diagnostics.appdata import insight

    def broken(*_args, **_kwargs):
        msg = "boom"
        raise RuntimeError(msg)

    monkeypatch.setattr(insight, "explain", broken)
    fresh = tmp_path / "fresh"  # a folder no earlier test cached
    shutil.copytree(agg_asa, fresh)
    at = open_app("Findings", fresh)
    assert at.error[0].value == "The explainer failed on this folder (a bug; RuntimeError: boom)."
    at.sidebar.radio(key="page").set_value("Overview").run()
    assert not at.exception
    assert metrics(at)["Quarantined records"] == "5"
    assert any("RuntimeError: boom" in e.value for e in at.error)


def test_overview_shows_at_least_for_records_without_a_count(open_app, tmp_path):
    from diagnostics.appdata.build import build_from_logs
    from diagnostics.logs.inputs import expand_inputs

    real = Path(__file__).resolve().parents[2] / "sample_logs" / "asa-real"
    files = expand_inputs([str(real)])
    out = tmp_path / "agg"
    build_from_logs([Path(p) for p in files.logs], out, metrics=[Path(p) for p in files.metrics])
    shown = metrics(open_app("Overview", out))
    # sample_logs/asa-real/README.md: 203 events counted, 2 records that name no count
    assert shown["Events with data errors"] == "at least 205"
    assert shown["InputDeserializerError.InvalidData"] == "at least 8"
    assert shown["InputDeserializerError.TypeConversionError"] == "116"


def test_findings_name_their_job_and_show_at_least(open_app, tmp_path):
    from diagnostics.appdata.build import build_from_logs
    from diagnostics.logs.inputs import expand_inputs

    real = Path(__file__).resolve().parents[2] / "sample_logs" / "asa-real"
    files = expand_inputs([str(real)])
    out = tmp_path / "agg"
    build_from_logs([Path(p) for p in files.logs], out, metrics=[Path(p) for p in files.metrics])
    at = open_app("Findings", out)
    titles = [s.value for s in at.subheader]
    assert titles[0].startswith("1. Job myStreamingJob: at least 125 events of the input")
    shown = [m.value for m in at.metric if m.label == "Events affected"]
    assert shown[0] == "at least 125"


def test_whatif_star_is_the_one_recommendation_from_the_first_visit(open_app, agg_late):
    """On the first visit the toggles are the job's own (no OVER) while the recommendation
    uses OVER: the chart's one "recommended" star sits at the recommendation's measured numbers,
    and the grid's own best is named as such."""
    at = open_app("What-if", agg_late)
    assert not at.exception
    recommended = next(m.value for m in at.markdown if m.value.startswith("**Recommended:**"))
    assert "OVER" in recommended
    assert at.toggle(key="wi_over").value is False
    (fig,) = figures(at)
    lines = traces(fig)
    star = lines["recommended"]
    share = float(recommended.split("dropped, ")[1].split(" % of the events")[0])
    assert star["y"] == [pytest.approx(share, abs=0.005)]
    assert "best with these toggles" in lines
    assert [t["name"] for t in fig["data"]].count("recommended") == 1


def test_partitions_say_where_their_idle_minutes_come_from(open_app, agg_idle):
    """The timeline is ASA's notices (first to last); the Findings page's silence comes from
    the capture's events: the page says so, so that 15 and 18 minutes are not one number."""
    at = open_app("Partitions", agg_idle)
    assert not at.exception
    said = " ".join(c.value for c in at.caption)
    assert "as ASA's InputPartitionNotProgressing notices report them" in said
    assert "the Findings page measures the partition's silence on the events" in said
