"""Runs captures through Apache Flink's own window operator (FlinkWindowCount.java, next to this
file) on a local MiniCluster, with the jars of the ``apache-flink`` package that
scripts/install-flink.sh puts in ``.venv-flink/<release>`` (one venv per Flink release, each
of its own: their pins clash with the project's). Each release is checked against orderdoc's
model of it (``--flink-version``, :data:`FLINK_JARS`). The Java program is compiled once per
source version and release with the machine's ``javac`` and runs every case of a test module
in one JVM (each case its own job).

Why Java and not PyFlink's Python DataStream API: a watermark generator cannot be written in
Python, and the tests need one that emits in order with the events (Flink's periodic emission
runs on the wall clock); and a Python window function makes PyFlink run its own Python port of
the window operator instead of Flink's WindowOperator, which Java and SQL jobs run.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from diagnostics.engines.policy import FlinkVersion
from tests.engines.real.captures import Capture, EngineResult

ROOT = Path(__file__).resolve().parents[3]
SOURCE = Path(__file__).with_name("FlinkWindowCount.java")
VENVS = ROOT / ".venv-flink"
#: The Flink releases the tests run (scripts/install-flink.sh installs these) and the release
#: whose rules orderdoc applies to each (``--flink-version``): 2.2.0, the default, first.
FLINK_JARS = {"2.2.0": FlinkVersion.V2_2, "2.1.3": FlinkVersion.V2_1}
DEFAULT_RELEASE = "2.2.0"
#: Java 17 runs Flink 2's MiniCluster without extra --add-opens for this job; the heap is kept
#: small, as the machine is shared.
JAVA_OPTS = ("-Xmx512m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1")

#: How long the tests wait for an install of apache-flink under way (about 315 MB).
INSTALL_WAIT_SECONDS = 900

#: The MiniCluster's configuration: one slot, and no REST server port to collide on.
FLINK_CONFIG = "parallelism.default: 1\ntaskmanager.numberOfTaskSlots: 1\nrest.bind-port: 0\n"


@dataclass(frozen=True, slots=True)
class FlinkSettings:
    """The job's settings (ms): ``tick_ms`` 0 emits the watermark after every event,
    otherwise on whole multiples of it (the periodic emission, on the arrival clock)."""

    window_ms: int
    out_of_orderness_ms: int = 0
    allowed_lateness_ms: int = 0
    idleness_ms: int = 0
    tick_ms: int = 0


def flink_lib(release: str = DEFAULT_RELEASE) -> Path | None:
    """The jar folder of apache-flink ``release`` in .venv-flink, or None when not installed."""
    venv = VENVS / release
    if not (venv / ".installed").exists():
        return None
    found = sorted(venv.glob("lib/python3*/site-packages/pyflink/lib"))
    jar = f"flink-dist-{release}.jar"
    return found[0] if found and (found[0] / jar).exists() else None


def wait_for_install(release: str = DEFAULT_RELEASE, timeout: float = INSTALL_WAIT_SECONDS) -> None:
    """Wait while scripts/install-flink.sh holds the lock of ``release`` (scripts/run-tests.sh
    starts it in the background beside the tests), at most ``timeout`` seconds."""
    lock = VENVS / release / ".install.lock"
    if not lock.exists():
        return
    deadline = time.monotonic() + timeout
    with lock.open("rb") as held:
        while True:
            try:
                fcntl.flock(held, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except BlockingIOError:
                if time.monotonic() > deadline:
                    return
                time.sleep(1)
            else:
                fcntl.flock(held, fcntl.LOCK_UN)
                return


def flink_problem(release: str = DEFAULT_RELEASE) -> str | None:
    """Why the Flink engine tests of ``release`` cannot run here (None when they can), once
    an install under way has ended."""
    wait_for_install(release)
    if flink_lib(release) is None:
        return (
            f"apache-flink {release} is not installed in .venv-flink/{release} "
            f"(scripts/install-flink.sh installs it; it could not, see "
            f".venv-flink/{release}/install.log)"
        )
    if shutil.which("javac") is None or shutil.which("java") is None:
        return "a JDK (java and javac) is needed to compile the Flink test job"
    return None


def _classes(workdir: Path, release: str) -> Path:
    """FlinkWindowCount compiled against ``release`` (see :func:`compiled`)."""
    return compiled(SOURCE, workdir, release)


def compiled(source: Path, workdir: Path, release: str = DEFAULT_RELEASE) -> Path:
    """The Java program ``source`` compiled against ``release``'s jars, cached in its venv by
    the source's hash."""
    lib = flink_lib(release)
    assert lib is not None
    digest = hashlib.sha1(source.read_bytes()).hexdigest()[:12]
    out = VENVS / release / "engine-check" / f"{source.stem}-{digest}"
    if not (out / f"{source.stem}.class").exists():
        scratch = workdir / f"classes-{source.stem}"
        scratch.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            ["javac", "-nowarn", "-cp", f"{lib}/*", "-d", str(scratch), str(source)],
            check=True,
            capture_output=True,
            text=True,
        )
        out.parent.mkdir(parents=True, exist_ok=True)
        if not out.exists():
            shutil.copytree(scratch, out)
    return out


