"""``orderdoc app [AGG_DIR] [--port N] [--host 127.0.0.1]``: the troubleshooting app.

Runs ``streamlit run`` on the app shipped with the package (its ``streamlit_app.py``) with
the aggregate folder passed through, bound to 127.0.0.1 unless ``--host`` says otherwise,
headless, without usage statistics or a file watcher. Prints the URL, then serves until
interrupted.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

from diagnostics.errors import UsageError
from diagnostics.resources import app_file

#: Streamlit settings passed as flags (the app's .streamlit/config.toml holds the same).
STREAMLIT_FLAGS: tuple[str, ...] = (
    "--server.headless=true",
    "--server.fileWatcherType=none",
    "--server.runOnSave=false",
    "--browser.gatherUsageStats=false",
    "--global.developmentMode=false",
    "--client.showErrorDetails=false",
    "--client.toolbarMode=minimal",
    "--theme.base=light",
)


def _port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if not 1 <= value <= 65535:
        msg = f"{text!r} is not a TCP port (1-65535)"
        raise argparse.ArgumentTypeError(msg)
    return value


def register(subparsers: argparse._SubParsersAction) -> None:
    """Adds the ``app`` sub-command."""
    parser = subparsers.add_parser(
        "app", help="start the troubleshooting app (Streamlit) on 127.0.0.1", description=__doc__
    )
    parser.add_argument(
        "agg_dir",
        nargs="?",
        metavar="AGG_DIR",
        help="aggregate folder to open (or its storage URL, docs/storage.md)",
    )
    parser.add_argument(
        "--watch",
        type=Path,
        metavar="STATE_DIR",
        help="follow an 'orderdoc watch' state folder: Overview and Alerts refresh when a "
        "pass lands; Alerts shows the alert history and runbooks",
    )
    parser.add_argument("--port", type=_port, default=8501, help="port (default 8501)")
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    parser.add_argument(
        "--rules",
        action="append",
        type=Path,
        metavar="PATH",
        help="rule file or folder (repeatable; default: $ORDERDOC_RULES, else the packaged pack)",
    )
    parser.set_defaults(func=run)


def command(args: argparse.Namespace) -> tuple[list[str], dict[str, str]]:
    """The ``streamlit run`` command line and environment for ``args`` (raises UsageError)."""
    app = app_file()
    if not app.is_file():
        msg = f"{app}: the app's entry script is missing; reinstall orderdoc"
        raise UsageError(msg)
    env = dict(os.environ)
    env["STREAMLIT_BROWSER_GATHER_USAGE_STATS"] = "false"
    argv = [
        sys.executable, "-m", "streamlit", "run", str(app),
        f"--server.port={args.port}", f"--server.address={args.host}", *STREAMLIT_FLAGS,
    ]  # fmt: skip
    if args.rules:
        missing = [str(p) for p in args.rules if not p.exists()]
        if missing:
            msg = f"--rules: {missing[0]}: no such file or folder"
            raise UsageError(msg)
        env["ORDERDOC_RULES"] = os.pathsep.join(str(p.resolve()) for p in args.rules)
    watch = getattr(args, "watch", None)
    if watch is not None:
        from diagnostics.appdata.watching import agg_dir

        if args.agg_dir is not None:
            msg = (
                "--watch STATE_DIR and AGG_DIR: give one of them (the state folder has the tables)"
            )
            raise UsageError(msg)
        agg_dir(watch)  # InputError: one line, exit 2
        argv += ["--", "--watch-state", str(watch.resolve())]
    elif args.agg_dir is not None:
        from diagnostics.appdata.store import open_aggregate

        agg = open_aggregate(args.agg_dir)  # InputError: one line, exit 2
        argv += ["--", "--agg-dir", str(agg.path)]
    return argv, env


def run(args: argparse.Namespace) -> int:
    """Serve the app until interrupted.

    On POSIX the process becomes streamlit (``exec``), so a signal sent to ``orderdoc app``
    stops the server itself; elsewhere streamlit runs as a child and its exit code is returned.
    """
    argv, env = command(args)
    host = "127.0.0.1" if args.host in ("0.0.0.0", "") else args.host
    sys.stdout.write(f"orderdoc app: http://{host}:{args.port}/  (Ctrl+C to stop)\n")
    sys.stdout.flush()
    sys.stderr.flush()
    if os.name == "posix":
        os.execve(argv[0], argv, env)
    try:
        return subprocess.call(argv, env=env)
    except KeyboardInterrupt:
        return 0
