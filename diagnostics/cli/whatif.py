"""``orderdoc whatif CAPTURE --timestamp-by COL --late-arrival 0s,5s,1m --out-of-order 0s,5s``:
sweep ordering policies over a capture, mark the Pareto front and recommend one."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from diagnostics.cli.engine_args import add_rules_arguments, check_rules_flags, chosen_rules
from diagnostics.cli.impact_args import add_optimise_argument, add_query_argument
from diagnostics.cli.job_args import add_job_arguments, resolve_policy
from diagnostics.cli.policy_args import (
    add_column_arguments,
    add_policy_arguments,
    columns_arg,
    duration_arg,
    late_arg,
)
from diagnostics.cli.spark_args import (
    add_spark_arguments,
    check_spark_flags,
    progress_line,
    target_of,
)
from diagnostics.cli.values import out_folder
from diagnostics.errors import UsageError
from diagnostics.spark.session import spark_session

if TYPE_CHECKING:
    from diagnostics.whatif.evaluate import Evaluator

T = TypeVar("T")


def _listed(kind: Callable[[str], T]) -> Callable[[str], list[T]]:
    """argparse ``type`` for ``V[,V...]``, each value parsed by ``kind``."""

    def parse(text: str) -> list[T]:
        parts = [part.strip() for part in text.split(",")]
        if not any(parts):
            msg = f"'{text}' lists no value"
            raise argparse.ArgumentTypeError(msg)
        if not all(parts):  # "5s,,1m": a value left out by mistake is not skipped silently
            msg = f"'{text}' has an empty item; list values separated by single commas"
            raise argparse.ArgumentTypeError(msg)
        return [kind(part) for part in parts]

    return parse


def _on_off(text: str) -> bool:
    value = text.strip().lower()
    if value in ("on", "true", "yes", "1"):
        return True
    if value in ("off", "false", "no", "0"):
        return False
    msg = f"'{text}' is not on or off"
    raise argparse.ArgumentTypeError(msg)


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``whatif`` command."""
    parser = subparsers.add_parser(
        "whatif",
        help="sweep late/out-of-order tolerances, PARTITION BY and OVER over a capture",
        description=__doc__,
        conflict_handler="resolve",
    )
    parser.add_argument("events", metavar="CAPTURE", help="the event capture")
    parser.add_argument(
        "--out", metavar="DIR", help="folder for whatif.csv/.html/.png (absent: print only)"
    )
    add_column_arguments(parser)
    add_policy_arguments(parser, sweep=True)
    parser.add_argument(
        "--late-arrival",
        dest="late_values",
        type=_listed(late_arg),
        default=None,
        metavar="D,D,...",
        help="late tolerances to try (durations or unlimited); default: searched from the "
        "capture's own lateness (printed)",
    )
    parser.add_argument(
        "--out-of-order",
        dest="ooo_values",
        type=_listed(duration_arg),
        default=None,
        metavar="D,D,...",
        help="out-of-order tolerances to try; default: searched with the late tolerances",
    )
    parser.add_argument(
        "--partition-by",
        dest="partition_by_values",
        type=_listed(_on_off),
        default=None,
        metavar="on,off",
        help="PARTITION BY PartitionId values to try; default off,on",
    )
    parser.add_argument(
        "--over",
        dest="over_values",
        type=columns_arg,
        action="append",
        default=[],
        metavar="COL[,COL]",
        help="an OVER key set to try besides none (repeatable); default: the sender columns, "
        "chosen as explain chooses them (repeated values, each one's lateness consistent; "
        "never Capture's system columns; docs/explain.md)",
    )
    add_job_arguments(parser)
    add_query_argument(parser)
    add_optimise_argument(parser)
    parser.add_argument(
        "--try-drop",
        action="store_true",
        help="the search also tries Drop for events outside the tolerances (default: the "
        "job's own Adjust or Drop only)",
    )
    parser.add_argument("--no-png", action="store_true", help="do not render whatif.png")
    parser.add_argument(
        "--no-verify",
        action="store_true",
        help="skip replaying the recommended setting with the engine as a cross-check",
    )
    parser.add_argument("--json", action="store_true", help="print the table as JSON")
    add_spark_arguments(
        parser,
        "run the engine on the settings as Spark tasks (settings × partitions); the same "
        "table and recommendation as without --spark. The capture is read and the search "
        "guided here; the executors must see the system's temporary folder (or --out) at "
        "the same path",
    )
    add_rules_arguments(parser)
    parser.set_defaults(func=run)


