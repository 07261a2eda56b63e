"""The incremental ordering engine: ASA's per-event rules and release (docs/semantics.md, "The rules, as implemented" and "Watermarks, merge and output release").

:class:`OrderingEngine` takes events in batches, as a live consumer receives them, and keeps
its state between batches. Invariants (guarded by property tests):

* batches arrive in processing order: a batch's earliest arrival is not before the previous
  batch's latest (within a batch, events are processed in arrival order, ties in input order);
* splitting the input into batches never changes any outcome or release time;
* every event fed appears exactly once in the outcomes; ``dropped`` holds exactly when
  ``system_timestamp`` is null; watermarks never decrease on a timeline;
* dropped events never move a watermark, and nothing is silently lost: dropped events are
  outcomes like any other.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial

import numpy as np
import polars as pl

from diagnostics.engine.batches import BatchResult, StagedBatch, releases_frame
from diagnostics.engine.columns import EventColumns
from diagnostics.engine.inputs import BatchReader
from diagnostics.engine.outcomes import empty_outcomes, outcome_frame
from diagnostics.engine.policy import UNSTARTED_ESTIMATE_NS, Action, OrderingPolicy
from diagnostics.engine.release import (
    NEG,
    POS,
    Breakpoints,
    MergeSteps,
    batch_merge_steps,
    first_reach,
    first_tau,
    merge_release,
    merge_steps,
    running_max_by_partition,
)
from diagnostics.engine.timelines import Timelines
from diagnostics.errors import EngineStateError, InputError, Setting
from diagnostics.timestamps import iso

#: Up to this many timelines, OVER substreams' running maxima are worked out one timeline
#: after another (numpy); beyond, in one grouped pass (polars): the same values.
FEW_TIMELINES = 2_048


class OrderingEngine:
    """Stateful replay of one ASA input under one :class:`OrderingPolicy`.

    ``partitions`` is the input's fixed partition set, known from the start (declared ones,
    including partitions that never send data). Feed batches with :meth:`process`, then call
    :meth:`close` once: processing time then runs on to +∞ and the remaining releases resolve.
    """

    def __init__(
        self,
        policy: OrderingPolicy,
        partitions: Sequence[int],
        columns: EventColumns | None = None,
    ) -> None:
        self.policy = policy
        self.columns = columns or EventColumns()
        self.partitions = tuple(sorted({int(p) for p in partitions}))
        if not self.partitions:
            msg = "the partition set is empty; declare at least one partition"
            raise InputError(msg)
        problem = policy.partition_problem(len(self.partitions))
        if problem is not None:
            raise InputError(problem, Setting.PARTITION_BY)
        self._late = policy.effective_late_ns
        self._ooo = policy.effective_ooo_ns
        self._early = policy.early_window_ns
        self._own_timeline = policy.partition_by or bool(policy.over)
        self._inputs = BatchReader(policy, self.columns, self.partitions)
        self._tl = Timelines()
        if not policy.over:
            self._tl.open(list(range(len(self.partitions))))
        self._tau: int | None = None
        self._next_id = 0
        self._pending = {k: np.empty(0, dtype=np.int64) for k in ("id", "t", "arr", "tl")}
        self._closed = False
        self._staged = 0
        self._committed = 0

    # -- state ---------------------------------------------------------------------------
    @property
    def processing_time(self) -> int | None:
        """τ in ns: the largest arrival seen so far (``None`` before the first event)."""
        return self._tau

    @property
    def pending_count(self) -> int:
        """Accepted events whose release time is not known yet."""
        return len(self._pending["id"])

    # -- input normalisation -------------------------------------------------------------
    def _normalise(self, batch: pl.DataFrame) -> pl.DataFrame:
        """Typed working columns ``__arr``, ``__app`` (ns or null), ``__pidx``, ``__tl``."""
        work = self._inputs.read(batch, self._next_id)
        over_ids = self._tl.ids(batch, self.policy.over, work["__pidx"], work["__arr"])
        return work.with_columns(over_ids)

    def _row_of(self, batch: pl.DataFrame, i: int) -> str:
        return self._inputs.row_of(batch, i, self._next_id)

    # -- processing ----------------------------------------------------------------------
    def process(self, batch: pl.DataFrame) -> BatchResult:
        """Classify one batch and resolve the releases its arrivals make known.

        The same as :meth:`stage` followed by :meth:`commit`.
        """
        staged = self.stage(batch)
        return BatchResult(batch, staged.outcomes, self.commit(staged))

    def stage(self, batch: pl.DataFrame) -> StagedBatch:
        """First half of :meth:`process`: classify the batch and advance the state.

        Staged batches must be committed in the order they were staged; the next batch may be
        staged while the previous one is being committed (in another thread).
        """
        if self._closed:
            msg = "the engine is closed; create a new one for another replay"
            raise EngineStateError(msg)
        seq = self._staged
        self._staged += 1
        empty = np.empty(0, np.int64)
        if batch.height == 0:
            return StagedBatch(seq, empty_outcomes, empty, empty, empty, empty,
                               self._tl.m.copy(), self._tl.first_arrival.copy(),
                               self._tau if self._tau is not None else NEG,
                               Breakpoints.empty(), None)  # fmt: skip
        work = self._normalise(batch)
        arr_in = work["__arr"].to_numpy()
        order = np.argsort(arr_in, kind="stable")
        arr = arr_in[order]
        if self._tau is not None and arr[0] < self._tau:
            first = int(order[0])
            msg = (
                f"{self._row_of(batch, first)} arrives at {iso(int(arr[0]))}, before the "
                f"processing time {iso(self._tau)} already reached: feed batches in arrival order"
            )
            raise EngineStateError(msg)
        cls = self._classify(work, order, arr)
        m_before_batch = self._tl.m.copy()
        tau_before = self._tau if self._tau is not None else NEG
        eligible = cls["eligible"]
        tl = cls["tl"]
        np.maximum.at(self._tl.m, tl[eligible], cls["t_late"][eligible])
        np.minimum.at(self._tl.first_arrival, tl[eligible], arr[eligible])
        self._tau = int(arr[-1])
        ids = self._next_id + order.astype(np.int64)
        self._next_id += batch.height
        accepted = ~cls["dropped"]
        points = Breakpoints.empty()
        build_steps = None
        if self._own_timeline:
            points = Breakpoints.of(tl[eligible], arr[eligible], cls["m_after"][eligible])
        else:  # tabulated by commit, which may run in another thread
            build_steps = partial(
                batch_merge_steps,
                arr,
                tl,
                cls["m_before"],
                cls["m_after"],
                m_before=m_before_batch,
                tau_before=tau_before,
                late=self._late,
                ooo=self._ooo,
            )
        return StagedBatch(
            seq=seq,
            build_outcomes=partial(
                outcome_frame,
                batch.height,
                self._next_id - batch.height,
                self.partitions,
                work,
                order,
                cls,
            ),
            ids=ids[accepted],
            t=cls["sys"][accepted],
            arr=arr[accepted],
            tl=tl[accepted],
            m_before=m_before_batch,
            first_arrival=self._tl.first_arrival.copy(),
            tau=self._tau,
            points=points,
            build_steps=build_steps,
        )

    def commit(self, staged: StagedBatch) -> pl.DataFrame:
        """Second half of :meth:`process`: the releases the staged batch makes known."""
        if staged.seq != self._committed:
            msg = f"batch {staged.seq} committed out of order (expected batch {self._committed})"
            raise EngineStateError(msg)
        self._committed += 1
        p = self._pending
        return self._resolve(
            np.concatenate([p["id"], staged.ids]),
            np.concatenate([p["t"], staged.t]),
            np.concatenate([p["arr"], staged.arr]),
            np.concatenate([p["tl"], staged.tl]),
            m_before=staged.m_before,
            first_arrival=staged.first_arrival,
            tau=staged.tau,
            points=staged.points,
            steps=None if staged.build_steps is None else staged.build_steps(),
            closing=False,
        )

    def close(self) -> pl.DataFrame:
        """End of input: τ runs on to +∞. Returns the remaining releases (null: never)."""
        if self._closed:
            msg = "the engine is already closed"
            raise EngineStateError(msg)
        if self._committed != self._staged:
            msg = f"{self._staged - self._committed} staged batch(es) not committed before close"
            raise EngineStateError(msg)
        self._closed = True
        p = self._pending
        steps = None
        if not self._own_timeline:
            steps = merge_steps(
                np.empty(0, dtype=np.int64),
                np.empty(0, dtype=np.int64),
                m_before=self._tl.m,
                tau_before=self._tau if self._tau is not None else NEG,
                late=self._late,
                ooo=self._ooo,
            )
        return self._resolve(
            p["id"],
            p["t"],
            p["arr"],
            p["tl"],
            m_before=self._tl.m,
            first_arrival=self._tl.first_arrival,
            tau=self._tau if self._tau is not None else NEG,
            points=Breakpoints.empty(),
            steps=steps,
            closing=True,
        )

    def _classify(self, work: pl.DataFrame, order: np.ndarray, arr: np.ndarray) -> dict:
        """The per-event rules (docs/semantics.md, "The rules, as implemented") for the batch in processing order; arrays are aligned with ``arr``."""
        policy = self.policy
        late, ooo, early = self._late, self._ooo, self._early
        drop = policy.action is Action.DROP
        tl = work["__tl"].to_numpy()[order]
        if policy.application_time:
            app_s = work["__app"].gather(order)
            invalid_ts = app_s.is_null().to_numpy()
            app = app_s.fill_null(0).to_numpy()
        else:
            invalid_ts = np.zeros(arr.shape, dtype=bool)
            app = arr
        invalid_key = (tl < 0) & ~invalid_ts
        valid = ~invalid_ts & ~invalid_key
        early_flag = valid & (app - arr > early) if early is not None else np.zeros_like(valid)
        ok = valid & ~early_flag
        late_flag = ok & (app < arr - late) if late is not None else np.zeros_like(valid)
        t_late = np.where(late_flag, arr - (late or 0), app)
        eligible = ok & ~(late_flag & drop)
        values = np.where(eligible, t_late, NEG)
        if self.policy.over and len(self._tl) >= FEW_TIMELINES:
            # Substreams: one running maximum per (partition, key) timeline.
            safe_tl = np.where(tl >= 0, tl, 0)
            m0 = (
                np.where(tl >= 0, self._tl.m[safe_tl], NEG)
                if len(self._tl.m)
                else np.full(tl.shape, NEG)
            )
            running = pl.DataFrame({"tl": tl, "v": values}).select(
                pl.col("v").cum_max().over("tl").alias("after"),
                pl.col("v").shift(1).cum_max().over("tl").fill_null(NEG).alias("before"),
            )
            m_before = np.maximum(m0, running["before"].to_numpy())
            m_after = np.maximum(m0, running["after"].to_numpy())
        elif self.policy.over:
            # few substreams: grouped as partitions are; the events without a key (-1,
            # never eligible) are a group of their own, starting at NEG
            m_before, m_after = running_max_by_partition(
                tl + 1, values, np.r_[np.int64(NEG), self._tl.m]
            )
        else:  # timelines are the partitions
            m_before, m_after = running_max_by_partition(tl, values, self._tl.m)
        ooo_flag = eligible & (t_late < m_before - ooo)
        dropped = ~eligible | (ooo_flag & drop)
        sys = np.where(ooo_flag, m_before - ooo, t_late)
        started = m_before > NEG
        if late is None:
            wm = np.where(started, m_before - ooo, POS)
        else:
            wm = np.where(
                started, np.maximum(m_before - ooo, arr - late), arr - UNSTARTED_ESTIMATE_NS - late
            )
        wm = np.where(tl >= 0, wm, POS)
        return {
            "tl": tl,
            "app": app,
            "invalid_ts": invalid_ts,
            "invalid_key": invalid_key,
            "early": early_flag,
            "late": late_flag,
            "ooo": ooo_flag,
            "reordered": eligible & ~ooo_flag & (t_late < m_before),
            "eligible": eligible,
            "dropped": dropped,
            "t_late": t_late,
            "sys": sys,
            "m_after": m_after,
            "m_before": m_before,
            "wm": wm,
        }

    def _resolve(
        self,
        ids: np.ndarray,
        t: np.ndarray,
        arr: np.ndarray,
        tl: np.ndarray,
        *,
        m_before: np.ndarray,
        first_arrival: np.ndarray,
        tau: int,
        points: Breakpoints,
        steps: MergeSteps | None,
        closing: bool,
    ) -> pl.DataFrame:
        """Release times of candidate events; unresolved ones become the new pending set."""
        release = arr.copy()
        unknown = np.zeros(len(ids), dtype=bool)
        if self._own_timeline:
            cand = first_tau(
                t,
                m_before=m_before[tl],
                first_arrival=first_arrival[tl],
                by_m=first_reach(points, tl, t + self._ooo),
                late=self._late,
                ooo=self._ooo,
                tau=tau,
                closing=closing,
            )
            unknown = cand >= POS
            release = np.maximum(release, cand)
        else:
            assert steps is not None
            # candidates by System.Timestamp: a faster search, and releases in output order
            # (release time rises with System.Timestamp under the merge rule, ties aside)
            by_t = np.argsort(t)
            ids, t, arr, tl = ids[by_t], t[by_t], arr[by_t], tl[by_t]
            release = merge_release(t, arr, steps, late=self._late, closing=closing)
            unknown = release >= POS
        if closing:
            self._pending = {k: v[:0] for k, v in self._pending.items()}
            frame = releases_frame(ids, release)
            never = pl.Series(unknown)
            return frame.with_columns(
                pl.when(never).then(None).otherwise(pl.col("release_time")).alias("release_time")
            )
        self._pending = {
            "id": ids[unknown],
            "t": t[unknown],
            "arr": arr[unknown],
            "tl": tl[unknown],
        }
        known = ~unknown
        return releases_frame(ids[known], release[known])
