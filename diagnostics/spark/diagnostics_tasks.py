"""What stage S8 of the Spark replay (docs/spark-replay.md) runs in its tasks: plain functions
from Arrow to Arrow, no pyspark, calling the local replay's own functions
(``diagnostics.instrument``, ``diagnostics.engine.watermarks``) on bounded pieces.

- :func:`aggregate_table`: one (kind, partition, window) group's flagged events through
  ``aggregate_errors``;
- :func:`example_batches`: the example events' payloads, read again from their slices;
- :func:`delay_batches`: a partition's change points of M, in processing order, through
  ``substream_minimum`` (OVER) and ``timeline_delays``, chunk by chunk;
- :func:`digest_batches`: the input digest of each chunk of consecutive events.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

import numpy as np
import polars as pl
import pyarrow as pa

from diagnostics.durations import MINUTE
from diagnostics.engine.watermarks import substream_minimum, timeline_delays
from diagnostics.instrument.aggregate import KIND_FLAGS, aggregate_errors, example_payloads
from diagnostics.instrument.correlation import NULL_NS, chunk_rows
from diagnostics.spark.replay_splits import ReplayPlan, read_slice
from diagnostics.spark.replay_tasks import batch_frames, key_runs
from diagnostics.timestamps import UTC_NS

#: One row of ``aggregate_errors``, as Spark carries it.
AGGREGATES = pa.schema(
    [
        ("kind", pa.string()),
        ("partition", pa.int64()),
        ("window", pa.int64()),
        *(
            (name, pa.int64())
            for name in (
                "event_count",
                "from_ns",
                "to_ns",
                "example_event_id",
                "example_application_ns",
                "example_arrival_ns",
            )
        ),
        *((f"lateness_{s}", pa.float64()) for s in ("min", "p50", "p95", "max")),
        ("distinct_keys", pa.int64()),
    ]
)
EXAMPLES = pa.schema([("eid", pa.int64()), ("example", pa.string())])
DELAYS = pa.schema([("part", pa.int64()), ("m", pa.int64()), ("d", pa.int64())])
DIGESTS = pa.schema([("chunk", pa.int64()), ("digest", pa.binary())])


def _utc(values: pl.Series) -> pl.Series:
    return values.cast(pl.Datetime("ns")).dt.replace_time_zone("UTC")


def aggregate_table(window_ns: int, keys: tuple[str, ...], table: pa.Table) -> pa.Table:
    """The aggregate of one (kind, partition, window) group: its events (``kind_order``,
    ``part``, ``eid``, ``arr``, ``app``, key columns ``k0``...) as an outcomes frame flagged
    with that one kind, through ``aggregate_errors``; ``keys`` names the key columns as the
    local replay names them."""
    rows = pl.from_arrow(table)
    assert isinstance(rows, pl.DataFrame)
    if rows.is_empty():
        return AGGREGATES.empty_table()
    kind = int(rows["kind_order"][0])
    outcomes = pl.DataFrame(
        {
            "event_id": rows["eid"],
            "partition": rows["part"],
            "arrival": _utc(rows["arr"]),
            "application_time": _utc(rows["app"]),
            **{
                flag: pl.repeat(i == kind, rows.height, dtype=pl.Boolean, eager=True)
                for i, (_, flag) in enumerate(KIND_FLAGS)
            },
            **{name: rows[f"k{i}"] for i, name in enumerate(keys)},
        }
    )
    assert outcomes.schema["arrival"] == UTC_NS
    found = aggregate_errors(outcomes, window_ns, keys)
    return pa.Table.from_arrays(
        [found[f.name].to_arrow().cast(f.type) for f in AGGREGATES], schema=AGGREGATES
    )


def example_batches(
    plan: ReplayPlan, wanted: Mapping[int, tuple[int, ...]], batches: Iterator[pa.RecordBatch]
) -> Iterator[pa.RecordBatch]:
    """For each split id in ``batches`` (column ``id``): the ``ExampleEvents`` text of its
    events ``wanted[split]`` (``example_payloads`` over the slice read again)."""
    for batch in batches:
        for split in batch.column("id").to_pylist():
            events, _, _ = read_slice(plan, int(split))
            first = plan.slices[int(split)].offset
            frame = events.with_columns(
                pl.int_range(first, first + events.height, dtype=pl.Int64).alias("event_id")
            )
            found = example_payloads(frame, list(wanted.get(int(split), ())))
            yield pa.RecordBatch.from_pydict(
                {"eid": list(found), "example": list(found.values())}, schema=EXAMPLES
            )


@dataclass(frozen=True, slots=True)
class DelayPlan:
    """What the watermark-delay tasks need: OVER or not, processing time's first and last
    arrival, the minute grid (``diagnostics.minutes.minute_grid``), the tolerances."""

    over: bool
    tau0: int
    tau_end: int
    grid: tuple[int, ...]
    late: int | None
    ooo: int


class _DelayRun:
    """One partition's change points of M (``arr``, ``timeline``, ``m_after``: its timeline's
    M after the event), fed in processing order, cut into chunks of whole arrival times.

    Each chunk goes through ``timeline_delays`` after the last point before it (the carry),
    which gives the delay at every time from the carry's arrival on; a chunk keeps the samples
    from the carry's arrival to its own last arrival (its minute ends among them), the last
    call (:meth:`close`) those after. State: the carry, the latest arrival's points and, with
    OVER, each substream's M (O(substreams))."""

    def __init__(self, plan: DelayPlan, grid: np.ndarray, part: int) -> None:
        self.plan = plan
        self.grid = grid
        self.part = part
        self.last: tuple[int, int] | None = None
        self.held: pl.DataFrame | None = None
        self.substreams: dict[int, int] = {}

    def feed(self, rows: pl.DataFrame) -> pa.RecordBatch | None:
        rows = rows if self.held is None else pl.concat([self.held, rows])
        latest = rows["arr"].max()
        self.held = rows.filter(pl.col("arr") == latest)
        return self._chunk(rows.filter(pl.col("arr") < latest))

    def close(self) -> list[pa.RecordBatch]:
        out = []
        if self.held is not None and (done := self._chunk(self.held)) is not None:
            out.append(done)
        self.held = None
        if self.last is not None:
            lo, m = self.last
            ends = self.grid + MINUTE
            grid = self.grid[ends > lo]
            out.append(self._samples(np.array([lo]), np.array([m]), grid, carry=True, final=True))
        return out

    def _m(self, rows: pl.DataFrame) -> np.ndarray:
        """M of the partition after each point (OVER: the minimum over its substreams)."""
        m = rows["m_after"].to_numpy()
        if not self.plan.over:
            return m
        tl = rows["timeline"].to_numpy()
        known = np.array(list(self.substreams), dtype=np.int64)
        values = np.array(list(self.substreams.values()), dtype=np.int64)
        arr = np.r_[np.zeros(len(known), dtype=np.int64), rows["arr"].to_numpy()]
        after = substream_minimum(arr, np.r_[known, tl], np.r_[values, m])[len(known) :]
        for key, value in zip(tl.tolist(), m.tolist(), strict=True):
            self.substreams[key] = max(value, self.substreams.get(key, value))
        return after

    def _chunk(self, rows: pl.DataFrame) -> pa.RecordBatch | None:
        if rows.is_empty():
            return None
        arr, m = rows["arr"].to_numpy(), self._m(rows)
        hi = int(arr[-1])
        ends = self.grid + MINUTE
        carry = self.last is not None
        if self.last is None:
            grid = self.grid[ends <= hi]
        else:
            lo, before = self.last
            grid = self.grid[(ends > lo) & (ends <= hi)]
            arr, m = np.r_[lo, arr], np.r_[before, m]
        self.last = (hi, int(m[-1]))
        return self._samples(arr, m, grid, carry=carry, final=False)

    def _samples(
        self, arr: np.ndarray, m: np.ndarray, grid: np.ndarray, *, carry: bool, final: bool
    ) -> pa.RecordBatch:
        """Samples of ``timeline_delays`` over the points ``arr``/``m`` (``carry``: the first
        is the point before the chunk) at the minute ends ``grid`` + 1 min."""
        plan = self.plan
        times, delays = timeline_delays(
            arr, m, tau0=plan.tau0, tau_end=plan.tau_end, grid=grid, late=plan.late, ooo=plan.ooo
        )
        # the carry's own sample is before the chunk; the sample at the end of processing
        # time is only right once every point is in (the last call)
        keep = times >= arr[0] if carry else np.ones(len(times), dtype=bool)
        if not final:
            keep &= times != plan.tau_end
        frame = pl.DataFrame({"m": times[keep] - np.mod(times[keep], MINUTE), "d": delays[keep]})
        frame = frame.group_by("m").agg(pl.col("d").max()).sort("m")
        return pa.RecordBatch.from_pydict(
            {
                "part": pa.array(np.full(frame.height, self.part, dtype=np.int64)),
                "m": frame["m"].to_arrow(),
                "d": frame["d"].to_arrow(),
            },
            schema=DELAYS,
        )


