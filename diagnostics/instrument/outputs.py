"""The files of an instrumented replay: ``diagnostics.jsonl`` and ``metrics.parquet``.

``orderdoc replay`` and the demo call :func:`write_outputs` once the replay is done.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from pathlib import Path

import polars as pl

from diagnostics.engine.replay import ReplayResult
from diagnostics.engine.watermarks import watermark_delay_per_minute
from diagnostics.instrument.options import InstrumentOptions
from diagnostics.instrument.run import Instrumented, instrument, write_diagnostics, write_metrics

DIAGNOSTICS_FILE = "diagnostics.jsonl"
METRICS_FILE = "metrics.parquet"


def write_outputs(
    run: ReplayResult,
    out_dir: Path,
    options: InstrumentOptions | None = None,
    example_rows: Callable[[Sequence[int]], pl.DataFrame] | None = None,
) -> Instrumented:
    """Write ``diagnostics.jsonl`` and ``metrics.parquet`` for a finished replay into ``out_dir``.

    The ``TIMESTAMP BY ... OVER`` keys of the replay's policy, when set, are the keys counted
    per aggregate (they replace ``options.key_columns``). ``example_rows``: see
    :func:`~diagnostics.instrument.run.instrument`.
    """
    policy = run.policy
    options = dataclasses.replace(options or InstrumentOptions(), key_columns=tuple(policy.over))
    result = instrument(
        run.outcomes,
        options,
        policy_text=f"{policy.describe()}|{policy!r}",
        partitions=tuple(run.partitions),
        watermark_delay=lambda: watermark_delay_per_minute(run),
        example_rows=example_rows,
    )
    out_dir = Path(out_dir)
    write_diagnostics(out_dir / DIAGNOSTICS_FILE, result.records)
    write_metrics(out_dir / METRICS_FILE, result.metrics)
    return result
