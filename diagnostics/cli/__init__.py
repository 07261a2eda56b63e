"""The ``orderdoc`` command line.

Each sub-command lives in its own module of this package and exposes
``register(subparsers) -> None``; registering sets ``func`` on its parser, a callable that
takes the parsed namespace and returns the exit code. Add a command by adding its module name
to :data:`COMMANDS`.

Errors a user can cause (:class:`~diagnostics.errors.OrderdocError`) print one line on stderr
and exit with code 2; there is never a traceback for bad input.
"""

from __future__ import annotations

import argparse
import importlib
import re
import sys
from collections.abc import Sequence
from typing import NoReturn

from diagnostics import __version__
from diagnostics.cli import flags
from diagnostics.errors import OrderdocError
from diagnostics.freed_memory import keep_freed_memory

COMMANDS: tuple[str, ...] = (
    "replay",
    "cti",
    "generate",
    "aggregate",
    "rules",
    "alerts",
    "watch",
    "app",
    "explain",
    "whatif",
    "impact",
    "translate",
    "demo",
)


#: reST's inline literals (````x````) and roles (``:func:`x```), as module docstrings write them.
_MARKUP = re.compile(r"``([^`]+)``|:[a-z]+:`~?([^`]+)`")


def plain_text(text: str) -> str:
    """``text`` without reST markup: ````orderdoc demo```` reads ``orderdoc demo`` in --help."""
    return _MARKUP.sub(lambda m: m.group(1) or m.group(2), text)


class OneLineParser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line (``orderdoc CMD: error: ...``), exit 2."""

    def error(self, message: str) -> NoReturn:
        sys.stderr.write(f"{self.prog}: error: {message} (see --help)\n")
        raise SystemExit(2)


def build_parser(
    only: str | None = None, shown_as: dict[str, str] | None = None
) -> argparse.ArgumentParser:
    """The parser with every registered sub-command (or just ``only``, to start fast).
    ``shown_as`` maps a command to the name its usage and errors show (the deprecated
    ``orderdoc replay --cti-every`` runs ``cti`` but speaks as ``replay``)."""
    parser = OneLineParser(
        prog="orderdoc",
        description="Why does my event-time streaming job drop, shift or delay events?",
    )
    parser.add_argument("--version", action="version", version=f"orderdoc {__version__}")
    subparsers = parser.add_subparsers(
        title="commands", dest="command", metavar="COMMAND", parser_class=OneLineParser
    )
    for name in COMMANDS if only is None else (only,):
        module = importlib.import_module(f"diagnostics.cli.{name}")
        module.register(subparsers)
    from diagnostics.cli.storage_args import INPUTS, URL_NOTE

    for name, command in subparsers.choices.items():
        if command.description:  # a module docstring as the description: no reST markup
            command.description = plain_text(command.description)
        if name != "watch" and any(a.dest in INPUTS for a in command._actions):
            command.epilog = f"{command.epilog}\n\n{URL_NOTE}" if command.epilog else URL_NOTE
    for name, shown in (shown_as or {}).items():
        subparsers.choices[name].prog = f"{parser.prog} {shown}"
    return parser


#: The commands that replay one capture many times (the recommender's measured settings, a
#: fix's steps): freed memory kept for reuse saves them page faults
#: (:mod:`diagnostics.freed_memory`). ``replay`` makes each column once, so for it this only
#: raises the peak (docs/performance.md, "Freed memory kept for reuse").
KEEP_FREED_MEMORY = frozenset({"explain", "whatif"})


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``orderdoc`` with ``argv`` (default: ``sys.argv[1:]``) and return the exit code.
    Run as the command itself (no ``argv``), the commands that replay one capture many times
    keep freed memory for reuse (:data:`KEEP_FREED_MEMORY`); a program that calls it with
    ``argv`` keeps its own allocator settings."""
    if argv is None and len(sys.argv) > 1 and sys.argv[1] in KEEP_FREED_MEMORY:
        keep_freed_memory()
    argv = flags.join_negative_values(sys.argv[1:] if argv is None else argv)
    # Import only the chosen command's module: start-up stays fast for every command.
    chosen = argv[0] if argv and argv[0] in COMMANDS else None
    typed = chosen  # what the user typed: errors say it, also through an alias
    if chosen in ("replay", "cti"):
        from diagnostics.cli.cti import command_argv  # replay --cti-* alias, mode checks

        try:
            argv = command_argv(argv)
        except OrderdocError as exc:
            sys.stderr.write(f"orderdoc {chosen}: error: {flags.message(exc)}\n")
            return exc.exit_code
        chosen = argv[0]
    parser = build_parser(chosen, {chosen: typed} if chosen and typed and typed != chosen else None)
    args = parser.parse_args(argv)
    command = typed or args.command
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    from diagnostics.cli.progress import flush_notes

    flush_notes(show=False)  # none left from an earlier run in this process
    from diagnostics.cli.storage_args import shown as with_urls
    from diagnostics.cli.storage_args import staged_inputs

    try:
        with staged_inputs(args, command):  # storage URLs as local paths (docs/storage.md)
            code = int(args.func(args) or 0)
    except OrderdocError as exc:
        flush_notes(show=False)
        sys.stderr.write(f"orderdoc {command}: error: {with_urls(flags.message(exc, args))}\n")
        return exc.exit_code
    except KeyboardInterrupt:
        flush_notes(show=False)
        sys.stderr.write(f"orderdoc {command}: interrupted\n")
        return 130
    except BrokenPipeError:
        flush_notes(show=False)
        return 0
    flush_notes()
    return code
