"""Loopback servers for the watcher tests: a webhook receiver and Debian's Alertmanager.

Both bind 127.0.0.1 on free ports and are stopped by their context managers; every wait is
bounded.
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from tests.processes import stop_process

ALERTMANAGER = "/usr/bin/prometheus-alertmanager"
LOOPBACK = "127.0.0.1"


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket() as sock:
        sock.bind((LOOPBACK, 0))
        return int(sock.getsockname()[1])


@dataclass
class Receiver:
    """What a webhook receiver got: one decoded JSON body per POST."""

    url: str
    bodies: list[Any] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def received(self) -> list[Any]:
        with self.lock:
            return list(self.bodies)


@contextmanager
def receiver() -> Iterator[Receiver]:
    """A webhook receiver on 127.0.0.1 that answers 200 and keeps the bodies."""
    got = Receiver(url="")

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            with got.lock:
                got.bodies.append(json.loads(body))
            self.send_response(200)
            self.end_headers()

        def log_message(self, *_args: object) -> None:
            return

    server = ThreadingHTTPServer((LOOPBACK, 0), Handler)
    got.url = f"http://{LOOPBACK}:{server.server_port}/hook"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield got
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def wait_for(check: Callable[[], Any], *, timeout: float, what: str) -> Any:
    """Poll ``check`` until it returns something truthy; fail after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(0.2)


def get_json(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=5) as response:
        return json.loads(response.read())


def alertmanager_available() -> bool:
    return shutil.which(ALERTMANAGER) is not None


@contextmanager
def alertmanager(tmp: Path, webhook_url: str) -> Iterator[str]:
    """Debian's Alertmanager on 127.0.0.1 sending every group to ``webhook_url`` within about
    a second (resolved notifications too); yields its base URL."""
    port = free_port()
    config = tmp / "alertmanager.yml"
    config.write_text(
        "route:\n"
        "  receiver: test\n"
        "  group_by: [alertname, job, kind]\n"
        "  group_wait: 1s\n"
        "  group_interval: 1s\n"
        "  repeat_interval: 1h\n"
        "receivers:\n"
        "  - name: test\n"
        "    webhook_configs:\n"
        f"      - url: {webhook_url}\n"
        "        send_resolved: true\n",
        encoding="utf-8",
    )
    log = (tmp / "alertmanager.log").open("wb")
    process = subprocess.Popen(
        [
            ALERTMANAGER,
            f"--config.file={config}",
            f"--storage.path={tmp / 'am-data'}",
            f"--web.listen-address={LOOPBACK}:{port}",
            "--cluster.listen-address=",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    base = f"http://{LOOPBACK}:{port}"
    try:

        def ready() -> bool:
            try:
                with urllib.request.urlopen(f"{base}/-/ready", timeout=2) as response:
                    return response.status == 200
            except OSError:
                assert process.poll() is None, (tmp / "alertmanager.log").read_text()
                return False

        wait_for(ready, timeout=30, what="Alertmanager to be ready")
        yield base
    finally:
        stop_process(process)
        log.close()
