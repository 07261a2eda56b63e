"""The app under Flink's or Spark's rules: the Load page's engine choice, and the Findings
and What-if pages speaking the engine's settings (data: diagnostics.appdata.engines)."""

from __future__ import annotations

import polars as pl
import pytest

from diagnostics.appdata.build import capture_context
from diagnostics.appdata.engines import EngineChoice, engine_view
from diagnostics.durations import MINUTE
from diagnostics.engines import FlinkRules, SparkRules, replay_rules
from diagnostics.engines.policy import Rules
from diagnostics.errors import UsageError

pytestmark = pytest.mark.timeout(600)


def test_the_choice_builds_the_engine_rules() -> None:
    flink = EngineChoice(Rules.FLINK, window_s=60, bound_s=2, idle_s=5).engine_rules("ts")
    assert flink == FlinkRules(
        "ts", MINUTE, out_of_orderness_ns=2_000_000_000, idleness_ns=5_000_000_000
    )
    spark = EngineChoice(Rules.SPARK, window_s=60, bound_s=3, trigger_s=0).engine_rules("ts")
    assert spark == SparkRules("ts", MINUTE, watermark_delay_ns=3_000_000_000, trigger_ns=0)
    with pytest.raises(UsageError, match="needs the event-time column"):
        EngineChoice(Rules.SPARK).engine_rules(None)


def test_the_view_of_a_loaded_capture_counts_what_the_replay_drops(agg_late) -> None:
    ctx = capture_context(agg_late)
    assert ctx is not None
    events = pl.read_parquet(ctx.events_path)
    choice = EngineChoice(Rules.SPARK, window_s=60)
    shown = engine_view(
        events, ctx.settings.policy.timestamp_by, ctx.settings.columns, ctx.partitions, choice
    )
    replayed = replay_rules(
        events, choice.engine_rules(ctx.settings.policy.timestamp_by),
        partitions=ctx.partitions, columns=ctx.settings.columns,
    ).outcomes  # fmt: skip
    assert shown.dropped == int(replayed["dropped"].sum()) > 0
    assert shown.findings[0].title.startswith(f"Spark drops {shown.dropped:,} of")
    assert shown.recommended.startswith("withWatermark delay ")
    assert shown.table["recommended"].sum() == 1


def test_findings_and_whatif_pages_speak_the_chosen_engine(open_app, agg_late) -> None:
    at = open_app("Load", agg_late)
    at.selectbox(key="engine_rules").set_value("flink").run()
    assert not at.exception, [e.value for e in at.exception]
    at.sidebar.radio(key="page").set_value("Findings").run()
    assert not at.exception, [e.value for e in at.exception]
    titles = [s.value for s in at.subheader]
    assert any("numLateRecordsDropped" in t for t in titles), titles
    assert "forBoundedOutOfOrderness(" in at.info[0].value
    at.sidebar.radio(key="page").set_value("What-if").run()
    assert not at.exception, [e.value for e in at.exception]
    assert "forBoundedOutOfOrderness(" in at.info[0].value
    at.sidebar.radio(key="page").set_value("Load").run()
    assert at.selectbox(key="engine_rules").value == "flink"
