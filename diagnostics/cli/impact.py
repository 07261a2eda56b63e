"""``orderdoc impact CAPTURE --job-definition FILE [--query FILE.asaql] --out DIR``: what the
event ordering did to the job's windowed results (docs/impact.md)."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from typing import TYPE_CHECKING, NamedTuple

from diagnostics.cli.impact_args import (
    QueryText,
    add_query_argument,
    query_input,
    query_timestamp,
    read_query_file,
)
from diagnostics.cli.job_args import Resolved, add_job_arguments, resolve_policy
from diagnostics.cli.policy_args import add_column_arguments, add_policy_arguments
from diagnostics.engine.replay import BATCH_EVENTS
from diagnostics.errors import InputError, Setting, UsageError

if TYPE_CHECKING:
    from diagnostics.impact import Impact
    from diagnostics.whatif.replays import Replays

IMPACT_FILE = "impact.parquet"


class Measured(NamedTuple):
    """The comparison and the replay's warning when most application times are invalid."""

    impact: Impact
    invalid_times: str | None


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``impact`` command."""
    parser = subparsers.add_parser(
        "impact",
        help="what the event ordering did to the job's windowed results",
        description=(
            "Replay an event capture under the job's ordering policy, then replay the "
            "query's windowed aggregates (GROUP BY ... TumblingWindow, HoppingWindow, "
            "SlidingWindow, SessionWindow) twice: as the job emits them (events at their "
            "System.Timestamp, dropped events missing) and as they would be had every event "
            "arrived on time. Writes DIR/impact.parquet and prints the windows that changed."
        ),
    )
    parser.add_argument(
        "events", metavar="CAPTURE", help="the event capture (a file, or a Capture folder)"
    )
    parser.add_argument("--out", required=True, metavar="DIR", help="output folder")
    add_query_argument(parser)
    add_column_arguments(parser)
    add_policy_arguments(parser)
    add_job_arguments(parser)
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    parser.set_defaults(func=run, batch_size=BATCH_EVENTS)


def query_of(args: argparse.Namespace, resolved: Resolved | None) -> QueryText:
    """The query to replay: ``--query FILE`` or the definition's."""
    if args.query:
        text = read_query_file(args.query)
        name = (
            resolved.job.input.name
            if resolved and resolved.job
            else query_input(text, f"--query {args.query}")
        )
        return QueryText(text, f"--query {args.query}", name)
    if resolved is None or resolved.job is None:
        msg = "give --job-definition FILE or --query FILE.asaql: the query whose windows to replay"
        raise UsageError(msg)
    job = resolved.job
    if job.definition.query is None:
        msg = f"{job.describe_source()}: the definition holds no query; give --query FILE.asaql"
        raise UsageError(msg)
    return QueryText(job.definition.query, job.describe_source(), job.input.name)


def resolve(args: argparse.Namespace) -> tuple[Resolved, QueryText]:
    """The policy and the query; without a definition, the query's TIMESTAMP BY column
    (when ``--timestamp-by`` is not given)."""
    if args.job_definition is None:
        if not args.query:
            query_of(args, None)
        text = read_query_file(args.query)
        name = query_input(text, f"--query {args.query}")
        named = None
        if not args.timestamp_by:
            args.timestamp_by = query_timestamp(text, name)
            named = f"--query {args.query}" if args.timestamp_by else None
        resolved = replace(resolve_policy(args), query_file=named)
        return resolved, QueryText(text, f"--query {args.query}", name)
    resolved = resolve_policy(args)
    return resolved, query_of(args, resolved)


