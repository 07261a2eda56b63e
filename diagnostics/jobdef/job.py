"""The ordering policy a job definition describes, for one of its inputs.

The settings come from the job's properties (tolerances, Adjust/Drop) and from the query
(``TIMESTAMP BY``, ``OVER``, ``PARTITION BY PartitionId [INTO n]``) where it reads the input.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from diagnostics.durations import SECOND
from diagnostics.engine.policy import Action, OrderingPolicy
from diagnostics.errors import InputError, Setting
from diagnostics.explain.model import Finding, Suggestion
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
    #: the TIMESTAMP BY column was given by the caller, not read from the query
    timestamp_given: bool = False

    @property
    def reads_disagree(self) -> bool:
        """True when the query reads the input with different clauses (see
        :func:`reads_disagree`)."""
        return reads_disagree(list(self.reads))

    def describe_source(self) -> str:
        """``job NAME (arm-template FILE, compatibility level 1.2), input NAME``."""
        d = self.definition
        job = f"job {d.name}" if d.name else "the job"
        level = f", compatibility level {d.compatibility_level}" if d.compatibility_level else ""
        return f"{job} ({d.shape.value} {d.shown_as}{level}), input {self.input.name}"


def one_line(text: str) -> str:
    """Query text on one line (for messages): every run of whitespace one blank."""
    return " ".join(text.split())


def _stamp(ref: SourceRef) -> tuple[str, tuple[str, ...]]:
    column = ref.timestamp_by.lower() if ref.timestamp_by is not None else None
    return (column or one_line(ref.timestamp_text or "")), tuple(k.lower() for k in ref.over)


def _clauses(
    reads: Sequence[SourceRef],
) -> tuple[dict[tuple[str, tuple[str, ...]], SourceRef], bool]:
    """The different ``TIMESTAMP BY ... OVER`` clauses of the reads of one input, compared
    ignoring case (each as its first read writes it), and whether some read has none (arrival
    time: a different clause too)."""
    stamped = [r for r in reads if r.timestamp_text is not None]
    clauses: dict[tuple[str, tuple[str, ...]], SourceRef] = {}
    for ref in stamped:
        clauses.setdefault(_stamp(ref), ref)
    return clauses, bool(stamped) and len(stamped) < len(reads)


def reads_disagree(reads: Sequence[SourceRef]) -> bool:
    """True when the reads of one input say different ``TIMESTAMP BY ... OVER`` clauses
    (ignoring case), or some say ``TIMESTAMP BY`` and some do not (arrival time)."""
    clauses, unstamped = _clauses(reads)
    return len(clauses) > 1 or unstamped


def choose_input(definition: JobDefinition, name: str | None) -> JobInput:
    """The input called ``name``, or the job's only stream input (errors name
    :attr:`Setting.JOB_INPUT`)."""
    path = definition.path
    if not definition.inputs:
        # The REST API (and so az and the portal's JSON view) leaves out the inputs and the
        # query unless asked to expand them.
        msg = (
            f"{path}: the job lists no inputs; save it with them: 'az stream-analytics job "
            "show --expand inputs,transformation ...' or the portal's Export template"
        )
        # No setting resolves this (the definition was given; it lacks the inputs), so the
        # message is not followed by a flag or a field to set.
        raise InputError(msg)
    if name is not None:
        found = definition.input_named(name)
        if found is None:
            known = ", ".join(i.name for i in definition.inputs) or "none"
            msg = f"{path}: the job has no input '{name}' (inputs: {known})"
            raise InputError(msg, Setting.JOB_INPUT)
        if found.kind.lower() != "stream":
            listed = ", ".join(i.name for i in definition.stream_inputs) or "none"
            msg = f"{path}: input '{found.name}' is a {found.kind} input; event ordering applies to stream inputs only (stream inputs: {listed})"
            raise InputError(msg, Setting.JOB_INPUT)
        return found
    streams = definition.stream_inputs
    if len(streams) == 1:
        return streams[0]
    if not streams:
        msg = f"{path}: the job has no stream input; event ordering applies to stream inputs only"
        raise InputError(msg)
    names = ", ".join(i.name for i in streams)
    msg = f"{path}: the job has {len(streams)} stream inputs ({names}); pick one by its name"
    raise InputError(msg, Setting.JOB_INPUT)


def _one_timestamp(
    definition: JobDefinition, chosen: JobInput, reads: list[SourceRef]
) -> SourceRef | None:
    path = definition.path
    stamped = [r for r in reads if r.timestamp_text is not None]
    for ref in stamped:
        if not ref.timestamp_is_column:
            msg = (
                f"{path}: TIMESTAMP BY {one_line(ref.timestamp_text or '')} (input {chosen.name}) is an "
                "expression, not a column; compute it into a column of your capture and "
                "give that column as the TIMESTAMP BY column"
            )
            raise InputError(msg, Setting.TIMESTAMP_BY)
    clauses, unstamped = _clauses(reads)
    if len(clauses) > 1 or unstamped:  # reads_disagree
        shown = "; ".join(
            f"TIMESTAMP BY {r.timestamp_by}" + (f" OVER {', '.join(r.over)}" if r.over else "")
            for _, r in sorted(clauses.items())
        ) + ("; no TIMESTAMP BY (arrival time)" if unstamped else "")
        msg = f"{path}: input {chosen.name} is read with different clauses ({shown}); say which TIMESTAMP BY column (and OVER columns) applies"
        raise InputError(msg, Setting.TIMESTAMP_BY)
    return stamped[0] if stamped else None


def job_policy(
    definition: JobDefinition,
    input_name: str | None = None,
    *,
    timestamp_by: str | None = None,
) -> JobPolicy:
    """The policy of the chosen input. ``timestamp_by``: the caller gives the ``TIMESTAMP
    BY`` column itself (a query's expression computed into a capture column, or the choice
    between two readings), so conflicting or unsupported clauses are no error; the ``OVER``
    keys are still the query's when every ``TIMESTAMP BY`` of the input has the same."""
    chosen = choose_input(definition, input_name)
    try:
        parsed = parse_query(definition.query) if definition.query is not None else None
    except InputError as exc:
        msg = f"{definition.path}: {exc}"
        raise InputError(msg) from exc
    reads = parsed.reads(chosen.name) if parsed else []
    ref = None if timestamp_by else _one_timestamp(definition, chosen, reads)
    overs = {r.over for r in reads if r.timestamp_text is not None}
    over = (
        (ref.over if ref else ()) if not timestamp_by else (overs.pop() if len(overs) == 1 else ())
    )
    partition_by = any((r.partition_by or "").lower() == "partitionid" for r in reads)
    counts = [r.partition_into for r in reads if r.partition_into]
    late = definition.late_seconds
    policy = OrderingPolicy(
        timestamp_by=timestamp_by or (ref.timestamp_by if ref else None),
        late_arrival_ns=None if late is None else late * SECOND,
        out_of_order_ns=definition.out_of_order_seconds * SECOND,
        action=Action(definition.action.lower()),
        partition_by=partition_by,
        over=over,
    )
    return JobPolicy(
        definition=definition,
        input=chosen,
        query=parsed,
        reads=tuple(reads),
        policy=policy,
        partition_count=max(counts) if counts else None,
        timestamp_given=bool(timestamp_by),
    )


def name_the_input(findings: Sequence[Finding], name: str) -> list[Finding]:
    """The findings with query suggestions naming the job's input (``FROM telemetry ...``)
    instead of the placeholder ``input``; everything else as it was."""
    from diagnostics.jobdef.rewrite import identifier

    placeholder = "FROM input "
    named = f"FROM {identifier(name)} "

    def rename(s: Suggestion) -> Suggestion:
        if s.snippet.startswith(placeholder):
            return replace(s, snippet=named + s.snippet.removeprefix(placeholder))
        return s

    return [replace(f, suggestions=tuple(rename(s) for s in f.suggestions)) for f in findings]
