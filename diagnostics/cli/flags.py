"""The flag that sets each library setting: library errors name settings, the command line
adds the flag (``... (use --late-arrival)``)."""

from __future__ import annotations

import argparse
import re
from collections.abc import Sequence
from dataclasses import replace

from diagnostics.errors import OrderdocError, Setting, setting_of
from diagnostics.explain.model import Report, Suggestion

#: The command-line flag of each setting (a setting without a flag is named as it is).
FLAGS: dict[Setting, str] = {
    Setting.ARRIVAL: "--arrival-col",
    Setting.PARTITION: "--partition-col",
    Setting.PATH_FORMAT: "--capture-path-format",
    Setting.CAPTURE: "--events",
    Setting.TIMESTAMP_BY: "--timestamp-by",
    Setting.OVER: "--over",
    Setting.PARTITION_BY: "--partition-by",
    Setting.PARTITIONS: "--partitions",
    Setting.LATE_ARRIVAL: "--late-arrival",
    Setting.OUT_OF_ORDER: "--out-of-order",
    Setting.EVENT_COUNT: "--events",
    Setting.DURATION: "--duration",
    Setting.SEED: "--seed",
    Setting.START: "--start",
    Setting.OUTPUT: "--out",
    Setting.ERROR_WINDOW: "--error-window",
    Setting.IDLE_NOTICE: "--idle-notice",
    Setting.JOB: "--job",
    Setting.SOURCE: "--source",
    Setting.SPARK_MASTER: "--master",
    Setting.SPARK_REMOTE: "--remote",
    Setting.CTI_EVERY: "--cti-every",
    Setting.CTI_DELAY: "--cti-delay",
    Setting.CTI_IMPORT: "--cti-import",
    Setting.END_COLUMN: "--end-col",
    Setting.WEBHOOK: "--webhook",
    Setting.EVALUATION_TIME: "--now",
    Setting.JOB_DEFINITION: "--job-definition",
    Setting.PARAMETERS: "--parameters",
    Setting.JOB_INPUT: "--input",
    Setting.FIX_FOLDER: "--write-fix",
    Setting.WATCH_INTERVAL: "--interval",
    Setting.WATCH_STATE: "--state",
    Setting.METRICS_PORT: "--metrics-port",
    Setting.RULES: "--rules",
    Setting.WINDOW: "--window",
    Setting.OUT_OF_ORDERNESS: "--out-of-orderness",
    Setting.IDLENESS: "--idleness",
    Setting.ALLOWED_LATENESS: "--allowed-lateness",
    Setting.WATERMARK_INTERVAL: "--watermark-interval",
    Setting.WATERMARK_DELAY: "--watermark-delay",
    Setting.TRIGGER: "--trigger",
    Setting.INPUT_COLUMN: "--input-col",
}


#: Flags whose value a command keeps under another name (``orderdoc whatif`` takes lists).
LIST_DESTS: dict[str, str] = {
    "--late-arrival": "late_values",
    "--out-of-order": "ooo_values",
    "--partition-by": "partition_by_values",
    "--over": "over_values",
}


def has_flag(args: argparse.Namespace, flag: str) -> bool:
    """True when the command that parsed ``args`` has ``flag`` (its value is in ``args``)."""
    dest = flag.lstrip("-").replace("-", "_")
    return hasattr(args, dest) or (flag in LIST_DESTS and hasattr(args, LIST_DESTS[flag]))


def message(exc: OrderdocError, args: argparse.Namespace | None = None) -> str:
    """The error's one line, with the flag of the setting it is about (when the command
    that parsed ``args`` has that flag; any flag when ``args`` is not known). Line breaks
    inside it (a column name read from a broken CSV header) are shown as ``\\n``."""
    text = str(exc).replace("\r", "\\r").replace("\n", "\\n")
    setting = setting_of(exc)
    flag = FLAGS.get(setting) if setting is not None else None
    if flag is None or "(use --" in text or (args is not None and not has_flag(args, flag)):
        return text
    return f"{text} (use {flag})"


def _suggestion_with_flags(suggestion: Suggestion) -> Suggestion:
    flags = [FLAGS.get(s, s.value) for s in suggestion.settings]
    if not flags:
        return suggestion
    return replace(suggestion, snippet=f"{suggestion.snippet} (use {', '.join(flags)})")


def with_flags(report: Report) -> Report:
    """The report with the flags of the settings each suggestion names after its text
    (``... explain it with the capture and its TIMESTAMP BY column (use --events,
    --timestamp-by)``)."""
    findings = [
        replace(f, suggestions=tuple(_suggestion_with_flags(s) for s in f.suggestions))
        for f in report.findings
    ]
    return replace(report, findings=findings)


#: Flags whose value may start with a minus (``--cti-delay -1tick``, a mistyped
#: ``--late-arrival -5s``): argparse would read ``-1tick`` as an option ("expected one
#: argument"), so ``FLAG -VALUE`` is passed on as ``FLAG=-VALUE`` and the value is checked
#: (and refused with its reason, where a negative value makes no sense) by the flag's type.
SIGNED_VALUE_FLAGS = (
    "--late-arrival",
    "--out-of-order",
    "--cti-every",
    "--cti-delay",
    "--cti-window",
)
_NEGATIVE = re.compile(r"^-\d")


def join_negative_values(
    argv: Sequence[str], flags: Sequence[str] = SIGNED_VALUE_FLAGS
) -> list[str]:
    """``argv`` with ``FLAG -VALUE`` written ``FLAG=-VALUE`` for each of ``flags``."""
    out: list[str] = []
    for arg in argv:
        if out and out[-1] in flags and _NEGATIVE.match(arg):
            out[-1] = f"{out[-1]}={arg}"
        else:
            out.append(arg)
    return out
