"""The Spark flags every command that can run on Spark takes, parsed in one place.

``aggregate`` and ``watch`` always run on Spark (``--master``/``--remote``/``--conf``);
``replay``, ``whatif``, ``explain --events`` and ``demo`` run locally unless ``--spark`` is
given, and then take the same three flags (:func:`add_spark_arguments`). :func:`target_of`
turns them into the one :class:`~diagnostics.spark.session.SparkTarget`, and
:func:`diagnostics.spark.session.spark_session` starts it (and stops only a session it
started).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from diagnostics.errors import UsageError

if TYPE_CHECKING:
    from diagnostics.spark.session import SparkTarget


def conf_pair(text: str) -> tuple[str, str]:
    """argparse ``type`` of ``--conf KEY=VALUE``."""
    key, sep, value = text.partition("=")
    if not sep or not key:
        msg = f"--conf: {text!r} is not KEY=VALUE"
        raise argparse.ArgumentTypeError(msg)
    return key.strip(), value


def add_target_arguments(
    parser: argparse.ArgumentParser,
    *,
    remote: bool = True,
    when: str = "",
    remote_help: str = "Spark Connect URL, sc://host:port",
) -> None:
    """``--master URL``, ``--remote sc://...`` (when offered; one of the two) and
    ``--conf KEY=VALUE`` (repeatable); ``when``: a prefix of their help (``"with --spark: "``)."""
    target = parser.add_mutually_exclusive_group()
    target.add_argument("--master", help=f"{when}Spark master URL (default: embedded local[*])")
    if remote:
        target.add_argument("--remote", help=f"{when}{remote_help}")
    parser.add_argument(
        "--conf", action="append", type=conf_pair, default=[], metavar="KEY=VALUE",
        help=f"{when}extra Spark setting (repeatable)",
    )  # fmt: skip


def add_spark_arguments(parser: argparse.ArgumentParser, what: str, *, remote: bool = True) -> None:
    """``--spark`` (``what``: its help) and the target flags it takes."""
    parser.add_argument("--spark", action="store_true", help=what)
    add_target_arguments(parser, remote=remote, when="with --spark: ")


def check_spark_flags(args: argparse.Namespace, rules: str = "asa") -> None:
    """``--master``, ``--remote`` and ``--conf`` only with ``--spark`` (one line naming them);
    ``--spark`` runs ASA's rules only (``rules``: the ``--rules`` chosen)."""
    if args.spark:
        if rules != "asa":
            msg = f"--spark runs ASA's rules; --rules {rules} runs here: remove --spark or --rules"
            raise UsageError(msg)
        return
    given = (
        ("--master", getattr(args, "master", None)),
        ("--remote", getattr(args, "remote", None)),
        ("--conf", getattr(args, "conf", None)),
    )
    stray = [flag for flag, value in given if value]
    if stray:
        msg = f"{', '.join(stray)}: Spark settings, which only --spark uses; add --spark"
        raise UsageError(msg)


def target_of(args: argparse.Namespace, app_name: str) -> SparkTarget:
    """The Spark target the flags name (Java checked for a local JVM)."""
    from diagnostics.spark.session import SparkTarget, require_java

    target = SparkTarget(
        master=getattr(args, "master", None),
        remote=getattr(args, "remote", None),
        app_name=app_name,
        conf=tuple(getattr(args, "conf", None) or ()),
    )
    require_java(target)
    return target


def progress_line(started: float | None = None) -> Callable[[str], None]:
    """Progress on stderr, each line stamped with the seconds since ``started`` (now)."""
    begun = time.monotonic() if started is None else started

    def say(message: str) -> None:
        sys.stderr.write(f"[{time.monotonic() - begun:7.1f}s] {message}\n")
        sys.stderr.flush()

    return say
