"""The ordering policy a job definition describes, for one of its inputs.

The settings come from the job's properties (tolerances, Adjust/Drop) and from the query
(``TIMESTAMP BY``, ``OVER``, ``PARTITION BY PartitionId [INTO n]``) where it reads the input.
"""

from __future__ import annotations

from dataclasses import dataclass

from diagnostics.durations import SECOND
from diagnostics.engine.policy import Action, OrderingPolicy
from diagnostics.errors import InputError
from diagnostics.jobdef.definition import JobDefinition, JobInput
from diagnostics.jobdef.query import ParsedQuery, SourceRef, parse_query


@dataclass(frozen=True, slots=True)
class JobPolicy:
    """The policy of one input of a job definition, and where it came from."""

    definition: JobDefinition
    input: JobInput
    query: ParsedQuery | None
    reads: tuple[SourceRef, ...]
    policy: OrderingPolicy
    partition_count: int | None

    def describe_source(self) -> str:
        """``job NAME (ARM template FILE), input NAME``."""
        job = f"job {self.definition.name}" if self.definition.name else "the job"
        return (
            f"{job} ({self.definition.shape.value} {self.definition.path}), input {self.input.name}"
        )


def choose_input(definition: JobDefinition, name: str | None) -> JobInput:
    """The input ``--input NAME`` names, or the job's only stream input."""
    path = definition.path
    if name is not None:
        found = definition.input_named(name)
        if found is None:
            known = ", ".join(i.name for i in definition.inputs) or "none"
            msg = f"{path}: the job has no input '{name}' (inputs: {known})"
            raise InputError(msg)
        return found
    streams = definition.stream_inputs
    if len(streams) == 1:
        return streams[0]
    if not streams:
        msg = f"{path}: the job has no stream input; event ordering applies to stream inputs only"
        raise InputError(msg)
    names = ", ".join(i.name for i in streams)
    msg = f"{path}: the job has {len(streams)} stream inputs ({names}); pick one with --input NAME"
    raise InputError(msg)


def _one_timestamp(
    definition: JobDefinition, chosen: JobInput, reads: list[SourceRef]
) -> SourceRef | None:
    path = definition.path
    stamped = [r for r in reads if r.timestamp_text is not None]
    for ref in stamped:
        if not ref.timestamp_is_column:
            msg = (
                f"{path}: TIMESTAMP BY {ref.timestamp_text} (input {chosen.name}) is an "
                "expression, not a column; compute it into a column of your capture and "
                "name that column with --timestamp-by COL"
            )
            raise InputError(msg)
    distinct = {(r.timestamp_by, r.over) for r in stamped}
    if len(distinct) > 1:
        shown = "; ".join(
            f"TIMESTAMP BY {t}" + (f" OVER {', '.join(o)}" if o else "")
            for t, o in sorted(distinct)
        )
        msg = f"{path}: input {chosen.name} is read with different clauses ({shown}); say which applies with --timestamp-by COL (and --over)"
        raise InputError(msg)
    return stamped[0] if stamped else None


def job_policy(
    definition: JobDefinition,
    input_name: str | None = None,
    *,
    timestamp_override: bool = False,
) -> JobPolicy:
    """The policy of the chosen input. ``timestamp_override``: the caller gives the
    ``TIMESTAMP BY`` column itself, so conflicting or unsupported clauses are no error."""
    chosen = choose_input(definition, input_name)
    parsed = parse_query(definition.query) if definition.query is not None else None
    reads = parsed.reads(chosen.name) if parsed else []
    ref = None if timestamp_override else _one_timestamp(definition, chosen, reads)
    partition_by = any((r.partition_by or "").lower() == "partitionid" for r in reads)
    counts = [r.partition_into for r in reads if r.partition_into]
    late = definition.late_seconds
    policy = OrderingPolicy(
        timestamp_by=ref.timestamp_by if ref else None,
        late_arrival_ns=None if late is None else late * SECOND,
        out_of_order_ns=definition.out_of_order_seconds * SECOND,
        action=Action(definition.action.lower()),
        partition_by=partition_by,
        over=ref.over if ref else (),
    )
    return JobPolicy(
        definition=definition,
        input=chosen,
        query=parsed,
        reads=tuple(reads),
        policy=policy,
        partition_count=max(counts) if counts else None,
    )
