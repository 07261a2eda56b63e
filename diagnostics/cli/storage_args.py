"""Storage URLs as the inputs of every command (docs/storage.md): before a command runs, each
input given as ``az://``, ``abfs[s]://`` or ``https://ACCOUNT.blob.core.windows.net/`` is
staged to a local path (:func:`diagnostics.storage.resolve_input`), so the commands read it as
they read a folder. ``watch`` follows its URLs itself (:mod:`diagnostics.storage.follow`);
``replay --spark`` on a cluster (``--master``/``--remote``) hands the capture's URL to the
cluster in its ``abfss://`` form, as before (its hadoop-azure reads it). ``--since``/``--until`` (``aggregate``) select
the hours of ASA's ``y=/m=/d=/h=`` layout.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import TextIO

#: The attributes of the parsed flags that name an input (a file or a folder to read).
#: What every command's --help says of storage URLs (``watch`` says it in its LOGS).
URL_NOTE = (
    "Any input file or folder may be a storage URL: az://CONTAINER/PATH, "
    "abfs[s]://CONTAINER@ACCOUNT.dfs.core.windows.net/PATH or "
    "https://ACCOUNT.blob.core.windows.net/CONTAINER/PATH, read with "
    "AZURE_STORAGE_CONNECTION_STRING, AZURE_STORAGE_ACCOUNT with AZURE_STORAGE_KEY or "
    "AZURE_STORAGE_SAS_TOKEN, or "
    "your Azure sign-in (docs/storage.md)."
)
INPUTS = (
    "inputs",
    "events",
    "agg_dir",
    "job_definition",
    "parameters",
    "cti_import",
    "cti_join",
    "cti_union",
    "query",
)


def add_time_range(parser: argparse.ArgumentParser) -> None:
    """``--since`` and ``--until``."""
    parser.add_argument(
        "--since",
        metavar="TIME",
        help="only the logs from this time (ISO 8601, UTC unless it names an offset): the "
        "hourly y=/m=/d=/h= folders before it are not listed nor read",
    )
    parser.add_argument(
        "--until",
        metavar="TIME",
        help="only the logs before this time (ISO 8601; default with --since: now)",
    )


def time_range(
    args: argparse.Namespace, now: datetime | None = None
) -> tuple[datetime | None, datetime | None]:
    """``--since`` and ``--until`` as UTC times (``--until`` defaults to the next hour when
    only ``--since`` is given)."""
    from diagnostics.storage.hours import check_range, parse_time

    since_text = getattr(args, "since", None)
    until_text = getattr(args, "until", None)
    since = parse_time(since_text, "--since") if since_text else None
    until = parse_time(until_text, "--until") if until_text else None
    if since is not None and until is None:
        until = (now or datetime.now(UTC)) + timedelta(hours=1)
    check_range(since, until)
    return since, until


def for_cluster(args: argparse.Namespace, command: str | None, name: str, value: str) -> str | None:
    """The URL ``replay --spark`` hands to a cluster (``--master``/``--remote``) for the
    capture ``value`` (the input ``name``): its ``abfss://`` form, which the cluster's
    hadoop-azure reads (docs/storage.md, "The Spark path (--spark)"; an ``az://`` URL takes
    the environment's account); ``None`` when it is staged here instead (no cluster, or
    another command or input)."""
    on_cluster = getattr(args, "spark", False) and (
        getattr(args, "master", None) or getattr(args, "remote", None)
    )
    if not on_cluster or command != "replay" or name != "events":
        return None
    from diagnostics.storage import parse_url
    from diagnostics.storage.auth import credentials_for
    from diagnostics.storage.urls import StorageUrl

    url = parse_url(value)
    if url.scheme in ("abfs", "abfss"):
        return value
    if url.account is None:
        account = credentials_for(url).account
        url = StorageUrl(url.scheme, url.container, url.path, account, "core.windows.net")
    return url.abfss


def _say(line: str) -> None:
    sys.stderr.write(f"{line}\n")
    sys.stderr.flush()


class _UrlsOut:
    """Standard output with the staged local paths written as their URLs (the summaries
    name the input the user gave)."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        self._stream.write(shown(text))
        return len(text)

    def __getattr__(self, name: str) -> object:
        return getattr(self._stream, name)


@contextmanager
def staged_inputs(args: argparse.Namespace, command: str | None) -> Iterator[None]:
    """Within the block, the storage URLs among the inputs of ``args`` are their staged local
    paths (one line on stderr for each: blobs listed, downloaded, unchanged), and standard
    output names them by their URLs."""
    if not stage_urls(args, command):
        yield
        return
    stdout = sys.stdout
    sys.stdout = _UrlsOut(stdout)
    try:
        yield
    finally:
        sys.stdout = stdout


def stage_urls(args: argparse.Namespace, command: str | None) -> bool:
    """Replace each storage URL among the inputs of ``args`` by its staged local path
    (one line on stderr for each); whether there was one."""
    if command == "watch":
        return False
    from diagnostics.storage import is_url

    given = {name: getattr(args, name) for name in INPUTS if getattr(args, name, None) is not None}
    if not any(
        is_url(v)
        for value in given.values()
        for v in (value if isinstance(value, list) else [value])
    ):
        return False
    since, until = time_range(args)
    for name, value in given.items():
        if isinstance(value, list):
            setattr(args, name, [_one(args, command, name, v, since, until) for v in value])
        else:
            setattr(args, name, _one(args, command, name, value, since, until))
    return True


def _one(
    args: argparse.Namespace,
    command: str | None,
    name: str,
    value: object,
    since: datetime | None,
    until: datetime | None,
) -> object:
    from diagnostics.storage import is_url, resolve_input

    if not isinstance(value, str) or not is_url(value):
        return value
    cluster = for_cluster(args, command, name, value)
    if cluster is not None:
        return cluster
    return resolve_input(value, since=since, until=until, say=_say)


def shown(text: str) -> str:
    """``text`` with staged local paths named by their URLs again (errors, summaries)."""
    staging = sys.modules.get("diagnostics.storage.staging")
    return text if staging is None else staging.shown(text)
