"""The query whose windowed aggregates are replayed (``impact``, ``explain --events``):
``--query FILE.asaql`` or the ``--job-definition``'s query, and the input it reads."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

from diagnostics.errors import UsageError


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
