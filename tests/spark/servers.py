"""Starting and stopping Spark servers from the pyspark install, bound to 127.0.0.1.

Every process is started in its own process group and stopped by killing that group; every
wait is bounded.
"""

from __future__ import annotations

import os
import shlex
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pyspark

SPARK_HOME = Path(pyspark.__file__).resolve().parent
LOOPBACK = "127.0.0.1"


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket() as sock:
        sock.bind((LOOPBACK, 0))
        return sock.getsockname()[1]


def spark_env(tmp: Path) -> dict[str, str]:
    """Environment for servers and clients: loopback only, this venv's Python, logs in tmp,
    and the drivers pyspark starts told to give their executors the JVM options
    tests/conftest.py gives drivers and daemons (``TEST_JVM_OPTIONS``). That goes through
    ``PYSPARK_SUBMIT_ARGS``, not a configuration folder: a folder of their own first on the
    JVMs' class path would keep them from the tests' class archive (tests/jvm_archive.py)."""
    options = os.environ.get("SPARK_SUBMIT_OPTS", "")
    env = dict(os.environ)
    env.pop("SPARK_CONF_DIR", None)
    env.update(
        PYSPARK_SUBMIT_ARGS=shlex.join(
            ["--conf", f"spark.executor.extraJavaOptions={options}", "pyspark-shell"]
        ),
        SPARK_HOME=str(SPARK_HOME),
        SPARK_LOCAL_IP=LOOPBACK,
        SPARK_LOCAL_HOSTNAME="localhost",
        PYSPARK_PYTHON=sys.executable,
        PYSPARK_DRIVER_PYTHON=sys.executable,
        SPARK_LOG_DIR=str(tmp / "logs"),
        SPARK_PID_DIR=str(tmp / "pids"),
        SPARK_WORKER_DIR=str(tmp / "work"),
        SPARK_NO_DAEMONIZE="1",
    )
    return env


@dataclass
class Server:
    """A started server process and the file its output goes to."""

    name: str
    process: subprocess.Popen
    log: Path

    def text(self) -> str:
        """Everything the server printed so far."""
        return self.log.read_text(errors="replace") if self.log.exists() else ""

    def wait_for(self, predicate, timeout: float) -> None:
        """Poll ``predicate()`` until true; fail naming the server and its log tail otherwise."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if predicate():
                return
            if self.process.poll() is not None:
                break
            time.sleep(1)
        msg = f"{self.name} not ready after {timeout:.0f}s; log tail:\n{self.text()[-3000:]}"
        raise AssertionError(msg)

    def stop(self) -> None:
        """Stop the whole process group: SIGTERM, then SIGKILL after 30 s."""
        if self.process.poll() is not None:
            return
        try:
            os.killpg(self.process.pid, signal.SIGTERM)
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=30)
        except ProcessLookupError:
            pass


def start(name: str, argv: list[str], tmp: Path, env: dict[str, str]) -> Server:
    """Start ``argv`` in a new process group with output to ``tmp/<name>.out``."""
    log = tmp / f"{name}.out"
    with log.open("wb") as handle:
        process = subprocess.Popen(
            argv, stdout=handle, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            env=env, start_new_session=True,
        )  # fmt: skip
    return Server(name, process, log)


def port_open(port: int) -> bool:
    """True if something accepts TCP connections on 127.0.0.1:port."""
    with socket.socket() as sock:
        sock.settimeout(1)
        return sock.connect_ex((LOOPBACK, port)) == 0
