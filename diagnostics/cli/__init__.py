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
import sys
from collections.abc import Sequence
from typing import NoReturn

from diagnostics import __version__
from diagnostics.cli import flags
from diagnostics.errors import OrderdocError

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
    "demo",
)


class OneLineParser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line (``orderdoc CMD: error: ...``), exit 2."""

    def error(self, message: str) -> NoReturn:
        sys.stderr.write(f"{self.prog}: error: {message} (see --help)\n")
        raise SystemExit(2)


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The parser with every registered sub-command (or just ``only``, to start fast)."""
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
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``orderdoc`` with ``argv`` (default: ``sys.argv[1:]``) and return the exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    # Import only the chosen command's module: start-up stays fast for every command.
    chosen = argv[0] if argv and argv[0] in COMMANDS else None
    if chosen in ("replay", "cti"):
        from diagnostics.cli.cti import command_argv  # replay --cti-* alias, mode checks

        try:
            argv = command_argv(argv)
        except OrderdocError as exc:
            sys.stderr.write(f"orderdoc {chosen}: error: {flags.message(exc)}\n")
            return exc.exit_code
        chosen = argv[0]
    parser = build_parser(chosen)
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except OrderdocError as exc:
        sys.stderr.write(f"orderdoc {args.command}: error: {flags.message(exc, args)}\n")
        return exc.exit_code
    except KeyboardInterrupt:
        sys.stderr.write(f"orderdoc {args.command}: interrupted\n")
        return 130
    except BrokenPipeError:
        return 0
