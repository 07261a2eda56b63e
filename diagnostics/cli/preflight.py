"""Checks a command makes before it reads a capture: a setting ASA rejects is said at once,
not after minutes of reading.

``TIMESTAMP BY ... OVER`` on an input of more than one partition needs ``PARTITION BY
PartitionId`` (docs/semantics.md, "Watermarks, merge and output release"; ASA's page
"TIMESTAMP BY (Azure Stream Analytics)", the OVER clause). The partition count is known
before the events are read when ``--partitions`` (or the definition's ``INTO n``) declares
it, from the file paths of an Event Hubs Capture folder, and from the partition column alone
of Parquet files; a CSV or JSON Lines capture is checked when it is read (its partition
column is only known by parsing the file).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import polars as pl

from diagnostics.captures.datasets import is_glob, parquet_files
from diagnostics.captures.detect import choose_partition
from diagnostics.captures.paths import DEFAULT_PATH_FORMAT, capture_files
from diagnostics.captures.tables import table_kind
from diagnostics.engine.policy import OrderingPolicy
from diagnostics.errors import InputError, Setting


def _parquet_partitions(files: list[Path], given: str | None) -> int | None:
    """Distinct values of the partition column of Parquet ``files`` (1 without one; ``None``
    when the files cannot be read so: the reader then says why)."""
    try:
        schema = pl.read_parquet_schema(files[0])
        column = choose_partition(pl.DataFrame(schema=schema), given).column
        if column is None:
            return 1
        values = pl.scan_parquet(files).select(pl.col(column).unique()).collect()
    except (pl.exceptions.PolarsError, OSError, InputError):
        return None
    return max(1, values.height)


def partitions_before_reading(args: argparse.Namespace) -> int | None:
    """How many partitions the capture of ``args.events`` has, when that is known without
    reading its events (see the module); ``None`` otherwise."""
    events = getattr(args, "events", None)
    if events is None:
        return None
    given = getattr(args, "partition_col", None)
    try:
        several = parquet_files(events)
        if several is not None:
            return _parquet_partitions(several, given)
        if is_glob(events):
            return None
        path = Path(events)
        if path.is_dir() or (path.is_file() and table_kind(path.name)[0] == "avro"):
            if given is not None:
                return None  # a body field names the partition: only the events say
            fmt = getattr(args, "capture_path_format", None) or DEFAULT_PATH_FORMAT
            found = {f.partition or 0 for f in capture_files(path, fmt)}
            return len(found)
        if path.is_file() and table_kind(path.name) == ("parquet", False):
            return _parquet_partitions([path], given)
    except InputError:
        return None  # the reader says what is wrong with the capture, naming it
    return None


def check_over_before_reading(
    args: argparse.Namespace, policy: OrderingPolicy, declared: int | None = None
) -> None:
    """An :class:`InputError` naming ``--partition-by`` when ``policy`` has OVER keys but no
    PARTITION BY and the capture has more than one partition (``declared``: the partitions
    ``--partitions`` or the job definition declares), before anything is read."""
    if not policy.over or policy.partition_by:
        return
    count = declared if declared is not None and declared > 1 else None
    if count is None:
        count = partitions_before_reading(args)
    if count is None:
        return
    problem = policy.partition_problem(count)
    if problem is not None:
        msg = f"{args.events}: {problem}" if getattr(args, "events", None) else problem
        raise InputError(msg, Setting.PARTITION_BY)