def rule_of(args: argparse.Namespace):  # type: ignore[no-untyped-def]
    """The recommendation rule ``--optimise`` asks for."""
    from diagnostics.whatif.rule import DEFAULT_RULE, Optimise, Rule

    return Rule(optimise=Optimise.RESULTS) if args.optimise == "results" else DEFAULT_RULE


def _searched(args, events, base, over_values, columns, partitions, results, evaluator):  # type: ignore[no-untyped-def]
    """The recommender's search (no grid given): its measured rows and the grid it printed."""
    from diagnostics.engine.policy import Action
    from diagnostics.whatif.recommend import RecommendConfig, recommend
    from diagnostics.whatif.report import searched_grid

    config = RecommendConfig(
        over=tuple(over_values) if over_values else None,
        partition_by=tuple(dict.fromkeys(args.partition_by_values or (False, True))),
        rule=rule_of(args),
        results=results,
        actions=(base.action, *(a for a in Action if a is not base.action))
        if args.try_drop
        else None,
    )
    rec = recommend(
        events, base, columns=columns, partitions=partitions, config=config, evaluator=evaluator
    )
    return rec.as_sweep(), searched_grid(rec)


def _grid(args, events, base, over_values, columns, partitions, results, evaluator):  # type: ignore[no-untyped-def]
    """The user's grid (the job's own setting added), every combination replayed. Without
    --over the OVER key sets are the sender columns, as the search tries them
    (--help: the default); with any OVER key set, PARTITION BY is tried off and on."""
    from dataclasses import replace

    from diagnostics.durations import SECOND
    from diagnostics.whatif import sweep
    from diagnostics.whatif.recommend import RecommendConfig, default_over_sets

    if not over_values and not args.over_values:
        over_values = default_over_sets(events, base, columns, RecommendConfig().most_keys)

    late_values = list(args.late_values or [0, 5 * SECOND, 60 * SECOND, 300 * SECOND, None])
    ooo_values = list(args.ooo_values or [0, SECOND, 5 * SECOND, 10 * SECOND])
    late_values += [] if base.late_arrival_ns in late_values else [base.late_arrival_ns]
    ooo_values += [] if base.out_of_order_ns in ooo_values else [base.out_of_order_ns]
    over_sets = [(), *over_values, *([base.over] if base.over else [])]
    pby = list(args.partition_by_values or ([False, True] if len(over_sets) > 1 else [False]))
    pby += [] if base.partition_by in pby else [base.partition_by]
    return sweep(
        events,
        replace(base, over=()),
        late_values=late_values,
        ooo_values=ooo_values,
        partition_by_values=pby,
        over_values=over_sets,
        columns=columns,
        partitions=partitions,
        rule=rule_of(args),
        results=results,
        evaluator=evaluator,
    )


@contextmanager
def _evaluator(args: argparse.Namespace, out: Path | None) -> Iterator[Evaluator]:
    """Who runs the engine on the settings: this process, or Spark with ``--spark`` (the
    prepared capture written under ``out``, else the temporary folder, and removed)."""
    from diagnostics.whatif.evaluate import evaluate_locally

    if not args.spark:
        yield evaluate_locally
        return
    from diagnostics.spark.whatif import SparkEvaluator
    from diagnostics.words import plural

    say = progress_line()
    with spark_session(target_of(args, "orderdoc-whatif")) as spark:
        if out is not None:
            out.mkdir(parents=True, exist_ok=True)
        evaluator = SparkEvaluator(spark, out, progress=say)
        try:
            yield evaluator
        finally:
            evaluator.close()
            say(
                f"{plural(evaluator.batches, 'batch', 'batches')} of settings run as "
                f"{plural(evaluator.tasks, 'engine task')} on Spark"
            )


