"""The incremental ordering engine: ASA's per-event rules (spec §3) and release (spec §4).

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
from dataclasses import dataclass

import numpy as np
import polars as pl

from diagnostics.engine.columns import OUTCOME_COLUMNS, EventColumns
from diagnostics.engine.policy import UNSTARTED_ESTIMATE_NS, Action, OrderingPolicy
from diagnostics.engine.release import (
    NEG,
    POS,
    Breakpoints,
    MergeSteps,
    first_reach,
    first_tau,
    merge_release,
    merge_steps,
    running_max_by_partition,
)
from diagnostics.errors import EngineStateError, InputError
from diagnostics.kinds import EventStatus
from diagnostics.timestamps import UTC_NS, from_ns, iso, to_utc


@dataclass(frozen=True, slots=True)
class BatchResult:
    """What one batch produced.

    ``outcomes``: the outcome columns of the batch's rows, in the order given
    (``release_time`` is null here; releases arrive in ``releases``). ``releases``: events
    (of this or earlier batches) whose release time became known, ``event_id`` and
    ``release_time``. ``events`` is the batch itself with the outcome columns added.
    """

    batch: pl.DataFrame
    outcomes: pl.DataFrame
    releases: pl.DataFrame

    @property
    def events(self) -> pl.DataFrame:
        """The batch's rows, input columns kept, outcome columns added."""
        return self.batch.hstack(self.outcomes)


@dataclass(frozen=True, slots=True)
class StagedBatch:
    """A classified batch waiting for :meth:`OrderingEngine.commit`: its outcome columns, its
    accepted events, and snapshots of the state the release search needs."""

    seq: int
    outcomes: pl.DataFrame
    ids: np.ndarray
    t: np.ndarray
    arr: np.ndarray
    tl: np.ndarray
    m_before: np.ndarray
    first_arrival: np.ndarray
    tau: int
    points: Breakpoints
    steps: MergeSteps | None


STATUS_DTYPE = pl.Enum([s.value for s in EventStatus])
_STATUS_VALUES = pl.Series([s.value for s in EventStatus], dtype=STATUS_DTYPE)


def _status(dropped: np.ndarray, adjusted: np.ndarray) -> pl.Series:
    """The ``status`` column (an Enum of :class:`EventStatus`) from the two flags."""
    codes = np.where(dropped, 2, np.where(adjusted, 1, 0)).astype(np.uint32)
    return _STATUS_VALUES.gather(pl.Series(codes)).alias("status")


