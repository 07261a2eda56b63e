"""The Results page and its data: the late senders' per-minute counts as emitted beside on
time, the changed windows marked, the worst windows, the causes and the download."""

from __future__ import annotations

import io

import polars as pl
import streamlit as st

from diagnostics.appdata import impact
from diagnostics.appdata.build import capture_context
from tests.app.conftest import figures, metrics, traces


def test_the_starting_query_counts_events_per_device_and_minute(agg_late, late_outcomes):
    ctx = capture_context(agg_late)
    assert ctx is not None
    start = impact.starting_query(agg_late, ctx.settings.policy, "device_id")
    assert "GROUP BY device_id, TumblingWindow(minute, 1)" in start.text
    result = impact.compare(late_outcomes, start.text, start.input_name, ctx.settings.policy)
    summary = impact.summary(result)
    # the same counts as the scenario README states for the one-minute counts
    assert (summary["windows_compared"], summary["windows_changed"]) == (241, 60)
    frame = impact.series(result.table, "counts", "events", "device_id=dev-00005")
    fig = impact.figure(frame, "events")
    names = [t.name for t in fig.data]
    assert names == ["on time", "as emitted", "changed"]
    assert len(fig.data[2].x) == int(frame["changed"].sum()) == 30
    worst = impact.worst(result.table, 60)
    assert worst["Off by (%)"].to_list()[0] == 350.0
    # interior windows first; the capture's edges after them, said
    edges = worst["Edge"].to_list()
    assert edges[0] == "interior"
    assert edges.index("capture start") > max(i for i, e in enumerate(edges) if e == "interior")
    # the minutes the job never emitted are said so
    assert worst.filter(pl.col("Output") == "on time only")["As emitted"].unique().to_list() == [
        "not emitted"
    ]
    causes = impact.causes(summary)
    assert causes.rows() == [("late adjustments", 259, 100.0)]
    back = pl.read_parquet(io.BytesIO(impact.parquet_bytes(result.table)))
    assert back.equals(result.table)


def test_input_of_follows_the_query():
    query = "SELECT COUNT(*) INTO o FROM telemetry GROUP BY TumblingWindow(minute, 1)"
    assert impact.input_of(query, "input") == "telemetry"
    assert impact.input_of(query, "TELEMETRY") == "TELEMETRY"


def test_results_page_plots_emitted_against_on_time(open_app, agg_late):
    at = open_app("Results", agg_late)
    shown = metrics(at)
    assert shown["Windows compared"] == "241"
    assert shown["Windows changed"] == "60"
    assert "Largest relative error" not in shown
    assert shown["Interior windows off by > 5 %"] == "56"
    assert shown["Interior error, p95"] == "100.0%"
    captions = " ".join(c.value for c in at.caption)
    assert "periodic, every 2 min: 1 window in 2 is 90 % high" in captions
    assert "capture end: 8 windows (2 changed)" in captions
    (fig,) = figures(at)
    assert set(traces(fig)) == {"on time", "as emitted", "changed"}
    # the keys with the most changed windows come first: a batching device
    assert at.selectbox(key="results_keys").value in ("device_id=dev-00000", "device_id=dev-00005")
    assert len(at.dataframe) == 2
    at.text_area(key="results_query").set_value(
        "SELECT COUNT(*) AS n INTO o FROM input a JOIN b ON a.x = b.x "
        "GROUP BY TumblingWindow(minute, 1)"
    ).run()
    assert not at.exception
    assert "Not replayed: step `o`: JOIN is not replayed; events only" in at.warning[0].value


def test_results_page_without_a_capture_says_what_to_do(open_app, agg_asa):
    at = open_app("Results", agg_asa)
    assert "need an event capture" in at.info[0].value


def test_the_page_compares_once_per_query_not_once_per_widget_change(
    open_app, agg_late, monkeypatch
):
    calls = []
    real = impact.compare

    def counted(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(impact, "compare", counted)
    st.cache_resource.clear()  # another test of this process may have compared already
    at = open_app("Results", agg_late)
    assert [m.value for m in at.metric][:2] == ["241", "60"]
    keys = at.selectbox(key="results_keys")
    keys.select(keys.options[1]).run()
    assert not at.exception
    assert len(calls) == 1
