"""The results a translated window step gives under Flink's or Spark's rules, predicted from
a replay under those rules (``replay --rules flink|spark``): each event is placed in the
step's windows the way those engines place it (from the window's start up to but not
including its end, on their millisecond or microsecond clock), and an event counts in a
window unless the watermark it met had already passed that window (Flink:
``window end − 1 ms + allowed lateness <= watermark``; Spark: ``window end <= watermark``),
so an event of a hopping window can count in its later windows and not in its first. The
step's WHERE, aggregates and HAVING are the ones ``impact`` evaluates
(:mod:`diagnostics.impact.aggregate`).
"""

from __future__ import annotations

import polars as pl

from diagnostics.durations import MS, US
from diagnostics.engines.job_plan import WindowStep
from diagnostics.engines.policy import EngineRules, FlinkRules
from diagnostics.impact.aggregate import APP, key_names, prepare, results
from diagnostics.impact.model import WindowKind
from diagnostics.impact.windows import END, ID, TIME, assign
from diagnostics.timestamps import from_ns


def predicted_results(outcomes: pl.DataFrame, step: WindowStep, rules: EngineRules) -> pl.DataFrame:
    """One row per group keys and window: the keys (as the step names them),
    ``window_start``, ``window_end`` (UTC) and each aggregate under its output name,
    sorted by window and keys."""
    s = step.step
    if s.window.kind not in (WindowKind.TUMBLING, WindowKind.HOPPING):
        msg = f"{s.window.describe()}: predicted for tumbling and hopping windows only"
        raise ValueError(msg)
    unit = MS if isinstance(rules, FlinkRules) else US
    frame = prepare(outcomes, s).filter(pl.col(APP).is_not_null())
    # The engines' windows hold [start, end); ASA's (start, end]: an event one nanosecond
    # after its time (truncated to the engine's unit) lands in the same window either way.
    frame = frame.with_columns(((pl.col(APP) // unit) * unit + 1).alias(TIME))
    pairs = assign(frame, s.window, key_names(s))
    marks = outcomes.select(
        pl.col("event_id").alias(ID), pl.col("watermark").dt.epoch("ns").alias("__wm")
    ).lazy()
    pairs = pairs.join(marks, on=ID, how="left")
    if isinstance(rules, FlinkRules):
        late = pl.col(END) - MS + rules.allowed_lateness_ns <= pl.col("__wm")
    else:
        late = pl.col(END) <= pl.col("__wm")
    kept = pairs.filter(pl.col("__wm").is_null() | ~late)
    found = results(kept, s).collect()
    names = dict(zip(key_names(s), s.key_labels(), strict=True))
    renamed = {f"__agg{i}": step.aggregate_name(a) for i, a in enumerate(s.aggregates)}
    size = s.window.size
    out = found.select(
        *(pl.col(k).alias(v) for k, v in names.items()),
        from_ns(found[END] - size).alias("window_start"),
        from_ns(found[END]).alias("window_end"),
        *(pl.col(k).alias(v) for k, v in renamed.items()),
    )
    return out.sort(["window_end", *names.values()])
