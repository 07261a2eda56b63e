"""``orderdoc explain --write-fix DIR``: the corrected job written and checked."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

import polars as pl

from diagnostics.cli.job_args import Resolved
from diagnostics.cli.policy_args import columns_from_args
from diagnostics.explain.model import Report


def write_and_check(
    args: argparse.Namespace,
    resolved: Resolved,
    report: Report,
    events: pl.DataFrame | None,
    partitions: Sequence[int] | None,
) -> str:
    """Write the fix into ``--write-fix`` and return the summary to print."""
    from diagnostics.jobdef.roundtrip import fix_and_verify, summary

    assert resolved.job is not None
    trip = fix_and_verify(
        resolved.job,
        report.findings,
        args.write_fix,
        current=resolved.policy,
        events=events,
        columns=columns_from_args(args),
        partitions=partitions,
        parameters=args.parameters,
    )
    return summary(trip)
