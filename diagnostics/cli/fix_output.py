"""``orderdoc explain --write-fix DIR``: the corrected job written and checked."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from diagnostics.captures.reader import Capture
from diagnostics.cli.job_args import Resolved
from diagnostics.explain.model import Report

#: FIX.md's words, on the command line, for measuring a fix made from logs.
MEASURE_HINT = "run `orderdoc explain --events CAPTURE --job-definition ... --write-fix DIR`"


def _say(message: str) -> None:
    sys.stderr.write(message + "\n")


def write_and_check(
    args: argparse.Namespace,
    resolved: Resolved,
    report: Report,
    capture: Capture | None,
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
        events=capture,
        partitions=partitions,
        parameters=args.parameters,
        say=_say,
        measure_hint=MEASURE_HINT,
    )
    return summary(trip)