def measure(
    args: argparse.Namespace,
    resolved: Resolved,
    query: QueryText,
    capture: object = None,
    replays: Replays | None = None,
) -> Measured:
    """Replay the capture and compare the query's windowed results (``replays``: the
    capture's replays a command made already, ``explain``'s)."""
    from diagnostics.cli.replay import run_replay
    from diagnostics.engine.summary import invalid_time_warning
    from diagnostics.impact import measure_impact

    if not resolved.policy.application_time:
        msg = (
            f"{query.source}: the input {query.input_name} is read on arrival time (no TIMESTAMP "
            "BY), so the ordering never moves an event and the results are as the events "
            "arrive; give --timestamp-by COL to replay on application time"
        )
        raise UsageError(msg, Setting.TIMESTAMP_BY)
    if replays is not None:
        from diagnostics.whatif.results import ResultsQuery, impact_of

        mapped = replays.apply(resolved.policy, named_by=resolved.named_by)[1]
        try:
            impact = impact_of(replays, mapped, ResultsQuery(query.text, query.input_name))
        except InputError as exc:
            msg = f"{query.source}: {exc}"
            raise InputError(msg) from exc
        return Measured(impact, invalid_time_warning(replays.result(mapped)))
    result = run_replay(args, capture, resolved)  # type: ignore[arg-type]
    try:
        policy = resolved.policy
        impact = measure_impact(
            result.outcomes,
            query.text,
            query.input_name,
            per_timeline=policy.partition_by or bool(policy.over),
        )
        return Measured(impact, invalid_time_warning(result))
    except InputError as exc:
        msg = f"{query.source}: {exc}"
        raise InputError(msg) from exc


def run(args: argparse.Namespace) -> int:
    """Replay, compare, write impact.parquet, print the summary."""
    from diagnostics.cli.capture_args import capture_from_args
    from diagnostics.cli.preflight import check_over_before_reading
    from diagnostics.cli.values import out_folder
    from diagnostics.impact import format_summary, summarize
    from diagnostics.instrument.run import atomic_write

    resolved, query = resolve(args)
    check_over_before_reading(args, resolved.policy, resolved.partitions)
    out = out_folder(args.out, create=True)
    # the passthrough columns the query does not name stay in the capture cache
    capture = capture_from_args(args, defer=True).for_query(query.text)
    impact, invalid_times = measure(args, resolved, query, capture)
    try:
        atomic_write(
            out / IMPACT_FILE, lambda p: impact.table.write_parquet(p, compression="snappy")
        )
    except OSError as exc:
        msg = f"output folder {out}: {IMPACT_FILE} could not be written: {exc.strerror or exc}"
        raise UsageError(msg, Setting.OUTPUT) from exc
    summary = summarize(impact)
    if args.json:
        said = {
            "policy": resolved.describe(),
            "query": query.source,
            "input": capture.to_dict(),
            "warnings": [invalid_times] if invalid_times else [],
        }
        json.dump({**said, **summary}, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(f"policy: {resolved.describe()}\nquery: {query.source}\n")
        sys.stdout.write("".join(f"{line}\n" for line in capture.describe()))
        if invalid_times:
            sys.stdout.write(f"warning     {invalid_times}\n")
        sys.stdout.write(format_summary(summary))
        sys.stdout.write(f"wrote {out / IMPACT_FILE}\n")
    return 0


def explain_section(
    args: argparse.Namespace,
    resolved: Resolved,
    capture: object,
    text: str,
    fmt: str,
    replays: Replays | None = None,
) -> str:
    """``explain --events`` output with the results section added: a section of text or
    Markdown after the findings, or a ``results`` member of the JSON report. A query the
    section cannot read is said there, never an error of explain. ``replays``: explain's
    (its replay under the job's policy is not made again)."""
    from diagnostics.impact import format_summary, summarize

    try:
        query = query_of(args, resolved)
        measured = measure(args, resolved, query, capture, replays)
        summary: dict[str, object] = summarize(measured.impact)
        said = format_summary(summary)
    except (InputError, UsageError) as exc:
        summary = {"error": str(exc)}
        said = f"not compared: {exc}\n"
    if fmt == "json":
        report = json.loads(text)
        report["results"] = summary
        return json.dumps(report, indent=2, default=str) + "\n"
    if fmt == "markdown":
        return f"{text.rstrip()}\n\n## {RESULTS_TITLE}\n\n```text\n{said}```\n"
    body = "".join(f"  {line}\n" for line in said.splitlines())
    return f"{text}\n{RESULTS_TITLE}:\n{body}"


#: The heading of the results section of ``explain --events``.
RESULTS_TITLE = "What the ordering did to the job's windowed results"
