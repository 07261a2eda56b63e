"""A real distributed run: Spark Connect server and a standalone master + worker.

The servers come from the pyspark install (``sbin/start-connect-server.sh``,
``bin/spark-class ...Master`` / ``...Worker``), bind to 127.0.0.1 on free ports, are waited
for with bounded waits and are always stopped. ``orderdoc aggregate`` runs through each (as a
separate process, as a user would run it) and must give the same tables as local mode.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from diagnostics.logs.inputs import expand_inputs
from diagnostics.spark.job import run_aggregate
from tests.spark.conftest import canonical, read_table
from tests.spark.servers import LOOPBACK, SPARK_HOME, Server, free_port, port_open, spark_env, start
from tests.spark.test_job import COLUMNS

pytestmark = [pytest.mark.spark, pytest.mark.cluster, pytest.mark.slow, pytest.mark.timeout(1200)]
READY_SECONDS = 240


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """Start the Connect server, master and worker; yield their URLs; always stop them."""
    tmp = tmp_path_factory.mktemp("cluster")
    env = spark_env(tmp)
    servers: list[Server] = []
    try:
        connect_port = free_port()
        connect = start(
            "connect",
            [
                str(SPARK_HOME / "sbin" / "start-connect-server.sh"), "--wait",
                "--master", "local[2]",
                "--conf", f"spark.connect.grpc.binding.address={LOOPBACK}",
                "--conf", f"spark.connect.grpc.binding.port={connect_port}",
                "--conf", "spark.ui.enabled=false",
                "--conf", "spark.sql.shuffle.partitions=2",
                "--conf", "spark.driver.memory=1g",
            ],
            tmp, env,
        )  # fmt: skip
        servers.append(connect)
        master_port, master_ui = free_port(), free_port()
        master = start(
            "master",
            [
                str(SPARK_HOME / "bin" / "spark-class"), "org.apache.spark.deploy.master.Master",
                "--host", LOOPBACK, "--port", str(master_port), "--webui-port", str(master_ui),
            ],
            tmp, env,
        )  # fmt: skip
        servers.append(master)
        master_url = f"spark://{LOOPBACK}:{master_port}"
        master.wait_for(lambda: port_open(master_port), READY_SECONDS)
        worker = start(
            "worker",
            [
                str(SPARK_HOME / "bin" / "spark-class"), "org.apache.spark.deploy.worker.Worker",
                "--host", LOOPBACK, "--port", str(free_port()), "--webui-port", str(free_port()),
                "--cores", "2", "--memory", "2g", "--work-dir", str(tmp / "work"), master_url,
            ],
            tmp, env,
        )  # fmt: skip
        servers.append(worker)
        worker.wait_for(
            lambda: "Successfully registered with master" in worker.text(), READY_SECONDS
        )
        connect.wait_for(lambda: port_open(connect_port), READY_SECONDS)
        yield {"remote": f"sc://{LOOPBACK}:{connect_port}", "master": master_url, "tmp": str(tmp)}
    finally:
        for server in reversed(servers):
            server.stop()
        assert all(server.process.poll() is not None for server in servers)


def run_cli(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "diagnostics", "aggregate", *args]
    done = subprocess.run(
        command, capture_output=True, text=True, env=env, timeout=600, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done


@pytest.fixture(scope="module")
def local_result(spark, tmp_path_factory: pytest.TempPathFactory, samples: Path) -> Path:
    """The samples aggregated in local mode (the shared local[2] session)."""
    out = tmp_path_factory.mktemp("local") / "agg"
    run_aggregate(spark, expand_inputs([str(samples)]), out)
    return out


def assert_identical(got: Path, want: Path) -> None:
    assert json.loads((got / "summary.json").read_text()) == json.loads(
        (want / "summary.json").read_text()
    )
    for table, columns in COLUMNS.items():
        if not (want / table).exists():  # an empty metrics or job_events table is not written
            assert not (got / table).exists(), table
            continue
        assert canonical(read_table(got / table), columns) == canonical(
            read_table(want / table), columns
        ), table


@pytest.mark.parametrize("mode", ["remote", "master"])
def test_distributed_run_matches_local(
    cluster: dict[str, str], local_result: Path, samples: Path, tmp_path: Path, mode: str
) -> None:
    env = spark_env(Path(cluster["tmp"]))
    out = tmp_path / f"agg-{mode}"
    done = run_cli([str(samples), "--out", str(out), f"--{mode}", cluster[mode],
                    "--conf", "spark.sql.shuffle.partitions=2"], env)  # fmt: skip
    assert "records: 28 total, 23 parsed, 5 quarantined" in done.stdout
    assert_identical(out, local_result)


def run_watch(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "diagnostics", "watch", *args]
    done = subprocess.run(
        command, capture_output=True, text=True, env=env, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done


@pytest.mark.parametrize("mode", ["remote", "master"])
def test_watch_runs_on_the_cluster(
    cluster: dict[str, str], spark, samples: Path, tmp_path: Path, mode: str
) -> None:
    """``orderdoc watch --once`` through Spark Connect (where the foreachBatch function runs
    in a Python process of the server), twice over a growing folder, and through the
    standalone master once: the tables of one ``orderdoc aggregate`` of the final files."""
    from tests.watch.test_passes import assert_equals_one_shot

    env = spark_env(Path(cluster["tmp"]))
    logs, state = tmp_path / "logs", tmp_path / "state"
    (logs / "h12").mkdir(parents=True)
    lines = (samples / "PT1H.json").read_bytes().splitlines(keepends=True)
    live = logs / "h12" / "PT1H.json"
    shutil.copy(samples / "loganalytics-azurediagnostics.csv", logs / "export.csv")
    args = [str(logs), "--state", str(state), "--once", "--evaluate-at", "data-end",
            f"--{mode}", cluster[mode], "--conf", "spark.sql.shuffle.partitions=2"]  # fmt: skip
    passes = 0
    if mode == "remote":  # a first pass over part of the files
        live.write_bytes(b"".join(lines[:3]))
        first = run_watch(args, env)
        assert "pass 1: 2 read(s)" in first.stderr, first.stderr
        passes = 1

    live.write_bytes(b"".join(lines))  # lines appended, and a new file in a new folder
    (logs / "h13").mkdir()
    shutil.copy(samples / "mixed-malformed.json", logs / "h13" / "PT1H.json")
    done = run_watch(args, env)
    reads = 2 if passes else 3
    assert f"pass {passes + 1}: {reads} read(s)" in done.stderr, done.stderr
    assert f"pass {passes + 2}" not in done.stderr
    assert "rules evaluated at 2024-" in done.stderr
    assert json.loads((state / "manifest.json").read_text())["passes"] == passes + 1
    # over Spark Connect the batches recorded their files there; all taken by the passes
    assert (state / "discovered").is_dir() == (mode == "remote")
    assert not any((state / "discovered").glob("*.json"))
    assert_equals_one_shot(spark, logs, state / "agg", tmp_path)
    assert (state / "alerts" / "alerts.db").is_file()


@pytest.mark.parametrize("mode", ["remote", "master"])
def test_replay_on_the_cluster(cluster: dict[str, str], tmp_path: Path, mode: str) -> None:
    """``orderdoc replay --spark --master spark://...`` (tasks in the worker's Python) and
    ``--remote sc://...`` (Spark Connect: no SparkContext, no RDD) write the outcomes and the
    summary of the local replay, without PARTITION BY (the merged watermark's stages) and
    with a partition that never sent data."""
    from datetime import timedelta

    import polars as pl
    from polars.testing import assert_frame_equal

    from diagnostics.engine.policy import OrderingPolicy
    from tests.spark.test_replay_spark import BASE, local

    times = [0, 1, 1, 3, 4, 9, 12]
    offsets = [0, 30, 0, 2, 0, 1, 400]  # application time behind arrival (s)
    arrivals = [BASE + timedelta(seconds=s) for s in times]
    frame = pl.DataFrame(
        {
            "ts": [
                (a - timedelta(seconds=d)).isoformat()
                for a, d in zip(arrivals, offsets, strict=True)
            ],
            "arrival_time": arrivals,
            "partition_id": [0, 1, 0, 1, 0, 1, 0],
        }
    )
    path = tmp_path / "cap.parquet"
    frame.write_parquet(path, row_group_size=3)
    env = spark_env(Path(cluster["tmp"]))
    flags = ["--timestamp-by", "ts", "--partitions", "3", "--outcomes-only"]
    command = [sys.executable, "-m", "diagnostics", "replay", str(path), *flags]
    done = subprocess.run(
        [*command, "--out", str(tmp_path / "sp"), "--spark", f"--{mode}", cluster[mode],
         "--conf", "spark.sql.shuffle.partitions=2"],
        capture_output=True, text=True, env=env, timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    expected, summary = local(path, OrderingPolicy(timestamp_by="ts"), 3)
    assert_frame_equal(pl.read_parquet(tmp_path / "sp" / "outcomes"), expected)
    assert f"events      {frame.height}" in done.stdout
    assert f"partitions  3 ({summary['timelines']} timelines)" in done.stdout


def test_replay_of_a_uri_on_spark_connect(cluster: dict[str, str], tmp_path: Path) -> None:
    """A capture named by a ``file://`` URI through ``--remote sc://...``: listed and copied
    by DataFrame reads only (no SparkContext), the local replay's outcomes; a scheme the
    cluster has no file system for is one line, exit 2."""
    import polars as pl
    from polars.testing import assert_frame_equal

    from tests.captures.helpers import run_cli
    from tests.spark.test_replay_inputs import events

    path = tmp_path / "cap.csv"
    events(80, seed=12).write_csv(path)
    flags = ["--timestamp-by", "ts", "--outcomes-only"]
    code, _, err = run_cli("replay", str(path), "--out", str(tmp_path / "lo"), *flags)
    assert code == 0, err
    env = spark_env(Path(cluster["tmp"]))
    command = [sys.executable, "-m", "diagnostics", "replay"]
    remote = ["--spark", "--remote", cluster["remote"]]
    done = subprocess.run(
        [*command, path.as_uri(), *flags, "--out", str(tmp_path / "sp"), *remote],
        capture_output=True, text=True, env=env, timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert_frame_equal(
        pl.read_parquet(tmp_path / "sp" / "outcomes"),
        pl.read_parquet(tmp_path / "lo" / "outcomes.parquet"),
    )
    uri = "abfss://cap@account.dfs.core.windows.net/ns/hub"
    refused = subprocess.run(
        [*command, uri, *flags, "--out", str(tmp_path / "no"), *remote],
        capture_output=True, text=True, env=env, timeout=600, check=False,
    )  # fmt: skip
    assert refused.returncode == 2, refused.stderr[-3000:]
    errors = [line for line in refused.stderr.splitlines() if "error:" in line]
    assert errors == [refused.stderr.strip().splitlines()[-1]]
    assert f"{uri}: this Spark has no file system for scheme 'abfss'" in errors[0]


def test_replay_under_spark_submit(cluster: dict[str, str], tmp_path: Path) -> None:
    """``spark-submit --master spark://... submit.py replay CAPTURE --spark``: the replay keeps
    spark-submit's master and writes the local replay's outcomes (README, "When the capture
    outgrows one machine")."""
    from datetime import timedelta

    import polars as pl
    from polars.testing import assert_frame_equal

    import diagnostics.cli.submit as submit
    from diagnostics.engine.policy import OrderingPolicy
    from tests.spark.test_replay_spark import BASE, local

    arrivals = [BASE + timedelta(seconds=s) for s in (0, 1, 2, 5)]
    behind = [timedelta(seconds=s) for s in (0, 9, 0, 1)]  # application time behind arrival
    frame = pl.DataFrame(
        {
            "ts": [a - d for a, d in zip(arrivals, behind, strict=True)],
            "arrival_time": arrivals,
            "partition_id": [0, 1, 0, 1],
        }
    )
    path = tmp_path / "cap.parquet"
    frame.write_parquet(path)
    env = spark_env(Path(cluster["tmp"]))
    done = subprocess.run(
        [str(SPARK_HOME / "bin" / "spark-submit"), "--master", cluster["master"],
         "--conf", "spark.sql.shuffle.partitions=2", "--conf", "spark.ui.enabled=false",
         # the executor's JVM options, as the other runs' (PYSPARK_SUBMIT_ARGS, which
         # spark-submit itself does not read: tests/spark/servers.py)
         "--conf", f"spark.executor.extraJavaOptions={os.environ.get('SPARK_SUBMIT_OPTS', '')}",
         submit.__file__, "replay", str(path), "--timestamp-by", "ts", "--outcomes-only",
         "--out", str(tmp_path / "sp"), "--spark"],
        capture_output=True, text=True, env=env, timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    expected, _ = local(path, OrderingPolicy(timestamp_by="ts"), None)
    assert_frame_equal(pl.read_parquet(tmp_path / "sp" / "outcomes"), expected)
    assert "events      4" in done.stdout
