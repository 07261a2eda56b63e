"""``orderdoc watch LOG_DIR... --state DIR``: aggregate a live log folder, alert, notify.

Every ``--interval`` (or once with ``--once``) the watcher picks up new log files and lines
appended to known ones, adds them to the tables under ``DIR/agg`` (the tables of
``orderdoc aggregate``), evaluates the alerting rules and sends what changed (firing,
resolved) to ``--webhook`` in the format of Alertmanager's ``POST /api/v2/alerts``. Its state
(``DIR/manifest.json``, ``DIR/checkpoint``, ``DIR/alerts/alerts.db``) survives restarts.
Runs on the embedded Spark, or on a cluster with ``--master`` or ``--remote`` like
``aggregate``.
Stop it with Ctrl-C. See docs/watch.md.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from diagnostics.cli.spark_args import add_target_arguments
from diagnostics.cli.values import out_folder, path_arg
from diagnostics.cli.watch_storage import add_arguments as add_storage_arguments
from diagnostics.durations import SECOND, DurationError, parse_duration
from diagnostics.errors import UsageError
from diagnostics.rules.webhook import DeliveryPolicy, check_url


def _interval(text: str) -> float:
    try:
        ns = parse_duration(text)
    except DurationError as exc:
        msg = f"{text!r} is not a duration (e.g. 30s, 1m, 5m)"
        raise argparse.ArgumentTypeError(msg) from exc
    if ns <= 0:
        msg = f"{text!r} must be more than 0"
        raise argparse.ArgumentTypeError(msg)
    return ns / SECOND


def _resend(text: str) -> float:
    """A ``--resend-every`` duration; ``0`` turns the re-posting off."""
    if text.strip() in ("0", "0s", "0m"):
        return 0.0
    return _interval(text)


#: Spark settings of a watcher's own session (a ``--conf`` of the same key wins): a process
#: that runs for weeks keeps what Spark keeps of every finished job, stage, task, SQL query
#: and streaming query for its status pages up to these counts (Spark's defaults, 1,000 jobs,
#: 1,000 queries and 100,000 tasks, are hours of ticks and hundreds of MB of heap), and
#: cleans up the shuffle files of finished passes every 5 minutes instead of 30
#: (docs/watch.md, "Running for weeks").
WATCH_CONF: tuple[tuple[str, str], ...] = (
    ("spark.ui.retainedJobs", "100"),
    ("spark.ui.retainedStages", "100"),
    ("spark.ui.retainedTasks", "10000"),
    ("spark.sql.ui.retainedExecutions", "50"),
    ("spark.sql.streaming.ui.retainedQueries", "10"),
    ("spark.sql.streaming.ui.retainedProgressUpdates", "10"),
    ("spark.sql.streaming.numRecentProgressUpdates", "10"),
    ("spark.cleaner.periodicGC.interval", "5min"),
)

#: ``--resend-every`` when the webhook is an Alertmanager (its URL ends in this) and the flag
#: is not given: Alertmanager resolves an alert by itself ``resolve_timeout`` (5 minutes by
#: default) after the last post, so a firing alert must be re-posted well before that.
ALERTMANAGER_PATH = "/api/v2/alerts"
ALERTMANAGER_RESEND_S = 60.0


def resend_period(webhook: str | None, given: float | None) -> float:
    """Seconds between re-posts of the firing alerts: the flag when given, else 1 minute for
    an Alertmanager URL (``.../api/v2/alerts``) and never for other receivers."""
    if given is not None:
        return given
    if webhook and webhook.rstrip("/").endswith(ALERTMANAGER_PATH):
        return ALERTMANAGER_RESEND_S
    return 0.0


def _port(text: str) -> int:
    try:
        port = int(text)
    except ValueError as exc:
        msg = f"{text!r} is not a port number"
        raise argparse.ArgumentTypeError(msg) from exc
    if not 0 <= port <= 65535:
        msg = f"{text!r} is not a port number (0-65535)"
        raise argparse.ArgumentTypeError(msg)
    return port


def register(subparsers: argparse._SubParsersAction) -> None:
    """Adds the ``watch`` sub-command."""
    parser = subparsers.add_parser(
        "watch",
        help="follow live log folders: aggregate, evaluate the rules, notify (Spark)",
        description=__doc__,
    )
    parser.add_argument(
        "folders",
        nargs="+",
        metavar="LOG_DIR",
        help="folder of ASA logs, or a storage URL (az://insights-logs-execution/...: its "
        "append blobs followed; docs/storage.md)",
    )
    parser.add_argument(
        "--state",
        required=True,
        type=path_arg,
        metavar="DIR",
        help="state folder (tables in DIR/agg, alerts in DIR/alerts)",
    )
    parser.add_argument(
        "--rules",
        action="append",
        metavar="DIR",
        help="rule file or folder (repeatable; default: $ORDERDOC_RULES, else the packaged pack)",
    )
    parser.add_argument(
        "--webhook",
        metavar="URL",
        help="POST alerts here (Alertmanager: http://HOST:9093/api/v2/alerts)",
    )
    parser.add_argument(
        "--webhook-timeout",
        type=float,
        default=5.0,
        metavar="SECONDS",
        help="timeout of one webhook attempt (default 5)",
    )
    parser.add_argument(
        "--webhook-attempts",
        type=int,
        default=3,
        metavar="N",
        help="webhook attempts per pass, with back-off (default 3)",
    )
    parser.add_argument(
        "--resend-every",
        type=_resend,
        default=None,
        metavar="DURATION",
        help="re-post firing alerts this often so that Alertmanager keeps them firing "
        "(as Prometheus does; default 1m when the webhook URL ends in /api/v2/alerts, "
        "else never; 0: never)",
    )
    parser.add_argument(
        "--interval",
        type=_interval,
        default=60.0,
        metavar="DURATION",
        help="time between passes (default 1m)",
    )
    parser.add_argument(
        "--once", action="store_true", help="one pass over what is there now, then exit"
    )
    parser.add_argument(
        "--evaluate-at",
        choices=["now", "data-end"],
        default="now",
        help="evaluate the rules at the clock (default) or at the end of the "
        "data (for logs replayed from the past)",
    )
    parser.add_argument(
        "--metrics-port",
        type=_port,
        metavar="N",
        help="serve Prometheus metrics on this port (/metrics)",
    )
    parser.add_argument(
        "--metrics-host",
        default="127.0.0.1",
        metavar="HOST",
        help="address of the metrics endpoint (default 127.0.0.1)",
    )
    add_storage_arguments(parser)  # --since (docs/storage.md)
    add_target_arguments(
        parser,
        remote_help="Spark Connect URL sc://HOST:PORT (the server must see LOG_DIR and "
        "--state at the same paths; see docs/watch.md)",
    )
    parser.set_defaults(func=run)  # fmt: skip


def _say(message: str) -> None:
    stamp = datetime.now(UTC).strftime("%H:%M:%S")
    sys.stderr.write(f"[{stamp}] {message}\n")
    sys.stderr.flush()


def _clock() -> datetime:
    return datetime.now(UTC)


def run(args: argparse.Namespace, *, clock: Callable[[], datetime] = _clock) -> int:
    """Validates the flags, starts Spark and watches until interrupted (or once)."""
    from diagnostics.resources import default_rule_paths
    from diagnostics.rules.loader import load_rules
    from diagnostics.spark.session import SparkTarget, check_reachable, java_problem

    if args.webhook:
        try:
            check_url(args.webhook)
        except UsageError as exc:  # the flag was given: no "(use --webhook)" hint
            msg = f"--webhook: {exc}"
            raise UsageError(msg) from None
    if not args.webhook_timeout > 0:
        msg = f"--webhook-timeout {args.webhook_timeout} must be more than 0 seconds"
        raise UsageError(msg)
    if args.webhook_attempts < 1:
        msg = f"--webhook-attempts {args.webhook_attempts} must be at least 1"
        raise UsageError(msg)
    rules = load_rules(args.rules or default_rule_paths())
    own = () if args.remote else WATCH_CONF  # a Connect server's settings are its own
    target = SparkTarget(
        master=args.master,
        remote=args.remote,
        app_name="orderdoc-watch",
        conf=own + tuple(args.conf),
    )
    from diagnostics.cli.watch_storage import follow_urls, sync_all, syncing, with_urls
    from diagnostics.watch.runner import EvaluateAt, WatchConfig

    mirrors, folders = follow_urls(args.folders, args.state, args.since)
    say = with_urls(_say) if mirrors else _say
    config = WatchConfig(
        folders=tuple(folders),
        state=args.state,
        interval_s=args.interval,
        once=args.once,
        webhook=args.webhook,
        delivery=DeliveryPolicy(timeout=args.webhook_timeout, attempts=args.webhook_attempts),
        evaluate_at=EvaluateAt(args.evaluate_at),
        resend_s=resend_period(args.webhook, args.resend_every),
    )
    _check_state(args.state)
    sync_all(mirrors, say, first=True)  # bad credentials, no such container: exit 2 here
    metrics = None
    if args.metrics_port is not None:
        from diagnostics.watch.metrics import WatchMetrics

        metrics = WatchMetrics()
    if target.remote is None:
        problem = java_problem()
        if problem is not None:
            raise UsageError(problem)
    else:  # before anything is printed: a server that is not there is one line
        check_reachable(target.remote)
    from diagnostics.spark.session import build_session, session_active
    from diagnostics.watch.runner import Watcher

    owned = target.remote is None and not session_active()
    if args.resend_every is None and config.resend_s:
        _say(
            f"re-posting firing alerts every {config.resend_s:g}s so that Alertmanager keeps "
            "them firing (--resend-every to change, 0 to turn off)"
        )
    _say(f"starting {target.description}")
    spark = build_session(target)
    stop = _Stop()
    try:
        on_tick = _metrics_updater(metrics, clock) if metrics else (lambda _r, _w: None)
        watcher = Watcher(spark, config, rules, clock=clock, say=say, on_tick=on_tick)
        if metrics is not None:
            port = metrics.serve(args.metrics_port, args.metrics_host)
            _say(f"metrics on http://{args.metrics_host}:{port}/metrics")
        _say(f"watching {', '.join(args.folders)}; state in {args.state}")
        with stop:
            watcher.run(
                syncing(stop.sleep, mirrors, say, lambda: stop.requested), lambda: stop.requested
            )
    finally:
        if metrics is not None:
            metrics.stop()
        if owned:
            spark.stop()
    if stop.requested:
        _say("stopped (Ctrl-C)")
        return 130
    return 0


class _Stop:
    """Ctrl-C while watching: the first lets the tick under way finish (its Spark jobs are not
    cancelled half-way, and nothing is printed from the signal handler), then the watcher
    stops; a second one stops at once. Replaces PySpark's handler, which cancels the jobs
    from inside the handler and prints the gateway's tracebacks."""

    def __init__(self) -> None:
        self.requested = False
        self._previous: Any = None

    def __enter__(self) -> _Stop:
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGINT, self._handle)
        return self

    def __exit__(self, *_exc: object) -> None:
        if self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)

    def _handle(self, _signum: int, _frame: object) -> None:
        if self.requested:
            raise KeyboardInterrupt
        self.requested = True

    def sleep(self, seconds: float) -> None:
        """Sleep ``seconds``, or less when a stop is requested."""
        end = time.monotonic() + seconds
        while not self.requested and (left := end - time.monotonic()) > 0:
            time.sleep(min(left, 0.2))


def _check_state(state: Path) -> None:
    """A corrupt state folder is reported before Spark starts."""
    from diagnostics.watch.alertstate import AlertStore
    from diagnostics.watch.compaction import pending
    from diagnostics.watch.jobs import JobStore
    from diagnostics.watch.manifest import StateFiles

    if not state.exists():  # a new state folder: it must be possible to make it
        out_folder(state, flag="--state")
    if not state.is_dir():
        return
    files = StateFiles(state)
    files.pending_plan(files.manifest())
    pending(state)
    JobStore(state / "jobs").load()
    if (state / "alerts").is_dir():
        AlertStore(state / "alerts").close()


def _metrics_updater(metrics: Any, clock: Callable[[], datetime]) -> Callable[[Any, Any], None]:
    from diagnostics.watch.alertstate import AlertStore

    def update(report: Any, watcher: Any) -> None:
        manifest = watcher.files.manifest()
        with AlertStore(watcher.root / "alerts") as store:
            history = store.history()
        metrics.update(
            watcher.agg,
            history,
            now=clock(),
            passes=manifest.passes,
            files=manifest.files,
            folders=watcher.config.folders,
            rules=watcher.rules,
            evaluated_at=report.evaluated_at,
            tick_seconds=report.seconds,
        )

    return update