def _releases_frame(ids: np.ndarray, times: np.ndarray) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "event_id": pl.Series(ids, dtype=pl.Int64),
            "release_time": from_ns(pl.Series(times, dtype=pl.Int64)),
        }
    )


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
        if policy.over and len(self.partitions) > 1 and not policy.partition_by:
            msg = (
                f"TIMESTAMP BY ... OVER {', '.join(policy.over)} on an input with "
                f"{len(self.partitions)} partitions needs PARTITION BY PartitionId "
                "(--partition-by), as ASA requires"
            )
            raise InputError(msg)
        self._late = policy.effective_late_ns
        self._ooo = policy.effective_ooo_ns
        self._early = policy.early_window_ns
        self._own_timeline = policy.partition_by or bool(policy.over)
        self._part_index = {p: i for i, p in enumerate(self.partitions)}
        self._key_frame: pl.DataFrame | None = None  # OVER keys seen so far, with their ids
        self._tl_part: list[int] = []
        self._m = np.empty(0, dtype=np.int64)
        self._fa = np.empty(0, dtype=np.int64)
        if not policy.over:
            self._new_timelines(list(range(len(self.partitions))))
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

    def _new_timelines(self, part_indexes: list[int]) -> None:
        """Open one timeline per entry (its partition index); ids follow in that order."""
        self._tl_part.extend(int(p) for p in part_indexes)
        self._m = np.r_[self._m, np.full(len(part_indexes), NEG, dtype=np.int64)]
        self._fa = np.r_[self._fa, np.full(len(part_indexes), POS, dtype=np.int64)]

    # -- input normalisation -------------------------------------------------------------
    def _normalise(self, batch: pl.DataFrame) -> pl.DataFrame:
        """Typed working columns ``__arr``, ``__app`` (ns or null), ``__pidx``, ``__tl``."""
        cols = self.columns
        clash = [c for c in OUTCOME_COLUMNS if c in batch.columns]
        if clash:
            msg = f"input column '{clash[0]}' has the name of an outcome column; rename it"
            raise InputError(msg)
        if cols.arrival not in batch.columns and cols.parsed_arrival not in batch.columns:
            msg = (
                f"arrival column '{cols.arrival}' is missing (columns: {', '.join(batch.columns)})"
            )
            raise InputError(msg)
        if cols.parsed_arrival in batch.columns:
            arrival = batch[cols.parsed_arrival]
        else:
            arrival = to_utc(batch[cols.arrival])
        bad = arrival.is_null()
        if bad.any():
            row = self._row_of(batch, int(bad.arg_true()[0]))
            value = batch[cols.arrival][int(bad.arg_true()[0])]
            msg = f"arrival column '{cols.arrival}', {row}: '{value}' is not a timestamp"
            raise InputError(msg)
        work = pl.DataFrame({"__arr": arrival.dt.epoch("ns")})
        work = work.with_columns(self._partition_index(batch), self._application_ns(batch))
        return work.with_columns(self._timeline_ids(batch, work["__pidx"], work["__arr"]))

    def _row_of(self, batch: pl.DataFrame, i: int) -> str:
        if self.columns.row in batch.columns:
            return f"row {int(batch[self.columns.row][i]) + 1}"
        return f"event {self._next_id + i + 1}"

    def _partition_index(self, batch: pl.DataFrame) -> pl.Series:
        name = self.columns.partition
        if name is None or name not in batch.columns:
            if len(self.partitions) != 1:
                msg = f"partition column '{name}' is missing but {len(self.partitions)} partitions are declared"
                raise InputError(msg)
            return pl.Series("__pidx", np.zeros(batch.height, dtype=np.int64))
        values = batch[name].cast(pl.Int64, strict=False)
        bad = values.is_null()
        if bad.any():
            i = int(bad.arg_true()[0])
            msg = f"partition column '{name}', {self._row_of(batch, i)}: '{batch[name][i]}' is not a partition number"
            raise InputError(msg)
        first, count = self.partitions[0], len(self.partitions)
        if self.partitions[-1] - first == count - 1:  # contiguous ids: an offset, no lookup
            mapped = values - first
            mapped = mapped.set((mapped < 0) | (mapped >= count), None)
        else:
            mapped = values.replace_strict(self._part_index, default=None, return_dtype=pl.Int64)
        unknown = mapped.is_null()
        if unknown.any():
            i = int(unknown.arg_true()[0])
            msg = (
                f"partition column '{name}', {self._row_of(batch, i)}: partition {values[i]} "
                f"is not among the declared partitions {self.partitions[0]}..{self.partitions[-1]}"
            )
            raise InputError(msg)
        return mapped.alias("__pidx")

    def _application_ns(self, batch: pl.DataFrame) -> pl.Series:
        col = self.policy.timestamp_by
        if col is None:
            return pl.Series("__app", [None] * batch.height, dtype=pl.Int64)
        if col not in batch.columns:
            msg = f"timestamp column '{col}' (--timestamp-by) is missing (columns: {', '.join(batch.columns)})"
            raise InputError(msg)
        return to_utc(batch[col]).dt.epoch("ns").alias("__app")

    def _timeline_ids(self, batch: pl.DataFrame, pidx: pl.Series, arr: pl.Series) -> pl.Series:
        over = self.policy.over
        if not over:
            return pidx.alias("__tl")
        missing = [c for c in over if c not in batch.columns]
        if missing:
            msg = f"OVER column '{missing[0]}' is missing (columns: {', '.join(batch.columns)})"
            raise InputError(msg)
        names = [f"__k{i}" for i in range(len(over))]
        keys = batch.select(
            *(pl.col(c).cast(pl.String).alias(n) for c, n in zip(over, names, strict=True)),
            pidx.alias("__p"),
        )
        valid = keys.with_columns(arr.alias("__a"), pl.int_range(pl.len()).alias("__i")).filter(
            pl.all_horizontal(pl.col(n).is_not_null() for n in names)
        )
        # Timeline ids are assigned in processing order (arrival, then input order), so they do
        # not depend on how the input is split into batches.
        if not bool((arr.diff().drop_nulls() >= 0).all()):
            valid = valid.sort("__a", "__i", maintain_order=True)
        first_seen = valid.unique(subset=["__p", *names], keep="first", maintain_order=True)
        first_seen = first_seen.select("__p", *names)
        known = self._key_frame
        if known is None:
            fresh = first_seen
        else:
            fresh = first_seen.join(known, on=["__p", *names], how="anti", maintain_order="left")
        start = len(self._tl_part)
        fresh = fresh.with_columns(
            pl.int_range(start, start + fresh.height, dtype=pl.Int64).alias("__tl")
        )
        self._new_timelines(fresh["__p"].to_list())
        self._key_frame = fresh if known is None else pl.concat([known, fresh])
        joined = keys.join(
            self._key_frame,
            on=["__p", *names],
            how="left",
            nulls_equal=False,
            maintain_order="left",
        )
        return joined["__tl"].fill_null(-1)

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
            return StagedBatch(seq, self._empty_outcomes(), empty, empty, empty, empty,
                               self._m.copy(), self._fa.copy(),
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
        m_before_batch = self._m.copy()
        tau_before = self._tau if self._tau is not None else NEG
        eligible = cls["eligible"]
        tl = cls["tl"]
        np.maximum.at(self._m, tl[eligible], cls["t_late"][eligible])
        np.minimum.at(self._fa, tl[eligible], arr[eligible])
        self._tau = int(arr[-1])
        ids = self._next_id + order.astype(np.int64)
        self._next_id += batch.height
        accepted = ~cls["dropped"]
        points = Breakpoints.empty()
        steps = None
        if self._own_timeline:
            points = Breakpoints.of(tl[eligible], arr[eligible], cls["m_after"][eligible])
        else:
            steps = merge_steps(
                arr,
                cls["lowest"],
                m_before=m_before_batch,
                tau_before=tau_before,
                late=self._late,
                ooo=self._ooo,
            )
        return StagedBatch(
            seq=seq,
            outcomes=self._events_frame(batch, work, order, cls),
            ids=ids[accepted],
            t=cls["sys"][accepted],
            arr=arr[accepted],
            tl=tl[accepted],
            m_before=m_before_batch,
            first_arrival=self._fa.copy(),
            tau=self._tau,
            points=points,
            steps=steps,
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
            steps=staged.steps,
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
                m_before=self._m,
                tau_before=self._tau if self._tau is not None else NEG,
                late=self._late,
                ooo=self._ooo,
            )
        return self._resolve(
            p["id"],
            p["t"],
            p["arr"],
            p["tl"],
            m_before=self._m,
            first_arrival=self._fa,
            tau=self._tau if self._tau is not None else NEG,
            points=Breakpoints.empty(),
            steps=steps,
            closing=True,
        )

    def _classify(self, work: pl.DataFrame, order: np.ndarray, arr: np.ndarray) -> dict:
        """Spec §3 for the batch in processing order; arrays are aligned with ``arr``."""
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
        lowest = None
        if self.policy.over:
            # Substreams: one running maximum per (partition, key) timeline.
            safe_tl = np.where(tl >= 0, tl, 0)
            m0 = (
                np.where(tl >= 0, self._m[safe_tl], NEG) if len(self._m) else np.full(tl.shape, NEG)
            )
            running = pl.DataFrame({"tl": tl, "v": values}).select(
                pl.col("v").cum_max().over("tl").alias("after"),
                pl.col("v").shift(1).cum_max().over("tl").fill_null(NEG).alias("before"),
            )
            m_before = np.maximum(m0, running["before"].to_numpy())
            m_after = np.maximum(m0, running["after"].to_numpy())
        else:
            # Timelines are the partitions: a (partition × event) running-max table, which the
            # merge rule reuses for the minimum over partitions.
            m_before, m_after, lowest = running_max_by_partition(
                tl, values, self._m, lowest=not self._own_timeline
            )
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
            "lowest": lowest,
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
        common = {"late": self._late, "ooo": self._ooo, "tau": tau, "closing": closing}
        release = arr.copy()
        unknown = np.zeros(len(ids), dtype=bool)
        if self._own_timeline:
            cand = first_tau(
                t,
                m_before=m_before[tl],
                first_arrival=first_arrival[tl],
                by_m=first_reach(points, tl, t + self._ooo),
                **common,
            )
            unknown = cand >= POS
            release = np.maximum(release, cand)
        else:
            assert steps is not None
            release = merge_release(t, arr, steps, late=self._late, closing=closing)
            unknown = release >= POS
        if closing:
            self._pending = {k: v[:0] for k, v in self._pending.items()}
            frame = _releases_frame(ids, release)
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
        return _releases_frame(ids[known], release[known])

    # -- output --------------------------------------------------------------------------
    def _events_frame(
        self, batch: pl.DataFrame, work: pl.DataFrame, order: np.ndarray, cls: dict
    ) -> pl.DataFrame:
        """The outcome columns of the batch, in its given order."""
        identity = bool(np.all(order[1:] > order[:-1]))
        inverse = np.empty_like(order)
        inverse[order] = np.arange(len(order))

        def back(values: np.ndarray) -> np.ndarray:
            return values if identity else values[inverse]

        dropped = back(cls["dropped"])
        adjusted = back((cls["late"] | cls["ooo"]) & ~cls["dropped"])
        sys = pl.Series(back(cls["sys"]), dtype=pl.Int64)
        wm = pl.Series(back(cls["wm"]), dtype=pl.Int64)
        part_values = np.asarray(self.partitions, dtype=np.int64)[work["__pidx"].to_numpy()]
        outcome = pl.DataFrame(
            {
                "event_id": pl.Series(self._next_id - batch.height + np.arange(batch.height)),
                "partition": pl.Series(part_values, dtype=pl.Int64),
                "timeline": pl.Series(back(cls["tl"]), dtype=pl.Int64),
                "application_time": from_ns(work["__app"]),
                "arrival": from_ns(work["__arr"]),
                "system_timestamp": from_ns(pl.Series(sys).set(pl.Series(dropped), None)),
                "late": back(cls["late"]),
                "early": back(cls["early"]),
                "out_of_order": back(cls["ooo"]),
                "reordered": back(cls["reordered"]),
                "invalid_timestamp": back(cls["invalid_ts"]),
                "invalid_key": back(cls["invalid_key"]),
                "dropped": dropped,
                "status": _status(dropped, adjusted),
                "watermark": from_ns(wm.set(wm >= POS, None)),
                "release_time": pl.repeat(None, batch.height, dtype=UTC_NS, eager=True),
                "output_rank": pl.repeat(None, batch.height, dtype=pl.Int64, eager=True),
            }
        )
        outcome = outcome.with_columns(
            pl.when(pl.col("timeline") < 0)
            .then(None)
            .otherwise(pl.col("timeline"))
            .alias("timeline")
        )
        return outcome

    @staticmethod
    def _empty_outcomes() -> pl.DataFrame:
        schema = {
            "event_id": pl.Int64,
            "partition": pl.Int64,
            "timeline": pl.Int64,
            "application_time": UTC_NS,
            "arrival": UTC_NS,
            "system_timestamp": UTC_NS,
            **dict.fromkeys(("late", "early", "out_of_order", "reordered"), pl.Boolean),
            **dict.fromkeys(("invalid_timestamp", "invalid_key", "dropped"), pl.Boolean),
            "status": STATUS_DTYPE,
            "watermark": UTC_NS,
            "release_time": UTC_NS,
            "output_rank": pl.Int64,
        }
        return pl.DataFrame(schema=schema)
