"""Reading a storage account: azure-storage-blob, adlfs (fsspec) and obstore against Azurite on
the three jobs orderdoc does (bench/storage_peers.py says what each is; docs/performance.md,
"Reading a storage account", has the figures and the choice).

Starts Azurite's Blob service (tests/storage/azurite.py; scripts/install-azurite.sh installs
it), uploads ``--blobs`` small log blobs under one job's ``resourceId=.../y=/m=/d=/h=/``
layout, a Capture folder of ``--capture-blobs`` blobs of ``--capture-kb`` KB each and one
append blob of ``--ranges`` blocks of 20 KB, then prints a table of medians (wall seconds)
and the ratio of each library to the fastest.

Usage: python bench/storage_bench.py [--blobs 1000] [--capture-blobs 200] [--capture-kb 450]
[--ranges 200] [--runs 3]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from storage_peers import PEERS, Job, duckdb_azure_note  # noqa: E402

from tests.storage.azurite import ACCOUNT, KEY, available, azurite  # noqa: E402

PREFIX = "resourceId=/SUBSCRIPTIONS/0000/RESOURCEGROUPS/RG/PROVIDERS/MICROSOFT.STREAMANALYTICS/STREAMINGJOBS/BENCH/"
BLOCK = 20_000


def upload(connection_string: str, args: argparse.Namespace) -> Job:
    """The bench's container, filled; the :class:`Job` naming what is in it."""
    from azure.storage.blob import ContainerClient

    client = ContainerClient.from_connection_string(connection_string, "bench")
    client.create_container()
    line = b'{"time":"2026-01-01T00:00:00Z","category":"Execution","operationName":"x"}\n'
    names = [
        f"{PREFIX}y=2026/m=01/d={1 + i // 240:02d}/h={(i // 10) % 24:02d}/m={i % 10:02d}/PT1H.json"
        for i in range(args.blobs)
    ]
    capture = [
        f"capture/hub/{p}/2026/01/01/00/{i:02d}/00.avro"
        for p in range(8)
        for i in range(max(1, args.capture_blobs // 8))
    ]
    body = os.urandom(args.capture_kb * 1000)
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda n: client.upload_blob(n, line * 4), names))
        list(pool.map(lambda n: client.upload_blob(n, body), capture))
    append = client.get_blob_client(f"{PREFIX}y=2026/m=02/d=01/h=00/m=00/PT1H.json")
    append.create_append_blob()
    for _ in range(args.ranges):
        append.append_block(os.urandom(BLOCK))
    ranges = tuple((i * BLOCK, (i + 1) * BLOCK) for i in range(args.ranges))
    endpoint = connection_string.split("BlobEndpoint=")[1].rstrip(";")
    return Job(
        connection_string,
        endpoint,
        ACCOUNT,
        KEY,
        "bench",
        PREFIX + "y=2026/",
        tuple(capture),
        append.blob_name,
        ranges,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--blobs", type=int, default=1000)
    parser.add_argument("--capture-blobs", type=int, default=200)
    parser.add_argument("--capture-kb", type=int, default=450)
    parser.add_argument("--ranges", type=int, default=200)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    why = available()
    if why:
        sys.exit(f"Azurite cannot run: {why}")
    with tempfile.TemporaryDirectory() as tmp, azurite(Path(tmp)) as server:
        job = upload(server.connection_string, args)
        results = {name: peer(job, args.runs) for name, peer in PEERS.items()}
    columns = ("list", "capture", "ranges", "import")
    best = {c: min(r[c] for r in results.values()) for c in columns}
    print(
        f"{len(job.capture)} capture blobs ({len(job.capture) * args.capture_kb / 1000:.0f} MB), "
        f"{args.blobs} log blobs listed, {args.ranges} range reads; median of {args.runs}"
    )
    print(f"{'library':<22}" + "".join(f"{c:>18}" for c in columns))
    for name, result in results.items():
        cells = "".join(f"{result[c]:>9.3f} s ({result[c] / best[c]:.1f}×)" for c in columns)
        print(f"{name:<22}{cells}")
        assert result["listed"] >= args.blobs, (name, result["listed"])
    print(duckdb_azure_note())


if __name__ == "__main__":
    main()
