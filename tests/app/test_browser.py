"""End to end in a real browser: ``orderdoc app`` on a free 127.0.0.1 port, Debian's chromium
driven by Playwright; load the bundled sample, open Findings, save the screenshot shown in the
README (docs/screenshots/findings.png)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.app.conftest import ROOT

CHROMIUM = Path("/usr/bin/chromium")
#: The README's screenshot; refreshed only when ORDERDOC_UPDATE_SCREENSHOTS=1, so that a test run
#: never modifies tracked files (otherwise the screenshot goes to the test's temporary folder).
DOCS_SCREENSHOT = ROOT / "docs" / "screenshots" / "findings.png"
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

pytestmark = [
    pytest.mark.browser,
    pytest.mark.timeout(300),
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's /usr/bin/chromium is not installed"),
]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait_healthy(url: str, proc: subprocess.Popen, seconds: float = 90) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"orderdoc app exited with {proc.returncode}: {proc.stdout.read()}")  # type: ignore[union-attr]
        try:
            with urllib.request.urlopen(url + "_stcore/health", timeout=2) as reply:
                if reply.status == 200:
                    return
        except OSError:
            time.sleep(0.5)
    pytest.fail(f"orderdoc app did not answer on {url} within {seconds} s")


@pytest.fixture
def served(tmp_path: Path):
    port = _free_port()
    env = {**os.environ, "ORDERDOC_APP_WORKDIR": str(tmp_path / "work")}
    env.pop("ORDERDOC_AGG_DIR", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "diagnostics", "app", "--port", str(port)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    url = f"http://127.0.0.1:{port}/"
    try:
        _wait_healthy(url, proc)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=20)


def test_load_the_sample_and_open_findings(served: str, tmp_path: Path):
    update = os.environ.get("ORDERDOC_UPDATE_SCREENSHOTS") == "1"
    screenshot = DOCS_SCREENSHOT if update else tmp_path / "findings.png"
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=FLAGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1100})
            page.goto(served)
            expect(page.get_by_role("heading", name="Load", exact=True)).to_be_visible(
                timeout=60_000
            )
            page.get_by_role("button", name="Load the sample").click()
            expect(page.get_by_text("Loaded sample scenario: late_senders")).to_be_visible(
                timeout=120_000
            )
            page.get_by_test_id("stSidebar").get_by_text("Findings", exact=True).click()
            expect(page.get_by_role("heading", name="Findings", exact=True)).to_be_visible(
                timeout=60_000
            )
            first = page.get_by_role("heading").filter(has_text="1. ")
            expect(first).to_contain_text("513", timeout=120_000)
            expect(page.get_by_text("What to change").first).to_be_visible()
            expect(page.locator(".js-plotly-plot").first).to_be_visible(timeout=60_000)
            page.wait_for_timeout(1500)  # let plotly finish drawing
            screenshot.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(screenshot))
        finally:
            browser.close()
    assert screenshot.stat().st_size > 10_000
