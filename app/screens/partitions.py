"""Partitions: idle episodes and watermark delay per partition, and the merge rule."""

from __future__ import annotations

import streamlit as st

from diagnostics.appdata import figures, scope
from diagnostics.appdata.partitions import MERGE_RULE, METRIC_COLUMNS, METRICS_NOTE
from screens import cache
from screens.common import chart, table


def render() -> None:
    st.title("Partitions")
    agg = cache.require()
    if agg is None:
        return
    key = cache.key(agg)
    st.info(MERGE_RULE)
    job = cache.scoped()  # the sidebar's job (None: the folder's one job, or all of them)
    if job is not None:
        st.caption(f"Job {job} (the sidebar's choice).")
    ctx = cache.capture(*key)
    if ctx is not None:
        late = ctx.settings.policy.late_arrival_ns
        tolerance = None if late is None else late / 1e9
    else:
        given = scope.job_tolerances(agg.path, job)
        tolerance = st.number_input(
            "Late-arrival tolerance (s)",
            0.0,
            1_814_399.0,
            given.late_s,
            key=f"part_tol_{job}",
            help=given.words,
        )
        st.caption(f"Late-arrival tolerance: {given.words}")
    episodes = cache.idle(*key, job)
    if episodes.height:
        chart(figures.idle_timeline(episodes), "idle_timeline")
        st.caption(
            "Idle episodes as ASA's InputPartitionNotProgressing notices report them: from the "
            "first notice of an episode to its last. With a capture, the Findings page measures "
            "the partition's silence on the events themselves (from its last event before the "
            "gap to its first after), which starts earlier and ends later."
            if ctx is not None
            else "Idle episodes as ASA's InputPartitionNotProgressing notices report them: from "
            "the first notice of an episode to its last."
        )
    else:
        st.success("No idle episodes: every partition kept sending.")
    delay = cache.delay(*key, job)
    if delay.height:
        chart(figures.watermark_delay(delay, tolerance), "watermark_delay")
    else:
        st.caption(
            "No watermark delay: no metrics were loaded (a capture, or the job's "
            "metrics uploaded with its logs, give them)."
        )
    per_partition = cache.partition_table(*key, job)
    if per_partition.height:
        table(per_partition)
        if not set(METRIC_COLUMNS) <= set(per_partition.columns):
            st.caption(METRICS_NOTE)
