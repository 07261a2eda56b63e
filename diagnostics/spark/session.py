"""Building the Spark session from a Spark Connect URL, a master URL or the embedded default,
and running the aggregation job on it (:func:`aggregate_on`).

Precedence: a Spark Connect URL ``sc://host:port`` > a master URL > running under
``spark-submit`` (its master is kept) > :data:`DEFAULT_MASTER`. The job code never names a
master; only this module knows the default.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import socket
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from diagnostics.errors import Setting, UsageError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from diagnostics.logs.inputs import InputFiles
    from diagnostics.spark.job import AggregateResult

DEFAULT_MASTER = "local[*]"
MIN_JAVA = 17

#: Settings every run uses: UTC session time, Parquet timestamps as microseconds, small Arrow
#: batches (a row of the file listing is a whole file), and no distributed listing job for
#: the input paths (the driver has already listed them: each path is one file).
BASE_CONF: tuple[tuple[str, str], ...] = (
    ("spark.sql.session.timeZone", "UTC"),
    ("spark.sql.parquet.outputTimestampType", "TIMESTAMP_MICROS"),
    ("spark.sql.execution.arrow.maxRecordsPerBatch", "16"),
    ("spark.sql.sources.partitionOverwriteMode", "static"),
    ("spark.sql.sources.parallelPartitionDiscovery.threshold", "1000000"),
)
_MASTER = re.compile(
    r"^(local(\[(\*|\d+)(,\d+)?\])?|spark://.+|yarn|k8s://.+|local-cluster\[.+\])$"
)


@dataclass(frozen=True)
class SparkTarget:
    """Where the job runs. Invariant: at most one of ``master`` and ``remote`` is set."""

    master: str | None = None
    remote: str | None = None
    app_name: str = "orderdoc-aggregate"
    conf: tuple[tuple[str, str], ...] = field(default=())

    def __post_init__(self) -> None:
        if self.master and self.remote:
            msg = "a Spark master and a Spark Connect URL: give one of them, not both"
            raise UsageError(msg, Setting.SPARK_REMOTE)
        if self.remote is not None and not self.remote.startswith("sc://"):
            msg = f"Spark Connect URL {self.remote!r} is not of the form sc://host:port"
            raise UsageError(msg, Setting.SPARK_REMOTE)
        if self.master is not None and not _MASTER.match(self.master):
            msg = (
                f"Spark master {self.master!r} is not a Spark master URL "
                "(local[N], spark://host:port, yarn, k8s://...)"
            )
            raise UsageError(msg, Setting.SPARK_MASTER)

    @property
    def description(self) -> str:
        """A human-readable name of the target, for progress output."""
        if self.remote:
            return f"Spark Connect {self.remote}"
        if self.master:
            return f"master {self.master}"
        if under_spark_submit():
            return "spark-submit's master"
        return f"embedded Spark {DEFAULT_MASTER}"


def under_spark_submit() -> bool:
    """True when this Python process was launched by ``spark-submit`` (a JVM already exists)."""
    return "PYSPARK_GATEWAY_PORT" in os.environ


def session_active() -> bool:
    """True if this process already has an active classic SparkSession (e.g. a test's)."""
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        return False
    return SparkSession.getActiveSession() is not None


def is_connect(spark: SparkSession) -> bool:
    """True for a Spark Connect session (``--remote``): no SparkContext on the client, and
    ``foreachBatch`` functions run in a Python process of the server."""
    return type(spark).__module__.startswith("pyspark.sql.connect")


def java_problem() -> str | None:
    """``None`` if a Java 17+ runtime is found, else one line saying what is wrong."""
    return _java_problem(os.environ.get("JAVA_HOME"), os.environ.get("PATH"))


def require_java(target: SparkTarget) -> None:
    """Raise :class:`UsageError` when ``target`` runs a local JVM and no Java 17+ is found."""
    if target.remote is None:
        problem = java_problem()
        if problem is not None:
            raise UsageError(problem, Setting.SPARK_REMOTE)


@functools.lru_cache(maxsize=8)
def _java_problem(home: str | None, _path: str | None) -> str | None:
    java = os.path.join(home, "bin", "java") if home else shutil.which("java")
    if not java or not os.path.exists(java):
        return (
            f"Java {MIN_JAVA}+ is needed to run the Spark job and none was found: install a "
            "JDK 17+ and put it on PATH or set JAVA_HOME, or run the job on a Spark Connect "
            "server (sc://host:port)"
        )
    try:
        done = subprocess.run(
            [java, "-version"], capture_output=True, text=True, timeout=30, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"Java at {java} does not run ({exc})"
    match = re.search(r'version "(\d+)(?:\.(\d+))?', done.stderr + done.stdout)
    if match is None:
        return f"Java at {java} did not report its version"
    major = int(match.group(1))
    if major == 1 and match.group(2):
        major = int(match.group(2))
    if major < MIN_JAVA:
        return f"Java {major} at {java} is too old: the Spark job needs Java {MIN_JAVA}+"
    return None


def check_reachable(remote: str, timeout: float = 10.0) -> None:
    """Raise :class:`UsageError` in one line when nothing accepts connections at the Spark
    Connect URL ``remote`` (the client would otherwise retry for minutes)."""
    address = remote.removeprefix("sc://").split("/", 1)[0]
    host, _sep, port = address.rpartition(":") if ":" in address else (address, "", "15002")
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout):
            return
    except (OSError, ValueError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        msg = f"Spark Connect server {remote!r} cannot be reached ({reason or 'timed out'})"
        raise UsageError(msg, Setting.SPARK_REMOTE) from exc


def build_session(target: SparkTarget) -> SparkSession:
    """A SparkSession for ``target`` with :data:`BASE_CONF` and ``target.conf`` applied."""
    try:
        from pyspark.sql import SparkSession
    except ImportError as exc:
        msg = "pyspark is not installed: pip install 'diagnostics[spark]'"
        raise UsageError(msg) from exc
    builder = SparkSession.builder.appName(target.app_name)
    if target.remote:
        check_reachable(target.remote)
        builder = builder.remote(target.remote)
    else:
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        if target.master:
            builder = builder.master(target.master)
        elif not under_spark_submit():
            builder = builder.master(DEFAULT_MASTER)
        # Spark's stage progress bar on an interactive terminal, quiet otherwise
        builder = builder.config("spark.ui.showConsoleProgress", str(sys.stderr.isatty()).lower())
    for key, value in BASE_CONF + target.conf:
        builder = builder.config(key, value)
    return builder.getOrCreate()


@contextmanager
def settings_set(spark: SparkSession, settings: dict[str, str]) -> Iterator[None]:
    """``settings`` set on ``spark``'s runtime configuration for the block; each restored
    afterwards (unset when it was not set), on an error too."""
    previous = {key: spark.conf.get(key, None) for key in settings}
    for key, value in settings.items():
        spark.conf.set(key, value)
    try:
        yield
    finally:
        for key, before in previous.items():
            if before is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, before)


@contextmanager
def spark_session(target: SparkTarget) -> Iterator[SparkSession]:
    """A session on ``target``; stopped at the end only when this started it (not a test's,
    spark-submit's or a Spark Connect server's)."""
    owned = target.remote is None and not session_active()
    spark = build_session(target)
    try:
        yield spark
    finally:
        if owned:
            spark.stop()


def aggregate_on(
    target: SparkTarget,
    files: InputFiles,
    out: Path,
    progress: Callable[[str], None] = lambda _message: None,
) -> AggregateResult:
    """Run the aggregation job on ``target`` (see :func:`diagnostics.spark.job.run_aggregate`).

    Embedded and master targets need Java 17+ (a :class:`UsageError` says what is missing). A
    session this call starts is stopped at the end; an active one (a test's, spark-submit's)
    or a Spark Connect one is left running.
    """
    require_java(target)
    progress(f"starting {target.description}")
    from diagnostics.spark.job import run_aggregate

    owned = target.remote is None and not session_active()
    spark = build_session(target)
    try:
        return run_aggregate(spark, files, out, progress=progress)
    finally:
        if owned:
            spark.stop()
