"""The query whose windowed aggregates are replayed (``impact``, ``explain --events``):
``--query FILE.asaql`` or the ``--job-definition``'s query, and the input it reads."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from diagnostics.errors import UsageError

if TYPE_CHECKING:
    from diagnostics.cli.job_args import Resolved
    from diagnostics.whatif.results import ResultsQuery


def add_query_argument(parser: argparse.ArgumentParser) -> None:
    """``--query FILE.asaql``."""
    parser.add_argument(
        "--query",
        metavar="FILE.asaql",
        help="the job's query, whose windowed aggregates are replayed (default: the "
        "--job-definition's query); the ordering policy still comes from the definition "
        "and the flags",
    )


@dataclass(frozen=True, slots=True)
class QueryText:
    """The query to replay, where it came from and the input it reads."""

    text: str
    source: str
    input_name: str


def read_query_file(path: str) -> str:
    """The text of ``--query FILE`` (a one-line error when it cannot be read)."""
    try:
        return Path(path).read_text(encoding="utf-8-sig")
    except FileNotFoundError as exc:
        msg = f"--query {path}: no such file"
        raise UsageError(msg) from exc
    except (OSError, UnicodeDecodeError) as exc:
        why = exc.strerror if isinstance(exc, OSError) else "not UTF-8 text"
        msg = f"--query {path}: cannot read it ({why})"
        raise UsageError(msg) from exc


def query_input(text: str, source: str) -> str:
    """The one input a query reads when no job definition names it: the source that is not
    one of its WITH steps."""
    from diagnostics.impact.source import inputs_read

    names = inputs_read(text)
    if len(names) != 1:
        shown = ", ".join(names) or "none"
        msg = (
            f"{source}: the query reads {len(names)} inputs ({shown}); give --job-definition "
            "FILE (and --input NAME) to say which one the capture holds"
        )
        raise UsageError(msg)
    return names[0]


def query_timestamp(text: str, input_name: str) -> str | None:
    """The query's TIMESTAMP BY column for ``input_name`` when every read says the same."""
    from diagnostics.impact.source import timestamp_column

    return timestamp_column(text, input_name)


def add_optimise_argument(parser: argparse.ArgumentParser) -> None:
    """``--optimise results|events``."""
    parser.add_argument(
        "--optimise",
        choices=["events", "results"],
        default="events",
        help="what the recommendation weighs: events (the least p95 release delay among the "
        "settings that leave at most 1%% of the events adjusted or dropped; the default) or "
        "results (the fewest windows of the query's aggregates changed, then the smallest "
        "largest relative error, then the least delay; needs the job's query)",
    )


def results_query(args: argparse.Namespace, resolved: Resolved | None) -> ResultsQuery | None:
    """The query that weighs settings by their results (a ``ResultsQuery``), or ``None``:
    no ``--query`` and no definition query, or none of its steps is replayed (then said on
    stderr, with the steps not replayed). ``--optimise results`` without one is an error."""
    import sys

    from diagnostics.impact.steps import read_steps
    from diagnostics.whatif.results import ResultsQuery

    job = resolved.job if resolved is not None else None
    text, source, name = None, None, None
    if getattr(args, "query", None):
        text = read_query_file(args.query)
        source = f"--query {args.query}"
        name = job.input.name if job is not None else query_input(text, source)
    elif job is not None and job.definition.query:
        text, source, name = job.definition.query, job.describe_source(), job.input.name
    wanted = getattr(args, "optimise", "events") == "results"
    if text is None or name is None:
        if wanted:
            msg = "--optimise results needs the job's query: give --job-definition FILE or --query FILE.asaql"
            raise UsageError(msg)
        return None
    steps = read_steps(text, name)
    if not steps.steps:
        lines = [f"results: {s.describe()}" for s in steps.skipped]
        msg = f"{source}: no step aggregates the input over a window, so no result is compared"
        if wanted:
            raise UsageError(
                f"--optimise results: {msg} ({'; '.join(s.describe() for s in steps.skipped)})"
            )
        sys.stderr.write("\n".join([*lines, f"results: {msg}"]) + "\n")
        return None
    return ResultsQuery(text, name)