def run(args: argparse.Namespace) -> int:
    """Sweep, write the table and chart, print the table and the recommendation."""
    from dataclasses import replace

    from diagnostics.cli.capture_args import capture_from_args
    from diagnostics.engine.policy import Action, OrderingPolicy
    from diagnostics.engine.replay import declared_partitions
    from diagnostics.engines.policy import Rules
    from diagnostics.errors import InputError
    from diagnostics.whatif import write_outputs
    from diagnostics.whatif.report import format_table

    check_spark_flags(args, chosen_rules(args))
    check_rules_flags(args)
    if chosen_rules(args) is not Rules.ASA:
        from diagnostics.cli.engine_advice import run_whatif

        return run_whatif(args)
    resolved = resolve_policy(args) if args.job_definition else None
    timestamp_by = resolved.policy.timestamp_by if resolved else args.timestamp_by
    if not timestamp_by:
        msg = "--timestamp-by COL is required: without TIMESTAMP BY no tolerance applies"
        raise UsageError(msg)
    out = out_folder(args.out) if args.out is not None else None
    capture = capture_from_args(args)
    over_sets = list(args.over_values)
    partitions = args.partitions
    action = Action(getattr(args, "action", Action.ADJUST.value))
    job = OrderingPolicy(timestamp_by=timestamp_by, action=action)
    if resolved is not None:  # the job's own setting is always one of those tried
        sys.stderr.write(f"policy: {resolved.describe()}\n")
        job, partitions = resolved.policy, resolved.partitions
    job = replace(job, early_policy=not args.no_early_policy)
    declared = declared_partitions(partitions) if partitions else None
    searched = args.late_values is None and args.ooo_values is None
    every_key = tuple(dict.fromkeys(c for over in [*over_sets, job.over] for c in over))
    events, base = capture.apply(
        replace(job, over=every_key), named_by=resolved.named_by if resolved else None
    )
    base = replace(base, over=tuple(capture.resolve(c) for c in job.over))
    over_values = [tuple(capture.resolve(c) for c in over) for over in over_sets]
    from diagnostics.cli.impact_args import results_query

    results = results_query(args, resolved)
    try:
        with _evaluator(args, out) as evaluator:
            if searched:
                result, grid = _searched(
                    args, events, base, over_values, capture.columns, declared, results, evaluator
                )
            else:
                grid = None
                result = _grid(
                    args, events, base, over_values, capture.columns, declared, results, evaluator
                )
    except InputError as exc:
        msg = f"{args.events}: {exc}"
        raise InputError(msg) from exc
    written = write_outputs(result, out, png=not args.no_png) if out is not None else {}
    check = None
    if not args.no_verify:
        from diagnostics.whatif.verify import verify_recommended

        check = verify_recommended(
            result,
            events,
            columns=capture.columns,
            partitions=declared,
        )
    if args.json:
        sys.stdout.write(result.table.write_json() + "\n")
    else:
        lines = [*capture.describe(), *([grid] if grid else []), format_table(result)]
        sys.stdout.write("\n".join(lines) + "\n")
        if check is not None:
            verdict = "agrees" if check["agrees"] else "DISAGREES (please report)"
            sys.stdout.write(
                f"engine check: {check['policy']} replayed with the engine: adjusted "
                f"{check['adjusted']}, dropped {check['dropped']}, p95 delay "
                f"{check['delay_p95_s']} s: {verdict}\n"
            )
        for kind, path in written.items():
            sys.stdout.write(f"{kind}: {path}\n")
    return 0
