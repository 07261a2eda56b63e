"""orderdoc's side of the comparison: a capture replayed with ``replay --rules flink|spark``
(in-process, as a user runs it) and the engine's result held against it."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from diagnostics.cli import main
from tests.engines.real.captures import Capture, EngineResult, write_orderdoc_capture
from tests.engines.real.flink_engine import FlinkSettings
from tests.engines.real.spark_engine import SparkSettings


def ms_flag(ms: int) -> str:
    return f"{ms}ms"


def orderdoc_dropped(capture: Capture, flags: list[str], workdir: Path) -> frozenset[str]:
    """The ids orderdoc's replay marks dropped, with the rule flags given."""
    workdir.mkdir(parents=True, exist_ok=True)
    path = write_orderdoc_capture(capture, workdir / f"{capture.name}.csv")
    out = workdir / "out"
    code = main(["replay", str(path), "--out", str(out), "--timestamp-by", "ts", *flags])
    assert code == 0
    outcomes = pl.read_parquet(out / "outcomes.parquet").sort("event_id")
    assert outcomes["id"].to_list() == [e.id for e in capture.events]
    return frozenset(outcomes.filter(pl.col("dropped"))["id"].to_list())


def flink_flags(s: FlinkSettings) -> list[str]:
    flags = ["--rules", "flink", "--window", ms_flag(s.window_ms)]
    flags += ["--out-of-orderness", ms_flag(s.out_of_orderness_ms)]
    flags += ["--allowed-lateness", ms_flag(s.allowed_lateness_ms)]
    flags += ["--watermark-interval", ms_flag(s.tick_ms)]
    if s.idleness_ms:
        flags += ["--idleness", ms_flag(s.idleness_ms)]
    return flags


def spark_flags(s: SparkSettings) -> list[str]:
    flags = ["--rules", "spark", "--window", ms_flag(s.window_ms)]
    return [
        *flags,
        "--watermark-delay",
        ms_flag(s.watermark_delay_ms),
        "--trigger",
        ms_flag(s.trigger_ms),
    ]


def assert_same(
    capture: Capture, engine: EngineResult, predicted: frozenset[str], window_ms: int
) -> None:
    """Event for event: the dropped ids, then every window's count (``window_ms`` windows)."""
    assert sorted(engine.dropped - predicted) == [], "the engine dropped, orderdoc kept"
    assert sorted(predicted - engine.dropped) == [], "orderdoc dropped, the engine kept"
    assert engine.counts == capture.window_counts(window_ms, predicted)
