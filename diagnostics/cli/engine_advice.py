"""``orderdoc whatif CAPTURE --rules flink|spark ...`` and ``orderdoc explain --events CAPTURE
--rules flink|spark ...``: the engine's settings searched over the capture, and findings in
the engine's terms (docs/engines.md, "What-if and explain per engine")."""

from __future__ import annotations

import argparse
import json
import sys

from diagnostics.cli.engine_args import chosen_rules
from diagnostics.cli.replay_rules import RulesInput, read_for_rules
from diagnostics.errors import InputError, UsageError

#: whatif's ASA search flags (flag, attribute, value when not given).
WHATIF_ASA: tuple[tuple[str, str, object], ...] = (
    ("--late-arrival", "late_values", None),
    ("--out-of-order", "ooo_values", None),
    ("--partition-by", "partition_by_values", None),
    ("--over", "over_values", []),
    ("--try-drop", "try_drop", False),
    ("--query", "query", None),
    ("--optimise", "optimise", "events"),
    ("--spark", "spark", False),
    ("--master", "master", None),
    ("--remote", "remote", None),
    ("--conf", "conf", []),
)


def _refuse(args: argparse.Namespace, flags: list[str]) -> None:
    if flags:
        name = chosen_rules(args).value
        msg = (
            f"{', '.join(flags)}: ASA's settings or outputs, not {name}'s "
            "(docs/engines.md); remove them or use --rules asa"
        )
        raise UsageError(msg)


def _recommend(args: argparse.Namespace, read: RulesInput):  # type: ignore[no-untyped-def]
    from diagnostics.whatif.engines import recommend_engine

    try:
        return recommend_engine(
            read.events, read.rules, columns=read.columns, partitions=read.partitions
        )
    except InputError as exc:
        msg = f"{args.events}: {exc}"
        raise InputError(msg, exc.setting) from exc


def run_whatif(args: argparse.Namespace) -> int:
    """Search the engine's settings, print (and write) the table and the recommendation."""
    from diagnostics.cli.values import out_folder
    from diagnostics.whatif.engines import describe_setting

    _refuse(args, [f for f, attr, off in WHATIF_ASA if getattr(args, attr, off) != off])
    _refuse(args, ["--no-png"] if args.no_png else [])
    out = out_folder(args.out, create=True) if args.out else None
    read = read_for_rules(args)
    rec = _recommend(args, read)
    table = rec.table.sort("pct_dropped", "delay_p95_s", nulls_last=True)
    if out is not None:
        table.write_csv(out / "whatif.csv")
    if args.json:
        sys.stdout.write(table.write_json() + "\n")
        return 0
    row = rec.row
    lines = [
        *read.capture.describe(),
        f"rules: {rec.current.describe()}",
        f"measured {table.height} settings (the job's own included); Pareto front: dropped "
        "share against p95 emission delay",
        _shown(table),
        f"recommended: {describe_setting(rec.rules)}: dropped {row['dropped']:,} "
        f"({row['pct_dropped']:g}%), p95 emission delay {row['delay_p95_s']} s "
        f"(rule: least p95 emission delay with dropped <= {rec.rule.budget_pct:g}% of the events)",
    ]
    if out is not None:
        lines.append(f"table: {out / 'whatif.csv'}")
    sys.stdout.write("\n".join(lines) + "\n")
    return 0


def _shown(table):  # type: ignore[no-untyped-def]
    """The Pareto front, the job's own and the recommended rows, every column shown."""
    import polars as pl

    from diagnostics.whatif.recommend import CURRENT

    rows = table.filter(pl.col("pareto") | pl.col("recommended") | (pl.col("tried_as") == CURRENT))
    with pl.Config(tbl_rows=-1, tbl_cols=-1, tbl_hide_dataframe_shape=True, tbl_width_chars=200):
        return str(rows.drop("events"))


def run_explain(args: argparse.Namespace) -> int:
    """Findings in the engine's terms, with the setting that fixes each."""
    from diagnostics.engines.findings import engine_findings, render_findings
    from diagnostics.engines.replay import replay_rules

    if args.agg_dir is not None or args.events is None:
        msg = (
            f"--rules {chosen_rules(args).value} explains a capture replayed under that "
            "engine's rules: give --events CAPTURE and no AGG_DIR (the logs are ASA's)"
        )
        raise UsageError(msg)
    stray = [f for f, given in (("--write-fix", args.write_fix), ("--query", args.query),
             ("--job", args.job)) if given]  # fmt: skip
    if args.optimise != "events":
        stray.append("--optimise")
    _refuse(args, stray)
    read = read_for_rules(args)
    rec = _recommend(args, read)
    out = replay_rules(
        read.events, read.rules, partitions=read.partitions, columns=read.columns
    ).outcomes
    findings = engine_findings(out, rec)
    if args.format == "json":
        text = json.dumps(
            {
                "rules": rec.current.describe(),
                "findings": [f.to_dict() for f in findings],
                "recommended": rec.rules.describe(),
            },
            indent=2,
        )
    else:
        text = render_findings(findings, rec)
    sys.stdout.write(text + "\n")
    if args.out:
        from pathlib import Path

        try:
            Path(args.out).write_text(text + "\n", encoding="utf-8")
        except OSError as exc:
            msg = f"--out {args.out}: cannot write ({exc.strerror})"
            raise UsageError(msg) from exc
    return 0
