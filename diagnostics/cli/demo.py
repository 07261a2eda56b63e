"""``orderdoc demo [--out DIR]``: the whole toolkit on the bundled samples.

For each scenario of ``sample_logs/scenarios``: generate the capture, replay it under ASA's
default policy (diagnostics + metrics), aggregate the logs, explain (logs only and with the
capture), evaluate the alert rules, sweep what-ifs where a tolerance or OVER is the fix; then
print the report and write ``DIR/report.md`` and ``DIR/report.html`` (plotly charts).
"""

from __future__ import annotations

import argparse
import sys

from diagnostics.cli.spark_args import add_spark_arguments, check_spark_flags, target_of
from diagnostics.cli.values import out_folder
from diagnostics.errors import UsageError


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``demo`` command."""
    parser = subparsers.add_parser(
        "demo", help="run generate, replay, aggregate, explain and alerts on the bundled samples",
        description=__doc__,
    )  # fmt: skip
    parser.add_argument("--out", default="out/demo", metavar="DIR", help="default out/demo")
    parser.add_argument(
        "--scenario", action="append", metavar="NAME", help="only this scenario (repeatable)"
    )
    add_spark_arguments(
        parser,
        "replay the captures, aggregate the logs and run the recommender's settings on Spark "
        "(needs Java 17+, or --remote); the same report as without --spark",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the pipeline, print the summary, write the reports, say how to open the app."""
    from diagnostics.generate import Scenario
    from diagnostics.report.pipeline import run_demo
    from diagnostics.report.render import to_html_report, to_markdown_report, to_text

    check_spark_flags(args)
    out = out_folder(args.out)
    known = {s.value for s in Scenario}
    for name in args.scenario or []:
        if name not in known:
            msg = f"--scenario {name!r} is unknown; choose one of {', '.join(sorted(known))}"
            raise UsageError(msg)
    out.mkdir(parents=True, exist_ok=True)

    def say(message: str) -> None:
        sys.stderr.write(message + "\n")

    target = target_of(args, "orderdoc-demo") if args.spark else None
    runs = run_demo(out, args.scenario, spark=target, say=say)
    focus = next((r for r in runs if r.scenario == "late_senders"), runs[0])
    app_hint = f"orderdoc app {focus.agg_dir}"
    (out / "report.md").write_text(to_markdown_report(runs, app_hint), encoding="utf-8")
    (out / "report.html").write_text(to_html_report(runs, app_hint), encoding="utf-8")
    sys.stdout.write(to_text(runs))
    sys.stdout.write(
        f"\nwrote {out / 'report.html'} and {out / 'report.md'}\n"
        f"open the app on a result: {app_hint}\n"
        f"  (any scenario: orderdoc app {out}/<scenario>/agg)\n"
    )
    return 0
