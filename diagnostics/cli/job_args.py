"""``--job-definition FILE [--parameters FILE] [--input NAME]``: the job's policy read from
its definition (ARM template, resource JSON or ``az stream-analytics job show`` output);
policy flags given beside it override the definition, and the summary says which."""

from __future__ import annotations

import argparse
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from diagnostics.cli.policy_args import given_policy_flags, policy_from_args
from diagnostics.engine.policy import Action, OrderingPolicy
from diagnostics.errors import UsageError

if TYPE_CHECKING:
    from diagnostics.jobdef.job import JobPolicy


def add_job_arguments(parser: argparse.ArgumentParser) -> None:
    """``--job-definition``, ``--parameters`` and ``--input``."""
    parser.add_argument(
        "--job-definition",
        metavar="FILE",
        help="the job's definition: an ARM template, a streamingjobs resource JSON or the "
        "output of 'az stream-analytics job show'; its tolerances, Adjust/Drop and query "
        "(TIMESTAMP BY, OVER, PARTITION BY) give the policy",
    )
    parser.add_argument(
        "--parameters",
        metavar="FILE",
        help="ARM parameter file resolving the template's [parameters('...')] values",
    )
    parser.add_argument(
        "--input", metavar="NAME", help="the job's input the capture holds (when it has several)"
    )


@dataclass(frozen=True, slots=True)
class Resolved:
    """The policy to use, the job it came from (if any) and the flags that override it."""

    policy: OrderingPolicy
    job: JobPolicy | None
    overridden: tuple[str, ...]
    partitions: int | None
    #: a query file (no definition) whose TIMESTAMP BY gave the column, e.g. ``--query F``
    query_file: str | None = None

    @property
    def named_by(self) -> str | None:
        """The job definition (or query file) whose query names the columns (``None``: the
        flags do)."""
        if self.job is None:
            return self.query_file
        if {"--timestamp-by", "--over"} & set(self.overridden):
            return None
        return self.job.describe_source()

    def describe(self) -> str:
        """The policy in one line, saying where it came from."""
        if self.job is None:
            return self.policy.describe()
        text = f"{self.policy.describe()} (from {self.job.describe_source()}"
        if self.overridden:
            text += f"; overridden by {', '.join(self.overridden)}"
        return text + ")"


def _override(policy: OrderingPolicy, args: argparse.Namespace, flags: list[str]) -> OrderingPolicy:
    changes: dict[str, object] = {}
    if "--timestamp-by" in flags:
        changes["timestamp_by"] = args.timestamp_by
    if "--over" in flags:
        changes["over"] = tuple(args.over)
    if "--partition-by" in flags:
        changes["partition_by"] = True
    if "--late-arrival" in flags:
        changes["late_arrival_ns"] = args.late_arrival
    if "--out-of-order" in flags:
        changes["out_of_order_ns"] = args.out_of_order
    if "--action" in flags:
        changes["action"] = Action(args.action)
    if getattr(args, "no_early_policy", False):
        changes["early_policy"] = False
    return replace(policy, **changes)  # type: ignore[arg-type]


def resolve_policy(args: argparse.Namespace) -> Resolved:
    """The policy the flags and the job definition describe (flags win)."""
    definition_file = getattr(args, "job_definition", None)
    if definition_file is None:
        for flag, attr in (("--input", "input"), ("--parameters", "parameters")):
            if getattr(args, attr, None):
                msg = f"{flag} needs --job-definition FILE"
                raise UsageError(msg)
        return Resolved(policy_from_args(args), None, (), getattr(args, "partitions", None))
    from diagnostics.jobdef import job_policy, read_job_definition

    definition = read_job_definition(definition_file, args.parameters)
    job = job_policy(definition, args.input, timestamp_by=getattr(args, "timestamp_by", None))
    flags = given_policy_flags(args)
    partitions = getattr(args, "partitions", None)
    if partitions is not None:
        flags.append("--partitions")
    return Resolved(
        _override(job.policy, args, flags),
        job,
        tuple(flags),
        partitions if partitions is not None else job.partition_count,
    )
