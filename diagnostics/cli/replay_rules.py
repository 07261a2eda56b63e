"""``orderdoc replay EVENTS --rules flink|spark --window D ...``: replay a capture under
Flink's or Spark's rules and write DIR/outcomes.parquet (the same columns as ASA's replay)."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from typing import NamedTuple

import polars as pl

from diagnostics.captures.reader import Capture
from diagnostics.cli.capture_args import capture_from_args
from diagnostics.cli.diagnostics_args import given_flags as given_diagnostics_flags
from diagnostics.cli.engine_args import chosen_rules, rules_from_args
from diagnostics.cli.job_args import resolve_policy
from diagnostics.cli.values import out_folder
from diagnostics.engine.columns import EventColumns
from diagnostics.engine.replay import declared_partitions
from diagnostics.engines.policy import EngineRules, SparkRules
from diagnostics.engines.replay import EngineReplayResult, replay_rules
from diagnostics.engines.summary import format_rules_summary, summarize_rules
from diagnostics.errors import InputError, Setting, UsageError
from diagnostics.instrument.run import atomic_write


def check_flags(args: argparse.Namespace) -> None:
    """Reject the replay flags that only ASA's replay uses."""
    name = chosen_rules(args).value
    stray = given_diagnostics_flags(args)
    if getattr(args, "spark", False):
        stray.append("--spark")
    if stray:
        msg = (
            f"{', '.join(stray)}: only for ASA's rules (--rules {name} writes outcomes.parquet "
            "and the summary); remove them or use --rules asa"
        )
        raise UsageError(msg)


class RulesInput(NamedTuple):
    """A capture read for a replay under an engine's rules, and the rules the flags give."""

    events: pl.DataFrame
    rules: EngineRules
    partitions: tuple[int, ...] | None
    columns: EventColumns
    capture: Capture


def read_for_rules(args: argparse.Namespace) -> RulesInput:
    """Read the capture and the rules the flags (and ``--job-definition``) describe."""
    defaults = {"over": (), "partition_by": False, "no_early_policy": False}
    given = vars(args)
    resolved = resolve_policy(argparse.Namespace(**{**defaults, **given}))
    capture = capture_from_args(args)
    events, policy = capture.apply(resolved.policy, named_by=resolved.named_by)
    rules = rules_from_args(args, policy.timestamp_by)
    if isinstance(rules, SparkRules) and rules.input_column is not None:
        rules = replace(rules, input_column=capture.resolve(rules.input_column))
    partitions = declared_partitions(resolved.partitions) if resolved.partitions else None
    return RulesInput(events, rules, partitions, capture.columns, capture)


def run_rules_replay(args: argparse.Namespace) -> EngineReplayResult:
    """Read the capture and replay it under the rules the flags describe."""
    read = read_for_rules(args)
    try:
        return replay_rules(
            read.events, read.rules, partitions=read.partitions, columns=read.columns
        )
    except InputError as exc:
        msg = f"{args.events}: {exc}"
        raise InputError(msg, exc.setting) from exc


def run(args: argparse.Namespace) -> int:
    """Replay under Flink's or Spark's rules, write ``outcomes.parquet``, print the summary."""
    check_flags(args)
    out = out_folder(args.out, create=True)
    result = run_rules_replay(args)
    summary = summarize_rules(result)
    path = out / "outcomes.parquet"
    try:
        atomic_write(path, lambda p: result.outcomes.write_parquet(p, compression="snappy"))
    except OSError as exc:
        msg = f"output folder {out}: outcomes.parquet could not be written: {exc.strerror or exc}"
        raise UsageError(msg, Setting.OUTPUT) from exc
    if args.json:
        json.dump(summary, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(f"{format_rules_summary(summary)}\nwrote {path}\n")
    return 0
