"""Azurite's Blob service on 127.0.0.1 for the storage tests and bench/storage_bench.py.

scripts/install-azurite.sh installs the npm package into ``.azurite/`` (``make test`` runs it).
:func:`azurite` starts the Blob service on a free port (``--blobPort 0``: the port it prints),
in a temporary folder, with no telemetry, no API-version check and loose header handling (no
outbound call), bounded in time, and stops it at the end. Its account is the emulator's
well-known development account (public, documented by Azure; not a secret of anyone's).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tests.processes import stop_process

ROOT = Path(__file__).resolve().parents[2]
BINARY = ROOT / ".azurite" / "node_modules" / ".bin" / "azurite-blob"
LOOPBACK = "127.0.0.1"
#: Azurite's development account (Azure's documented emulator account and key).
ACCOUNT = "devstoreaccount1"
KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
_LISTENING = re.compile(r"successfully listens on https?://[^:]+:(\d+)")


def available() -> str | None:
    """Why Azurite cannot run here (``None``: it can)."""
    if not BINARY.exists():
        return f"{BINARY} is missing (scripts/install-azurite.sh; `make test` runs it)"
    if shutil.which("node") is None:
        return "node is missing"
    return None


@dataclass(frozen=True)
class Azurite:
    """A running Blob service: its port and the connection string to reach it."""

    port: int
    location: Path

    @property
    def endpoint(self) -> str:
        return f"http://{LOOPBACK}:{self.port}/{ACCOUNT}"

    @property
    def connection_string(self) -> str:
        return (
            f"DefaultEndpointsProtocol=http;AccountName={ACCOUNT};AccountKey={KEY};"
            f"BlobEndpoint={self.endpoint};"
        )


@contextmanager
def azurite(location: Path, *, timeout: float = 60.0) -> Iterator[Azurite]:
    """Azurite's Blob service storing under ``location`` until the block ends."""
    location.mkdir(parents=True, exist_ok=True)
    log = location / "azurite.log"
    process = subprocess.Popen(
        [
            str(BINARY),
            "--blobHost",
            LOOPBACK,
            "--blobPort",
            "0",
            "--location",
            str(location),
            "--skipApiVersionCheck",
            "--loose",
            "--disableTelemetry",
            "--silent",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        env={**os.environ, "AZURITE_ACCOUNTS": ""},
    )
    found: list[int] = []
    lines: list[str] = []

    def read() -> None:
        assert process.stdout is not None
        with log.open("w", encoding="utf-8") as out:
            for raw in process.stdout:
                text = raw.decode("utf-8", "replace")
                out.write(text)
                out.flush()
                lines.append(text)
                match = _LISTENING.search(text)
                if match and not found:
                    found.append(int(match.group(1)))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        deadline = time.monotonic() + timeout
        while not found:
            if process.poll() is not None:
                msg = f"Azurite stopped at start (exit {process.returncode}): {''.join(lines)}"
                raise RuntimeError(msg)
            if time.monotonic() > deadline:
                msg = f"Azurite did not listen within {timeout:.0f} s: {''.join(lines)}"
                raise RuntimeError(msg)
            time.sleep(0.05)
        yield Azurite(found[0], location)
    finally:
        stop_process(process)
        reader.join(timeout=5)


def upload_folder(
    connection_string: str, container: str, folder: Path, prefix: str = "", *, append: bool = False
) -> list[str]:
    """Every file under ``folder`` as a blob of ``container`` (created when missing), named
    ``prefix`` + its path under ``folder``; ``append``: as append blobs (as ASA writes its
    logs). The blob names, sorted."""
    from azure.core.exceptions import ResourceExistsError
    from azure.storage.blob import ContainerClient

    client = ContainerClient.from_connection_string(connection_string, container)
    with contextlib.suppress(ResourceExistsError):
        client.create_container()
    names = []
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        name = prefix + path.relative_to(folder).as_posix()
        if append:
            blob = client.get_blob_client(name)
            blob.create_append_blob()
            blob.append_block(path.read_bytes())
        else:
            client.upload_blob(name, path.read_bytes(), overwrite=True)
        names.append(name)
    return names