def delay_batches(plan: DelayPlan, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """Change points (``part``, ``arr``, ``eid``, ``timeline``, ``m_after``) sorted by
    (part, arr, eid) in; per partition and minute, the largest watermark delay (ns) out."""
    grid = np.asarray(plan.grid, dtype=np.int64)
    run: _DelayRun | None = None
    for part, rows in key_runs(batch_frames(batches), "part"):
        if run is None or run.part != part:
            if run is not None:
                yield from run.close()
            run = _DelayRun(plan, grid, part)
        if (out := run.feed(rows)) is not None:
            yield out
    if run is not None:
        yield from run.close()


def digest_batches(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """Events (``chunk``, ``eid``, ``arrival``, ``application_time``, ``part``) sorted by
    (chunk, eid) in; each chunk's SHA-256 (``diagnostics.instrument.correlation``) out."""
    current: int | None = None
    hasher = hashlib.sha256()
    for chunk, rows in key_runs(batch_frames(batches), "chunk"):
        if current is not None and chunk != current:
            yield pa.RecordBatch.from_pydict(
                {"chunk": [current], "digest": [hasher.digest()]}, schema=DIGESTS
            )
            hasher = hashlib.sha256()
        current = chunk
        hasher.update(
            chunk_rows(
                rows["arrival"].to_numpy(),
                rows["application_time"].fill_null(NULL_NS).to_numpy(),
                rows["part"].to_numpy(),
            )
        )
    if current is not None:
        yield pa.RecordBatch.from_pydict(
            {"chunk": [current], "digest": [hasher.digest()]}, schema=DIGESTS
        )
