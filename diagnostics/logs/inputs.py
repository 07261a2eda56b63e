"""Expanding ``orderdoc aggregate`` inputs (files, folders, globs) into a sorted file list.

A named file is always read. A folder is walked recursively and a glob expanded; from those,
files whose names look like logs are read (``.json``, ``.jsonl``, ``.ndjson``, ``.csv``,
``.log``, ``.txt``, each optionally ``.gz``, and ``.parquet``) and the rest are listed as
skipped. Hidden files and folders (``.name``) and dangling symbolic links (their target
does not exist) are left out, neither read nor listed (``orderdoc watch`` leaves them out
too). Parquet files are split into engine metrics (they have an ``InputEvents`` column, read
from the footer only) and others (skipped: e.g. ``outcomes.parquet`` of a replay folder).
A JSON or CSV file whose start is an Azure Monitor metrics export (``az monitor metrics
list`` JSON, the ``AzureMetrics`` table) is read as metrics, not as logs.
"""

from __future__ import annotations

import glob
import gzip
import os
import zlib
from dataclasses import dataclass
from pathlib import Path

import pyarrow.parquet as pq

from diagnostics.errors import InputError
from diagnostics.logs.azure_metrics import looks_like_azure_metrics

LOG_SUFFIXES = (".json", ".jsonl", ".ndjson", ".csv", ".log", ".txt")
METRIC_COLUMNS = frozenset({"time", "InputEvents"})


@dataclass(frozen=True)
class InputFiles:
    """The files one run reads. Invariant: each list is sorted and has no duplicates."""

    logs: tuple[str, ...]
    metrics: tuple[str, ...]
    skipped: tuple[str, ...]

    @property
    def total_bytes(self) -> int:
        """Size on disk of the log and metrics files."""
        return sum(os.path.getsize(path) for path in (*self.logs, *self.metrics))


def _looks_like_log(path: Path) -> bool:
    name = path.name.lower().removesuffix(".gz")
    return name.endswith(LOG_SUFFIXES) or name.endswith(".parquet")


def _walk(folder: Path) -> list[Path]:
    found: list[Path] = []
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        found.extend(Path(root) / f for f in files if not f.startswith("."))
    return found


def _is_metrics(path: Path) -> bool:
    try:
        names = set(pq.read_schema(path).names)
    except (OSError, ValueError):
        return False
    return names >= METRIC_COLUMNS


def read_as(path: Path) -> str:
    """How a file chosen for reading is read, by its content: ``"log"``, ``"metrics"`` or
    ``"skip"`` (Parquet, by its magic bytes or name, is metrics when it has the metric columns)."""
    if not _is_parquet(path):
        return "metrics" if _is_metrics_export(path) else "log"
    return "metrics" if _is_metrics(path) else "skip"


def _is_parquet(path: Path) -> bool:
    if path.name.lower().endswith((".parquet", ".pq")):
        return True
    try:
        with open(path, "rb") as handle:
            return handle.read(4) == b"PAR1"
    except OSError:
        return False


def classify(path: Path) -> str:
    """What a run does with a file found in a folder: ``"log"``, ``"metrics"`` or ``"skip"``
    (the rules of :func:`expand_inputs` for one file; hidden names are the caller's concern)."""
    return read_as(path) if _looks_like_log(path) else "skip"


def _is_metrics_export(path: Path) -> bool:
    """True when the file (gzipped or not) starts like an Azure Monitor metrics export."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(65536)
        if head[:2] == b"\x1f\x8b":
            with gzip.open(path, "rb") as handle:
                head = handle.read(65536)
    except (OSError, EOFError, zlib.error):
        return False
    return looks_like_azure_metrics(head)


def expand_inputs(inputs: list[str]) -> InputFiles:
    """Resolve ``inputs`` to files; raises :class:`InputError` naming an input that matches nothing."""
    chosen: set[Path] = set()
    skipped: set[Path] = set()
    for item in inputs:
        path = Path(item)
        if path.is_file():
            chosen.add(path.resolve())
            continue
        if path.is_dir():
            candidates = _walk(path)
        elif glob.has_magic(item):
            candidates = []
            for match in glob.glob(item, recursive=True):
                sub = Path(match)
                candidates.extend(_walk(sub) if sub.is_dir() else [sub])
        else:
            msg = f"input {item!r}: no such file or folder"
            raise InputError(msg)
        candidates = [c for c in candidates if os.path.exists(c)]  # no dangling links
        if not candidates:
            msg = f"input {item!r}: matches no files"
            raise InputError(msg)
        for candidate in candidates:
            target = chosen if _looks_like_log(candidate) else skipped
            target.add(candidate.resolve())
    logs: list[Path] = []
    metrics: list[Path] = []
    for path in sorted(chosen):
        kind = read_as(path)
        if kind == "skip":
            skipped.add(path)
        else:
            (metrics if kind == "metrics" else logs).append(path)
    return InputFiles(
        logs=tuple(str(p) for p in logs),
        metrics=tuple(str(p) for p in metrics),
        skipped=tuple(sorted(str(p) for p in skipped)),
    )
