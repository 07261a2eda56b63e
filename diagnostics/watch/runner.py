"""The watch loop: discover files with Structured Streaming, run passes, evaluate, notify.

Each tick:

1. a Structured Streaming query over the log folders (``binaryFile`` source, recursive, only
   the ``path`` column; checkpoint in ``STATE/checkpoint``) runs with ``Trigger.AvailableNow``:
   every file not seen before reaches ``foreachBatch``, which runs a pass for them (plan,
   parse in Spark, add to the tables, commit the manifest: :mod:`diagnostics.watch.passes`);
2. one more pass picks up lines appended to files already known (the file source never
   looks at a file twice, and runs no batch when no new file came);
3. the rules are evaluated on ``STATE/agg`` and the alert store updated
   (:mod:`diagnostics.watch.alertstate`); unsent notifications go to ``--webhook``;
4. the Prometheus gauges are updated (:mod:`diagnostics.watch.metrics`).

``--once`` is one tick; otherwise ticks repeat every ``--interval``. The query is started per
tick (AvailableNow) rather than kept running with a processing-time trigger because step 2 must
run on every tick, new files or not. Time comes from the injected ``clock``.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from enum import StrEnum
from pathlib import Path
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import (
    BinaryType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from diagnostics.aggregates import present_tables
from diagnostics.errors import InputError, OrderdocError, Setting, UsageError
from diagnostics.rules.evaluate import evaluate_detailed
from diagnostics.rules.model import AlertState, RuleSet, iso
from diagnostics.rules.webhook import DeliveryError, DeliveryPolicy, post_json
from diagnostics.spark.session import is_connect, settings_set
from diagnostics.watch import compaction, passes
from diagnostics.watch.alertstate import AlertStore
from diagnostics.watch.discovery import (
    checkpoint_problem,
    describe,
    list_logs,
    local_path,
    read_discovered,
    record_batch,
)
from diagnostics.watch.manifest import ReadMode, StateFiles, is_empty, plan_pass
from diagnostics.words import noun, plural

#: Spark's adaptive query execution, which streaming queries do not use.
ADAPTIVE = "spark.sql.adaptive.enabled"
#: What the streaming checkpoint keeps. The watcher never goes back to an old batch (the
#: manifest knows what was read), so: the last 5 batches (Spark keeps 100, six files each
#: with their checksums), and the file source's log compacted every 5 batches with the
#: files before the last compaction deleted after a minute (Spark: 10 batches, 10 minutes),
#: so that the checkpoint holds about 50 files however long the watcher runs.
CHECKPOINT_CONF = {
    "spark.sql.streaming.minBatchesToRetain": "5",
    "spark.sql.streaming.fileSource.log.compactInterval": "5",
    "spark.sql.streaming.fileSource.log.cleanupDelay": "1m",
}

#: How long the file source remembers files (it never forgets the ones it handed over, but
#: ignores files older than this relative to the newest; ours must all be seen).
MAX_FILE_AGE = "36500d"
#: The ``binaryFile`` source's fixed schema (a streaming source needs it spelled out); only
#: ``path`` is selected, so file contents are never read by the source.
BINARY_FILE = StructType(
    [
        StructField("path", StringType(), False),
        StructField("modificationTime", TimestampType(), False),
        StructField("length", LongType(), False),
        StructField("content", BinaryType(), True),
    ]
)


#: The least time ahead a refreshed firing alert's ``endsAt`` is set (Alertmanager's default
#: ``resolve_timeout``).
MIN_REFRESH_AHEAD_S = 300.0


class EvaluateAt(StrEnum):
    """The instant the rules are evaluated at: the clock, or the end of the data (replays)."""

    NOW = "now"
    DATA_END = "data-end"


@dataclass(frozen=True)
class WatchConfig:
    """The validated settings of one watcher."""

    folders: tuple[Path, ...]
    state: Path
    interval_s: float = 60.0
    once: bool = False
    webhook: str | None = None
    delivery: DeliveryPolicy = field(default_factory=DeliveryPolicy)
    evaluate_at: EvaluateAt = EvaluateAt.NOW
    resend_s: float = 0.0  # re-post firing alerts this often (0: never)

    def __post_init__(self) -> None:
        if self.interval_s <= 0:
            msg = f"watch interval: {self.interval_s}s must be more than 0"
            raise UsageError(msg, Setting.WATCH_INTERVAL)
        if self.state.exists() and not self.state.is_dir():
            msg = f"state folder {str(self.state)!r} is a file, not a folder"
            raise UsageError(msg, Setting.WATCH_STATE)
        state = self.state.resolve()
        for folder in self.folders:
            if not folder.is_dir():
                msg = f"log folder {str(folder)!r}: no such folder"
                raise UsageError(msg)
            if not os.access(folder, os.R_OK | os.X_OK):
                msg = f"log folder {str(folder)!r}: not readable (permission denied)"
                raise UsageError(msg)
            if state == folder.resolve() or folder.resolve() in state.parents:
                msg = f"state folder {str(self.state)!r} is inside the log folder {str(folder)!r}: put it elsewhere"
                raise UsageError(msg, Setting.WATCH_STATE)


@dataclass(frozen=True)
class TickReport:
    """What one tick did."""

    passes: tuple[int, ...]
    records: int
    evaluated_at: datetime | None
    firing: int
    pending: int
    notified: int
    problems: tuple[str, ...]
    seconds: float = 0.0  # how long the tick took


class Watcher:
    """One watcher over a state folder; ``tick()`` does steps 1-4 of the module docstring."""

    def __init__(
        self,
        spark: SparkSession,
        config: WatchConfig,
        rules: RuleSet,
        *,
        clock: Callable[[], datetime],
        say: Callable[[str], None] = lambda _m: None,
        hook: Callable[[str], None] = lambda _step: None,
        on_tick: Callable[[TickReport, Watcher], None] = lambda _r, _w: None,
        timer: Callable[[], float] = time.monotonic,
    ) -> None:
        self.spark = spark
        self.config = config
        self.rules = rules
        self.clock = clock
        self.say = say
        self.hook = hook
        self.on_tick = on_tick
        self.timer = timer
        self.root = config.state
        self.files = StateFiles(self.root)
        self.agg = self.root / "agg"
        self.discovered = self.root / "discovered"
        self.checkpoint = self.root / "checkpoint"
        self._records = 0
        self._passes: list[int] = []
        self._resent: datetime | None = None
        self._warnings: dict[str, None] = {}  # this tick's warnings, each once, in order
        self._listed: set[str] = set()
        self._failed: BaseException | None = None  # a pass that failed in foreachBatch
        self.files.manifest()  # a corrupt state folder fails here, before any work
        compaction.finish(self.root)  # one a crash interrupted
        with AlertStore(self.root / "alerts"):
            pass
        problem = checkpoint_problem(self.checkpoint)
        if problem is not None:  # safe to rebuild: the manifest knows every file read
            shutil.rmtree(self.checkpoint, ignore_errors=True)
            self.say(
                f"warning: {problem}; rebuilt it (the streaming source lists the folders "
                "again; files already read are not read twice)"
            )

    # -- passes ---------------------------------------------------------------------------
    def run_pass(self, discovered: list[str]) -> None:
        """Finish an interrupted pass if there is one, then run one for ``discovered`` and the
        growth of known files (nothing when nothing changed)."""
        compaction.finish(self.root)  # one that failed half-way on an earlier tick
        manifest = self.files.manifest()
        pending = self.files.pending_plan(manifest)
        if pending is not None:
            self.say(f"pass {pending.number}: redoing the interrupted pass")
            self._execute(pending)
            manifest = self.files.manifest()
        plan = plan_pass(manifest, [*discovered, *manifest.waiting])
        for problem in plan.unreadable:
            self._warn(f"{problem} (tried again next pass)")
        if is_empty(plan, manifest):
            return
        self.files.save_plan(plan)
        self.hook("planned")
        self._execute(plan)

    def _execute(self, plan: Any) -> None:
        records = passes.run_plan(self.spark, plan, self.root)
        self.hook("written")
        passes.derive(self.spark, self.agg, plan.after)
        self.hook("derived")
        self.files.commit(plan)
        self.hook("committed")
        self._records += records
        self._passes.append(plan.number)
        self.say(
            f"pass {plan.number}: {len(plan.reads)} read(s), {records} record(s), "
            f"{len(plan.after.files)} log file(s) known"
        )
        if compaction.due(self.root):
            self._compact(plan.number)

    def _compact(self, through: int) -> None:
        """Compact the passes' files up to ``through`` (committed); a failure is a warning
        and the compaction is finished before the next pass."""
        try:
            work = compaction.compact(self.root, through, self.hook)
        except OrderdocError:
            raise
        except Exception as exc:
            self._warn(f"compacting the state failed: {describe(exc)} (finished next pass)")
            return
        folders = plural(len(work.merges), "table folder")
        self.say(f"pass {through}: compacted the files of the passes so far ({folders})")

    def _warn(self, message: str) -> None:
        self._warnings.setdefault(message, None)

    def _fresh(self) -> set[str]:
        """Files of this tick's listing that the manifest does not know yet. Known metrics and
        skipped files are not classified again: a metrics file's changes are found by its
        size and modification time when a pass derives the tables (``passes.cache_metrics``)."""
        manifest = self.files.manifest()
        known = {state.path for state in manifest.files}
        return self._listed - known - set(manifest.metrics) - set(manifest.skipped)

    def _batch(self, frame: DataFrame, _batch_id: int) -> None:
        """``foreachBatch``: a pass for the batch's files that the folders' listing has (the
        rule of ``orderdoc aggregate``), and the listing's other new files (which the file
        source does not see, e.g. under ``_old/``). A failure is kept for :meth:`tick` to
        report and raised, so that the query does not commit the batch: it is handed over
        again on the next tick."""
        found = {local_path(row["path"]) for row in frame.collect()}
        try:
            self.run_pass(sorted((found & self._listed) | self._fresh()))
        except BaseException as exc:
            self._failed = exc
            raise

    def discover(self) -> None:
        """Step 1: the AvailableNow streaming query over the folders.

        On a classic session ``foreachBatch`` runs in this process and runs the pass. Over
        Spark Connect it runs in a Python process of the server, which cannot reach this
        watcher: there it only records the batch's file names in ``STATE/discovered`` (see
        :func:`record_batch`), and :meth:`tick` runs the pass for them after the query.
        """
        frames = [
            self.spark.readStream.format("binaryFile")
            .schema(BINARY_FILE)
            .option("recursiveFileLookup", "true")
            .option("maxFileAge", MAX_FILE_AGE)
            .load(str(folder.resolve()))
            .select("path")
            for folder in self.config.folders
        ]
        stream = frames[0]
        for other in frames[1:]:
            stream = stream.unionByName(other)
        remote = is_connect(self.spark)
        sink = record_batch(str(self.discovered)) if remote else self._batch
        writer = (
            stream.writeStream.foreachBatch(sink)
            .option("checkpointLocation", str(self.checkpoint))
            .trigger(availableNow=True)
        )
        # Streaming queries run without adaptive execution anyway; started with it on, Spark
        # warns so on the console at every tick. Off while the query starts only: the passes
        # keep the session's setting (and so for the batches the checkpoint keeps).
        with settings_set(self.spark, {ADAPTIVE: "false", **CHECKPOINT_CONF}):
            query = writer.start()
        query.awaitTermination()

    def list_folders(self) -> list[str]:
        """The files under the log folders by the rule of ``orderdoc aggregate`` (see
        :func:`list_logs`); a folder that cannot be listed is a warning."""
        found, problems = list_logs(self.config.folders)
        for problem in problems:
            self._warn(f"{problem} (tried again next pass)")
        return found

    # -- alerts ---------------------------------------------------------------------------
    def evaluate(self, problems: list[str]) -> tuple[datetime | None, int, int, int]:
        """Step 3: evaluation time, firing and pending counts, notifications delivered."""
        if not present_tables(self.agg):
            return None, 0, 0, 0
        now = self.clock() if self.config.evaluate_at is EvaluateAt.NOW else None
        try:
            result = evaluate_detailed(self.rules, self.agg, now=now)
        except InputError as exc:
            if now is not None or exc.setting is not Setting.EVALUATION_TIME:
                raise
            # --evaluate-at data-end before any record with a time was read (all of them
            # quarantined so far): nothing to evaluate at yet; the next pass may bring one
            problems.append(
                "rules not evaluated: no record read so far has a time, so the data's end "
                "is not known yet (--evaluate-at data-end)"
            )
            return None, 0, 0, 0
        with AlertStore(self.root / "alerts") as store:
            added = store.apply(result.alerts, result.now)
            self.hook("recorded")
            for note in added:
                labels = ",".join(f"{k}={v}" for k, v in sorted(note.body["labels"].items()))
                self.say(f"alert {note.status.value}: {{{labels}}}")
            sent = self._notify(store, problems)
            firing = sum(e.state is AlertState.FIRING for e in store.history())
            pending = sum(e.state is AlertState.PENDING for e in store.history())
        return result.now, firing, pending, sent

    def _notify(self, store: AlertStore, problems: list[str]) -> int:
        url = self.config.webhook
        if url is None:  # told on stderr above; nothing else to deliver to
            store.mark_sent([n.id for n in store.notifications(unsent_only=True)], self.clock())
            return 0

        def send(body: list[dict[str, Any]]) -> None:
            post_json(url, body, policy=self.config.delivery)
            self.hook("sent")

        try:
            sent = store.send_unsent(send, self.clock())
            self._refresh(store, url)
        except DeliveryError as exc:
            problems.append(f"{exc} (kept, sent again next pass)")
            return 0
        return sent

    def _refresh(self, store: AlertStore, url: str) -> None:
        """Re-post the firing alerts every ``resend_s`` with ``endsAt`` four periods ahead
        (at least :data:`MIN_REFRESH_AHEAD_S`: a tick with a Spark pass can take longer
        than the interval), so that Alertmanager keeps them firing (Prometheus' way)."""
        period = self.config.resend_s
        now = self.clock()
        if period <= 0 or (
            self._resent is not None and (now - self._resent).total_seconds() < period
        ):
            return
        ahead = max(4 * max(period, self.config.interval_s), MIN_REFRESH_AHEAD_S)
        alerts = store.firing_alerts(now + timedelta(seconds=ahead))
        if alerts:
            post_json(url, alerts, policy=self.config.delivery)
            self.hook("refreshed")
        self._resent = now

    # -- the loop -------------------------------------------------------------------------
    def tick(self) -> TickReport:
        """Steps 1-4 once; problems that are safe to continue after are reported, not raised.

        A Spark job that fails (the file source's listing, a pass, its derived tables) is a
        one-line warning naming the cause: the pass stays planned (``plan.json``) and is
        redone on the next tick, and the rules are still evaluated on the tables as they are.
        """
        started = self.timer()
        self._records, self._passes = 0, []
        self._warnings, self._failed = {}, None
        problems: list[str] = []
        self._listed = set(self.list_folders())
        failed = False
        try:
            self.discover()
        except Exception as exc:
            cause = self._failed or exc
            if isinstance(cause, OrderdocError):
                raise cause from None
            if self._failed is not None:
                failed = True
                problems.append(f"pass failed: {describe(cause)} (retried next tick)")
            elif str(self.checkpoint) in str(exc):  # a checkpoint Spark cannot use
                shutil.rmtree(self.checkpoint, ignore_errors=True)
                problems.append(
                    f"the streaming query failed on its checkpoint: {describe(exc)} (rebuilt "
                    "on the next tick; files already read are not read twice)"
                )
            else:
                problems.append(
                    f"the file source could not list the folders: {describe(exc)} "
                    "(the files found by listing them are read; retried next tick)"
                )
        recorded = sorted(self.discovered.glob("*.json")) if self.discovered.is_dir() else []
        if not failed:
            try:
                batches = [p for p in read_discovered(recorded) if p in self._listed]
                self.run_pass([*batches, *sorted(self._fresh())])
            except OrderdocError:
                raise
            except Exception as exc:
                problems.append(f"pass failed: {describe(exc)} (retried next tick)")
            else:  # the pass over them is committed: their files are in the manifest
                for path in recorded:
                    path.unlink()
        evaluated, firing, pending, sent = self.evaluate(problems)
        warnings = [*self._warnings, *problems]
        for warning in warnings:
            self.say(f"warning: {warning}")
        report = TickReport(
            tuple(self._passes),
            self._records,
            evaluated,
            firing,
            pending,
            sent,
            tuple(warnings),
            self.timer() - started,
        )
        self.on_tick(report, self)
        if evaluated is not None:
            self.say(
                f"rules evaluated at {iso(evaluated)}: {firing} firing, {pending} pending, "
                f"{sent} notification(s) delivered"
            )
        return report

    def unfinished_lines(self) -> list[str]:
        """A note for each followed file that ends in an incomplete line: a pass reads only
        complete lines, so with ``--once`` those bytes are left for a later run."""
        return [
            f"{state.path}: its last {plural(state.size - state.offset, 'byte')} "
            f"{noun(state.size - state.offset, 'is', 'are')} not a complete line yet; a later pass reads them once the line is complete (`orderdoc "
            "aggregate` reads the file as it is and quarantines an unfinished line)"
            for state in self.files.manifest().files
            if state.mode is ReadMode.LINES and state.size > state.offset
        ]

    def run(
        self, sleep: Callable[[float], None], stopped: Callable[[], bool] = lambda: False
    ) -> None:
        """Tick once (``--once``) or, ``interval`` apart, until ``stopped()`` (checked after
        each tick and each sleep)."""
        while True:
            self.tick()
            if self.config.once:
                for note in self.unfinished_lines():
                    self.say(note)
                return
            if stopped():
                return
            sleep(self.config.interval_s)
            if stopped():
                return
