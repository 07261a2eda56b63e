"""``orderdoc rules check [PATHS]``: validate alerting rule files.

Exit 0 when every rule is valid; 2 otherwise, with one line per problem on stderr
(``file:line: rule 'id': field 'name': message``) and never a traceback.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from diagnostics.resources import default_rule_paths
from diagnostics.rules.loader import load_rules
from diagnostics.rules.model import RuleError
from diagnostics.words import noun


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``rules`` (with its ``check`` sub-command) to the command line."""
    parser = subparsers.add_parser("rules", help="work with alerting rules (rules check)")
    sub = parser.add_subparsers(
        title="rules commands", dest="rules_command", metavar="COMMAND", parser_class=type(parser)
    )
    check = sub.add_parser("check", help="validate rule files; exit 0 if valid, 2 if not")
    check.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="rule files or folders (default: $ORDERDOC_RULES, else the packaged pack)",
    )
    check.set_defaults(func=run_check)
    parser.set_defaults(func=_usage(parser))


def _usage(parser: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    def show(_args: argparse.Namespace) -> int:
        parser.print_help(sys.stderr)
        return 2

    return show


def run_check(args: argparse.Namespace) -> int:
    """Validate the rules; print every problem (one line each) and return 0 or 2."""
    paths = args.paths or default_rule_paths()
    try:
        ruleset = load_rules(paths)
    except RuleError as exc:
        for problem in exc.problems:
            sys.stderr.write(f"{problem}\n")
        count = len(exc.problems)
        sys.stderr.write(f"orderdoc rules check: {count} problem{'s' if count > 1 else ''}\n")
        return 2
    files = len(ruleset.files)
    sys.stdout.write(f"ok: {len(ruleset)} rules in {files} {noun(files, 'file')}\n")
    return 0
