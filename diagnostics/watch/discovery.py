"""What the watcher finds and how it says what went wrong: the log files under its folders
(by the rule of ``orderdoc aggregate``), the soundness of the streaming checkpoint, the file
names a Spark Connect batch records, and one-line causes of Spark failures."""

from __future__ import annotations

import json
import os
import re
import zlib
from collections.abc import Callable, Iterable
from pathlib import Path
from urllib.parse import unquote

from pyspark.sql import DataFrame

from diagnostics.errors import InputError
from diagnostics.logs.batches import local_name


def list_logs(folders: Iterable[Path]) -> tuple[list[str], list[str]]:
    """Every file under ``folders`` that ``orderdoc aggregate`` of those folders would look at
    (absolute paths, symbolic links resolved), and one problem per folder that could not be
    listed. The rule of :func:`diagnostics.logs.inputs.expand_inputs`: recursive, names
    starting with ``.`` skipped (``_`` is an ordinary name, which Spark's file source would
    skip), symbolic links to folders not followed, dangling links left out; a folder that
    cannot be listed is skipped (here: with a problem naming it and why)."""
    found: set[str] = set()
    problems: list[str] = []

    def failed(exc: OSError) -> None:
        problems.append(f"{exc.filename}: cannot list this folder ({exc.strerror or exc})")

    for folder in folders:
        for root, dirs, files in os.walk(folder, onerror=failed):
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
            paths = (os.path.join(root, f) for f in files if not f.startswith("."))
            found.update(os.path.realpath(p) for p in paths if os.path.exists(p))
    return sorted(found), problems


def checkpoint_problem(folder: Path) -> str | None:
    """What is wrong with the streaming checkpoint ``folder``, if anything: its ``metadata``
    is not the query's id as JSON, a log file (``offsets``, ``commits``, ``sources/*``) is not
    a version line followed by JSON lines, or a file does not match its Hadoop checksum
    (``.NAME.crc``). ``None`` when it is sound or does not exist yet."""
    if not folder.is_dir():
        return None
    metadata = folder / "metadata"
    current = metadata
    try:
        if metadata.exists():
            value = json.loads(metadata.read_text(encoding="utf-8"))
            if not isinstance(value, dict) or not isinstance(value.get("id"), str):
                return f"{metadata}: corrupt streaming checkpoint (no query id)"
            if not _crc_matches(metadata):
                return f"{metadata}: corrupt streaming checkpoint (checksum mismatch)"
        logs = [folder / "offsets", folder / "commits"]
        logs.extend(sorted((folder / "sources").glob("*")))
        for log in logs:
            for path in sorted(log.glob("[0-9]*")) if log.is_dir() else []:
                current = path
                text = path.read_text(encoding="utf-8")
                version, _, rest = text.partition("\n")
                if not re.fullmatch(r"v\d+", version.strip()):
                    return f"{path}: corrupt streaming checkpoint (no version line)"
                for line in rest.splitlines():
                    if line.strip():
                        json.loads(line)
                if not _crc_matches(path):
                    return f"{path}: corrupt streaming checkpoint (checksum mismatch)"
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        return f"{current}: corrupt streaming checkpoint ({_first_line(exc)})"
    return None


def _crc_matches(path: Path) -> bool:
    """True unless ``path`` has a Hadoop checksum file (``.NAME.crc``: ``crc\\0``, the bytes
    per checksum, then a big-endian CRC-32 per chunk) that does not match its bytes."""
    crc = path.with_name(f".{path.name}.crc")
    try:
        sums = crc.read_bytes()
    except FileNotFoundError:
        return True
    if len(sums) < 8 or sums[:4] != b"crc\0":
        return False
    chunk = int.from_bytes(sums[4:8], "big")
    data = path.read_bytes()
    if chunk <= 0:
        return False
    want = [int.from_bytes(sums[i : i + 4], "big") for i in range(8, len(sums), 4)]
    got = [zlib.crc32(data[i : i + chunk]) for i in range(0, len(data), chunk)]
    return want == got


def record_batch(folder: str) -> Callable[[DataFrame, int], None]:
    """The ``foreachBatch`` function of a Spark Connect watcher: it runs in a Python process
    of the server and writes the batch's file names to ``folder/<batch id>.json`` (atomically;
    a batch replayed after a crash rewrites the same file). The server sees the state folder
    at the same path as the watcher, as it sees the log folders."""

    def record(frame: DataFrame, batch_id: int) -> None:
        from diagnostics.watch.files import write_json_atomic

        paths = sorted(row["path"] for row in frame.collect())
        write_json_atomic(Path(folder) / f"{batch_id:012d}.json", paths)

    return record


def read_discovered(recorded: list[Path]) -> list[str]:
    """The local paths of the files that batches recorded (:func:`record_batch`)."""
    found: list[str] = []
    for path in recorded:
        try:
            names = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            msg = f"{path}: corrupt watcher state ({exc}); move the state folder away to start over"
            raise InputError(msg) from exc
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            msg = f"{path}: corrupt watcher state (not a list of file names); move the state folder away to start over"
            raise InputError(msg)
        found.extend(local_path(name) for name in names)
    return found


def local_path(uri: str) -> str:
    """The absolute local path of a file the file source lists (``file:`` URI, possibly
    percent-encoded), symbolic links resolved as ``orderdoc aggregate`` resolves them."""
    path = local_name(uri)
    if not os.path.exists(path) and os.path.exists(unquote(path)):
        path = unquote(path)
    return os.path.realpath(path)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def describe(exc: BaseException) -> str:
    """One line naming the cause of a failure: for an error of the JVM, its root cause as Java
    prints it (``java.nio.file.AccessDeniedException: /logs/h10``), not py4j's
    ``An error occurred while calling o46.load``; for a streaming query, the exception it
    terminated with; else the exception's type and first line."""
    java = getattr(exc, "java_exception", None)
    if java is not None:
        try:
            cause, hops = java, 0
            while cause.getCause() is not None and hops < 20:
                cause, hops = cause.getCause(), hops + 1
            text = str(cause.toString())
        except Exception:  # the gateway is gone: fall back to the Python side
            text = ""
        if text.strip():
            return text.strip().splitlines()[0]
    text = str(exc).strip()
    marker = "terminated with exception: "
    if marker in text:
        text = text.split(marker, 1)[1]
    lines = text.splitlines()
    first = lines[0].strip() if lines else ""
    name = type(exc).__name__
    return f"{name}: {first}" if first else name
