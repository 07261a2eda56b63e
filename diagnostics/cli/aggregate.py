"""``orderdoc aggregate INPUT... --out DIR``: the Spark job over folders of ASA logs.

Runs on the embedded ``local[*]`` Spark by default (Java 17+ needed), on a cluster with
``--master URL``, or through Spark Connect with ``--remote sc://host:port``. Prints progress
lines on stderr and a readable summary on stdout; ``DIR/summary.json`` holds the same facts.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from diagnostics.cli.spark_args import add_target_arguments, progress_line
from diagnostics.cli.storage_args import add_time_range, time_range
from diagnostics.cli.values import out_folder, path_arg
from diagnostics.errors import OrderdocError, UsageError
from diagnostics.logs.inputs import expand_inputs
from diagnostics.words import partitions, plural


def register(subparsers: argparse._SubParsersAction) -> None:
    """Adds the ``aggregate`` sub-command."""
    parser = subparsers.add_parser(
        "aggregate",
        help="aggregate folders of ASA diagnostic logs into Parquet tables (Spark)",
        description=__doc__,
    )
    parser.add_argument(
        "inputs",
        nargs="+",
        metavar="INPUT",
        help="file, folder or glob, or a storage URL (az://CONTAINER/PATH, "
        "abfss://CONTAINER@ACCOUNT.dfs.core.windows.net/PATH, "
        "https://ACCOUNT.blob.core.windows.net/CONTAINER/PATH; docs/storage.md)",
    )
    parser.add_argument("--out", required=True, type=path_arg, metavar="DIR", help="output folder")
    add_time_range(parser)
    add_target_arguments(parser)
    parser.set_defaults(func=run)


def _time_range(summary: dict) -> str:
    span = summary.get("time_range") or {}
    if span.get("from") is None and span.get("to") is None:
        return "- (no log record with a time)"
    return f"{span.get('from')} .. {span.get('to')}"


def _partitions(ids: list[int]) -> str:
    return partitions(ids)


def silent_partitions(summary: dict, out: Path) -> str:
    """The partitions that went silent, per job (from the written ``partition_idle`` table;
    the summary's list, which names no job, when the table cannot be read)."""
    import polars as pl

    from diagnostics.aggregates import TableName, scan

    try:
        lazy = scan(out, TableName.PARTITION_IDLE)
        frame = None if lazy is None else lazy.select("job", "partition_id").collect()
    except (OSError, pl.exceptions.PolarsError, OrderdocError):
        frame = None
    if frame is None:
        idle = sorted(summary.get("idle_partitions") or [])
        return _partitions(idle) if idle else "none"
    per_job: dict[str, set[int]] = {}
    for job, partition in frame.drop_nulls("partition_id").iter_rows():
        per_job.setdefault(job or "", set()).add(int(partition))
    if not per_job:
        return "none"
    return "; ".join(
        f"{_partitions(sorted(ids))} of job {job}"
        if job
        else f"{_partitions(sorted(ids))} of records naming no job"
        for job, ids in sorted(per_job.items(), key=lambda item: (not item[0], item[0]))
    )


def format_summary(summary: dict, out: Path) -> str:
    """The human-readable summary printed at the end of a run."""
    lines = [
        f"records: {summary['records_total']} total, {summary['records_parsed']} parsed, "
        f"{summary['records_quarantined']} quarantined"
        + (
            f" ({plural(summary['job_events'], 'job lifecycle record')} among the parsed: "
            "table job_events)"
            if summary.get("job_events")
            else ""
        ),
        f"jobs: {', '.join(summary['jobs']) or '-'}",
        f"time range: {_time_range(summary)}",
        "events by kind:",
    ]
    unknown = summary.get("records_without_count") or {}
    width = max((len(kind) for kind in summary["events_by_kind"]), default=0)
    for kind, count in summary["events_by_kind"].items():
        line = f"  {kind:<{width}} {count:>12,}"
        if unknown.get(kind):  # records that named no count: each at least one more event
            line += (
                f"  + {plural(unknown[kind], 'record')} without a count"
                f" (at least {count + unknown[kind]:,})"
            )
        lines.append(line)
    lines.append(
        f"silent partitions (InputPartitionNotProgressing): {silent_partitions(summary, out)}"
    )
    if summary.get("files_skipped"):
        lines.append(f"files skipped (not logs): {len(summary['files_skipped'])}")
    lines.append(f"tables and summary.json written to {out}")
    return "\n".join(lines)


def inputs_line(logs: int, metrics: int, total_bytes: int) -> str:
    """``"2 log files, 1 metrics file, 3.4 MB"``: what a run reads, said before it starts."""
    size_mb = total_bytes / 1e6
    return f"{plural(logs, 'log file')}, {plural(metrics, 'metrics file')}, {size_mb:,.1f} MB"


def run(args: argparse.Namespace) -> int:
    """Runs the job; returns 0 (errors a user can cause raise OrderdocError, exit 2)."""
    from diagnostics.spark.session import SparkTarget, aggregate_on, require_java

    target = SparkTarget(master=args.master, remote=args.remote, conf=tuple(args.conf))
    out_folder(args.out)
    files = expand_inputs(list(args.inputs))
    since, until = time_range(args)
    if since is not None or until is not None:  # the hourly files of the range
        from dataclasses import replace

        from diagnostics.storage.hours import in_range

        files = replace(files, logs=tuple(f for f in files.logs if in_range(f, since, until)))
    if not files.logs and not files.metrics:
        msg = f"INPUT: no log files among {', '.join(args.inputs)}"
        raise UsageError(msg)
    require_java(target)
    say = progress_line()
    say(inputs_line(len(files.logs), len(files.metrics), files.total_bytes))
    result = aggregate_on(target, files, args.out, progress=say)
    say("done")
    sys.stdout.write(format_summary(result.summary, args.out) + "\n")
    return 0