def _case_line(capture: Capture, settings: FlinkSettings, workdir: Path, n: int) -> str:
    events = workdir / f"case-{n}.csv"
    events.write_text(
        "".join(f"{e.id},{e.split},{e.event_ms},{e.arrival_ms}\n" for e in capture.events),
        encoding="utf-8",
    )
    flags = {
        "--input": events,
        "--output": workdir / f"case-{n}.json",
        "--window-ms": settings.window_ms,
        "--out-of-orderness-ms": settings.out_of_orderness_ms,
        "--allowed-lateness-ms": settings.allowed_lateness_ms,
        "--idleness-ms": settings.idleness_ms,
        "--tick-ms": settings.tick_ms,
        "--splits": capture.splits,
    }
    return " ".join(f"{k} {v}" for k, v in flags.items())


def run_flink(
    cases: list[tuple[Capture, FlinkSettings]],
    workdir: Path,
    timeout_s: float = 600,
    release: str = DEFAULT_RELEASE,
) -> list[EngineResult]:
    """Each case through Flink ``release`` (one JVM for all), in order."""
    workdir.mkdir(parents=True, exist_ok=True)
    classes = _classes(workdir, release)
    lib = flink_lib(release)
    lines = [_case_line(c, s, workdir, n) for n, (c, s) in enumerate(cases)]
    (workdir / "cases.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    # the MiniCluster reads FLINK_CONF_DIR/config.yaml: this run's own, not a user's
    (workdir / "config.yaml").write_text(FLINK_CONFIG, encoding="utf-8")
    env = {**os.environ, "FLINK_CONF_DIR": str(workdir)}
    done = subprocess.run(
        [
            *("java", *JAVA_OPTS, "-cp", f"{classes}:{lib}/*", "FlinkWindowCount"),
            *("--cases", str(workdir / "cases.txt")),
        ],
        capture_output=True,
        text=True,
        timeout=timeout_s,
        env=env,
        check=False,
    )
    if done.returncode != 0:
        msg = f"the Flink {release} job failed (exit {done.returncode}):\n{done.stderr[-4000:]}"
        raise RuntimeError(msg)
    results = []
    for n, (capture, settings) in enumerate(cases):
        raw = json.loads((workdir / f"case-{n}.json").read_text(encoding="utf-8"))
        firings = [tuple(int(v) for v in f) for f in raw["firings"]]
        counts: dict[int, int] = {}
        for start, end, count in firings:
            assert end - start == settings.window_ms, (capture.name, start, end)
            counts[start] = max(counts.get(start, 0), count)  # a late firing only adds
        results.append(
            EngineResult(
                dropped=frozenset(raw["dropped"]),
                counts=dict(sorted(counts.items())),
                details={"firings": firings, "dropped_in_order": raw["dropped"]},
            )
        )
    return results
