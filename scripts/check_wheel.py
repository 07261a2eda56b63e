"""A wheel that works alone: build it, check its package data, install it into a fresh venv
outside the checkout and run ``orderdoc rules check``, ``orderdoc demo`` and ``orderdoc app``
there (the app: its packaged pages run once under Streamlit's AppTest on the demo's result,
then ``orderdoc app`` serves on 127.0.0.1 until its health check and page answer).

Run by scripts/run-tests.sh (``make test``) with the project's venv:
``.venv/bin/python scripts/check_wheel.py``. The wheel is built from a copy of the working
tree (tracked and untracked, not ignored files), so stale ``build/`` folders never leak into
it. Dependencies come from the package index pip is configured with (pip's cache keeps this
quick). Exit code 0 when everything works, 1 otherwise, with what failed on stderr.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: Top-level folders shipped as package data under diagnostics/_data/.
DATA_FOLDERS = ("rules", "app", "sample_logs")
#: What the demo and the app need besides the core: the rules and app extras.
EXTRAS = "rules,app"
#: How long ``orderdoc app`` may take to answer its health check (seconds).
APP_START_SECONDS = 90
#: Run in the wheel's venv: the packaged app's first page on the demo's aggregate folder.
APP_TEST = """
import sys
from streamlit.testing.v1 import AppTest
from diagnostics.resources import app_file
at = AppTest.from_file(str(app_file()), default_timeout=120)
at.run()
if at.exception:
    sys.exit(f"the packaged app raised: {at.exception[0].value}")
shown = " ".join(str(m.value) for m in (*at.markdown, *at.metric, *at.title, *at.header))
if not shown.strip():
    sys.exit("the packaged app showed nothing")
print("packaged app ran under AppTest:", len(at.metric), "metric(s)")
"""


def run(argv: list[str], cwd: Path | None = None, env: dict[str, str] | None = None) -> None:
    print("+", " ".join(argv), flush=True)
    subprocess.run(argv, check=True, cwd=cwd, env=env)


def working_tree() -> list[str]:
    """Files of the working tree git knows of or would add (not ignored, still present)."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        check=True,
        capture_output=True,
    ).stdout.decode()
    return [name for name in listed.split("\0") if name and os.path.lexists(ROOT / name)]


def copy_tree(files: list[str], dest: Path) -> None:
    for name in files:
        target = dest / name
        target.parent.mkdir(parents=True, exist_ok=True)
        source = ROOT / name
        if source.is_symlink():
            target.symlink_to(os.readlink(source))
        else:
            shutil.copy2(source, target)


def missing_data(wheel: Path, files: list[str]) -> list[str]:
    """Files of the data folders that the wheel lacks (as diagnostics/_data/<path>)."""
    with zipfile.ZipFile(wheel) as archive:
        packed = set(archive.namelist())
    wanted = [f for f in files if f.split("/", 1)[0] in DATA_FOLDERS and (ROOT / f).is_file()]
    return [f for f in wanted if f"diagnostics/_data/{f}" not in packed]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def serve_app(orderdoc: str, agg: Path, cwd: Path, env: dict[str, str]) -> None:
    """``orderdoc app AGG`` answers its health check and its page on 127.0.0.1, then stops."""
    port = free_port()
    argv = [orderdoc, "app", str(agg), "--port", str(port)]
    print("+", " ".join(argv), flush=True)
    server = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + APP_START_SECONDS
        while True:
            if server.poll() is not None:
                raise subprocess.CalledProcessError(server.returncode, argv)
            try:
                with urllib.request.urlopen(
                    f"http://127.0.0.1:{port}/_stcore/health", timeout=5
                ) as r:
                    if r.read().strip() == b"ok":
                        break
            except OSError:
                if time.monotonic() > deadline:
                    raise subprocess.CalledProcessError(124, argv) from None
                time.sleep(1)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=10) as page:
            if page.status != 200 or b"<html" not in page.read().lower():
                raise subprocess.CalledProcessError(1, argv)
        print(f"orderdoc app answered on 127.0.0.1:{port}", flush=True)
    finally:
        server.terminate()
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def main() -> int:
    files = working_tree()
    with tempfile.TemporaryDirectory(prefix="orderdoc-wheel-") as tmp:
        work = Path(tmp)
        copy_tree(files, work / "src")
        run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(work / "dist"),
             str(work / "src")])  # fmt: skip
        (wheel,) = (work / "dist").glob("diagnostics-*.whl")
        lacking = missing_data(wheel, files)
        if lacking:
            sys.stderr.write(f"check_wheel: the wheel lacks {len(lacking)} data file(s): ")
            sys.stderr.write(", ".join(lacking[:5]) + "\n")
            return 1
        base = getattr(sys, "_base_executable", sys.executable)
        # a venv without its own pip (ensurepip costs seconds): this pip installs into it;
        # no bytecode at install time (Python writes it on first import)
        run([base, "-m", "venv", "--without-pip", str(work / "venv")])
        bin_dir = work / "venv" / "bin"
        run([sys.executable, "-m", "pip", "--python", str(bin_dir / "python"), "install", "-q",
             "--no-compile", f"{wheel}[{EXTRAS}]"])  # fmt: skip
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        elsewhere = work / "elsewhere"
        (elsewhere / "rules").mkdir(parents=True)  # a ./rules folder must not be picked up
        (elsewhere / "rules" / "broken.yaml").write_text("not: [a rule\n", encoding="utf-8")
        orderdoc = str(bin_dir / "orderdoc")
        run([str(bin_dir / "python"), "-c",
             "import diagnostics, sys; from diagnostics.resources import missing; "
             "sys.exit(f'outside the checkout? {diagnostics.__file__}' if "
             f"diagnostics.__file__.startswith({str(ROOT)!r}) else "
             "(f'missing package data: {missing()}' if missing() else 0))"],
            cwd=elsewhere, env=env)  # fmt: skip
        run([orderdoc, "rules", "check"], cwd=elsewhere, env=env)
        run([orderdoc, "demo", "--out", str(work / "demo")], cwd=elsewhere, env=env)
        if not (work / "demo" / "report.html").is_file():
            sys.stderr.write("check_wheel: orderdoc demo wrote no report.html\n")
            return 1
        agg = work / "demo" / "late_senders" / "agg"
        run([str(bin_dir / "python"), "-c", APP_TEST], cwd=elsewhere,
            env={**env, "ORDERDOC_AGG_DIR": str(agg)})  # fmt: skip
        serve_app(orderdoc, agg, elsewhere, env)
    print(
        "check_wheel: the wheel installed outside the checkout runs rules check, the demo and the app"
    )
    return 0


if __name__ == "__main__":
    # stopped by scripts/run-tests.sh when the lint fails: exit so the temporary folder goes
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    try:
        sys.exit(main())
    except subprocess.CalledProcessError as exc:
        sys.stderr.write(f"check_wheel: failed ({exc.returncode}): {' '.join(exc.cmd)}\n")
        sys.exit(1)
