"""Fixtures of the rules tests: aggregate folders, rule paths and local webhook servers."""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

REPO = HERE.parents[1]
RULES_DIR = REPO / "rules"


@pytest.fixture
def agg_dir(tmp_path: Path) -> Path:
    """An empty aggregate folder."""
    folder = tmp_path / "agg"
    folder.mkdir()
    return folder


@dataclass
class Hook:
    """A local webhook receiver: its URL, the bodies it received and how many requests."""

    url: str
    bodies: list[dict[str, Any]] = field(default_factory=list)
    requests: int = 0


def _serve(behaviour: str, release: threading.Event) -> tuple[ThreadingHTTPServer, Hook]:
    hook = Hook(url="")
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            body = self.rfile.read(length)
            with lock:
                hook.requests += 1
                attempt = hook.requests
            if behaviour == "hang":
                release.wait(timeout=10)
                return
            if behaviour == "fail" or (behaviour == "flaky" and attempt == 1):
                self.send_response(503)
                self.end_headers()
                return
            if behaviour == "reject":
                self.send_response(400)
                self.end_headers()
                return
            with lock:
                hook.bodies.append(json.loads(body))
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(b'{"status":"success"}')

        def log_message(self, format: str, *args: Any) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    hook.url = f"http://127.0.0.1:{server.server_address[1]}/hook"
    return server, hook


def _hook(behaviour: str) -> Iterator[Hook]:
    release = threading.Event()
    server, hook = _serve(behaviour, release)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.daemon = True
    thread.start()
    try:
        yield hook
    finally:
        release.set()
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@pytest.fixture
def ok_hook() -> Iterator[Hook]:
    """A receiver on 127.0.0.1 that answers 200 and records the payloads."""
    yield from _hook("ok")


@pytest.fixture
def failing_hook() -> Iterator[Hook]:
    """A receiver that always answers 503."""
    yield from _hook("fail")


@pytest.fixture
def flaky_hook() -> Iterator[Hook]:
    """A receiver that answers 503 once, then 200."""
    yield from _hook("flaky")


@pytest.fixture
def rejecting_hook() -> Iterator[Hook]:
    """A receiver that answers 400 (not to be retried)."""
    yield from _hook("reject")


@pytest.fixture
def hanging_hook() -> Iterator[Hook]:
    """A receiver that reads the request and never answers (until the test ends)."""
    yield from _hook("hang")
