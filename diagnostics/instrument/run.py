"""From an outcomes frame to diagnostics records and metrics, and onto disk.

:func:`instrument` is pure (no clock, no I/O): the same outcomes, policy text and options give
the same records, in the same order, with the same correlation ID. Records are ordered by their
``time`` (an aggregate's last processing time, a notice's emission time); at equal times data
errors come before notices, then kind order, then partition.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from diagnostics.instrument.aggregate import (
    KIND_FLAGS,
    aggregate_errors,
    example_payloads,
    resolve_key_columns,
)
from diagnostics.instrument.correlation import correlation_id, input_digest
from diagnostics.instrument.idle import idle_notices
from diagnostics.instrument.metrics import metrics_frame
from diagnostics.instrument.options import InstrumentOptions
from diagnostics.instrument.records import data_error_record, dumps, notice_record


@dataclass(frozen=True)
class Instrumented:
    """What one replay's instrumentation produced."""

    records: tuple[Mapping[str, Any], ...]
    metrics: pl.DataFrame
    aggregates: pl.DataFrame
    notices: pl.DataFrame
    correlation_id: str


def instrument(
    outcomes: pl.DataFrame,
    options: InstrumentOptions,
    *,
    policy_text: str,
    partitions: Sequence[int] | None = None,
    watermark_delay: pl.DataFrame | Callable[[], pl.DataFrame | None] | None = None,
    example_rows: Callable[[Sequence[int]], pl.DataFrame] | None = None,
) -> Instrumented:
    """Diagnostics records, idle notices and per-minute metrics of one replay.

    ``outcomes`` follows the replay contract (``event_id``, ``partition``, ``arrival``,
    ``application_time`` and the five flag columns at least). ``policy_text`` is any canonical
    rendering of the ordering policy (it only feeds the correlation ID). ``partitions`` are the
    declared partitions (default: those present). ``watermark_delay`` is the engine's per-minute
    watermark-delay frame, or a function that computes it. ``example_rows``: the outcome
    rows of some events with every input column (when ``outcomes`` lacks some: a capture's
    deferred passthrough columns), for the example events.

    The independent parts (input digest, idle notices, watermark delay, error aggregates) are
    computed on two worker threads; the result does not depend on their timing.
    """
    keys = resolve_key_columns(outcomes, options.key_columns)
    narrow = _single_chunk(outcomes, [*_COUNTED, *keys])
    with ThreadPoolExecutor(max_workers=2, thread_name_prefix="orderdoc-instrument") as pool:
        delay = pool.submit(watermark_delay) if callable(watermark_delay) else None
        digest = pool.submit(input_digest, outcomes)
        notices_job = pool.submit(_notices, outcomes, options, partitions)
        aggregates = aggregate_errors(narrow, options.error_window_ns, keys)
        example_ids = aggregates["example_event_id"].to_list()
        full = outcomes if example_rows is None else example_rows(example_ids)
        examples = example_payloads(full, example_ids)
        cid = correlation_id(digest.result(), policy_text)
        notices = notices_job.result()
        records = diagnostics_records(aggregates, examples, notices, options, cid, keys)
        if callable(watermark_delay):
            assert delay is not None
            frame = delay.result()
        else:
            frame = watermark_delay
        metrics = metrics_frame(narrow, options.job, partitions, frame)
    return Instrumented(
        records=records,
        metrics=metrics,
        aggregates=aggregates,
        notices=notices,
        correlation_id=cid,
    )


def diagnostics_records(
    aggregates: pl.DataFrame,
    examples: Mapping[int, str],
    notices: pl.DataFrame,
    options: InstrumentOptions,
    correlation: str,
    key_columns: tuple[str, ...],
) -> tuple[Mapping[str, Any], ...]:
    """The records of ``diagnostics.jsonl``, in their order: the error aggregates (as
    :func:`aggregate_errors` sorts them, ``examples`` by example event) and the idle notices
    (as :func:`idle_notices` sorts them), by time, data errors first at equal times."""
    ranked: list[tuple[int, int, int, Mapping[str, Any]]] = []
    for seq, row in enumerate(aggregates.iter_rows(named=True)):
        example = examples.get(row["example_event_id"], "[]")
        record = data_error_record(row, example, options, correlation, key_columns)
        ranked.append((row["to_ns"], 0, seq, record))
    for seq, row in enumerate(notices.iter_rows(named=True)):
        ranked.append((row["notice_ns"], 1, seq, notice_record(row, options, correlation)))
    ranked.sort(key=lambda item: item[:3])
    return tuple(item[3] for item in ranked)


#: The outcome columns the error aggregates and the metrics read (the key columns besides).
_COUNTED = ("event_id", "partition", "arrival", "application_time", *(f for _, f in KIND_FLAGS))


def _single_chunk(outcomes: pl.DataFrame, names: Sequence[str]) -> pl.DataFrame:
    """The named columns (those present), each as one chunk.

    A replay's outcome columns come in chunks of different sizes (the input's row groups, the
    engine's batches); an expression over several of them makes polars re-chunk the whole
    frame, every input column included (about 1.2 GB at 10M events). Only the columns the
    diagnostics read are re-chunked here, one at a time."""
    present = [name for name in dict.fromkeys(names) if name in outcomes.columns]
    return pl.DataFrame([outcomes.get_column(name).rechunk() for name in present])


def _notices(
    outcomes: pl.DataFrame, options: InstrumentOptions, partitions: Sequence[int] | None
) -> pl.DataFrame:
    arrival = outcomes["arrival"].dt.cast_time_unit("ns").dt.epoch("ns").to_numpy()
    partition = outcomes["partition"].cast(pl.Int64).to_numpy()
    return idle_notices(arrival, partition, options.idle_notice_ns, partitions)


def atomic_write(path: Path, write: Callable[[Path], object]) -> None:
    """``write(temporary path)``, then rename it to ``path``: a run that fails or is killed
    while writing leaves the previous ``path`` (or none), never a partial file."""
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        write(tmp)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_diagnostics(path: Path, records: Sequence[Mapping[str, Any]]) -> None:
    """Write records as JSON Lines (LF line ends, UTF-8), atomically."""

    def write(target: Path) -> None:
        with target.open("w", encoding="utf-8", newline="\n") as handle:
            for record in records:
                handle.write(dumps(record))
                handle.write("\n")

    atomic_write(path, write)


def write_metrics(path: Path, metrics: pl.DataFrame) -> None:
    """Write the metrics table as Parquet, atomically."""
    atomic_write(path, lambda target: metrics.write_parquet(target))
