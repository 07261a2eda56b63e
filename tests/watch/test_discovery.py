"""Discovery without Spark: the folders are listed by the rule of ``orderdoc aggregate``, a
folder that cannot be listed is a warning naming it, a corrupt streaming checkpoint is found,
and a Spark failure is told in one line naming its cause."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

from diagnostics.logs.inputs import expand_inputs
from diagnostics.watch.discovery import checkpoint_problem, describe, list_logs

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_logs" / "asa-real"


def tree(tmp: Path) -> Path:
    """Log folders with the names the rules differ on: ``_old``, hidden ones, links."""
    logs = tmp / "logs"
    for folder in ("h10", "_old", ".hidden", "h11/_sub"):
        (logs / folder).mkdir(parents=True)
        shutil.copy(SAMPLES / "PT1H.json", logs / folder / "PT1H.json")
    shutil.copy(SAMPLES / "az-monitor-metrics.json", logs / "_metrics.json")
    (logs / ".partial.json").write_text("{}\n", encoding="utf-8")
    (logs / "notes.md").write_text("not a log\n", encoding="utf-8")
    outside = tmp / "elsewhere"
    outside.mkdir()
    shutil.copy(SAMPLES / "PT1H.json", outside / "PT1H.json")
    (logs / "linked-folder").symlink_to(outside, target_is_directory=True)
    (logs / "linked.json").symlink_to(outside / "PT1H.json")
    (logs / "dangling.json").symlink_to(tmp / "gone.json")
    return logs


def test_the_listing_follows_the_rule_of_aggregate(tmp_path: Path) -> None:
    logs = tree(tmp_path)
    found, problems = list_logs([logs])
    assert problems == []
    files = expand_inputs([str(logs)])
    assert found == sorted({*files.logs, *files.metrics, *files.skipped})
    assert str((logs / "_old" / "PT1H.json").resolve()) in found  # Spark's source skips it
    assert str((logs / "h11" / "_sub" / "PT1H.json").resolve()) in found
    assert not any("/.hidden/" in p or p.endswith(".partial.json") for p in found)
    assert str(tmp_path / "gone.json") not in found  # a dangling link: read by neither


def _without_root_powers() -> list[str] | None:
    """A command prefix under which chmod 000 denies reading (root: without the capabilities
    that bypass it), or ``None`` when there is none here."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        return None
    prefix = [setpriv, "--bounding-set", "-dac_override,-dac_read_search"]
    probe = subprocess.run([*prefix, "true"], capture_output=True, timeout=30, check=False)
    return prefix if probe.returncode == 0 else None


def test_an_unreadable_folder_is_named_and_the_rest_is_listed(tmp_path: Path) -> None:
    prefix = _without_root_powers()
    if prefix is None:
        pytest.skip("running as root without setpriv: chmod 000 cannot deny root here")
    logs = tree(tmp_path)
    (logs / "h10").chmod(0)
    try:
        code = "import json, sys; from diagnostics.watch.discovery import list_logs; " \
               "print(json.dumps(list_logs([sys.argv[1]])))"  # fmt: skip
        done = subprocess.run(
            [*prefix, sys.executable, "-c", code, str(logs)],
            cwd=ROOT, capture_output=True, text=True, timeout=60, check=True,
        )  # fmt: skip
    finally:
        (logs / "h10").chmod(0o755)
    found, problems = json.loads(done.stdout)
    assert problems == [f"{logs / 'h10'}: cannot list this folder (Permission denied)"]
    assert str((logs / "_old" / "PT1H.json").resolve()) in found
    assert not any("/h10/" in p for p in found)


def _crc(data: bytes) -> bytes:
    sums = b"".join(
        zlib.crc32(data[i : i + 512]).to_bytes(4, "big") for i in range(0, len(data), 512)
    )
    return b"crc\0" + (512).to_bytes(4, "big") + sums


def checkpoint(folder: Path) -> Path:
    """A checkpoint as Spark writes one (with Hadoop checksum files)."""
    files = {
        "metadata": b'{"id":"d5339a4b-3635-454c-9085-bb0d06840e33"}\n',
        "offsets/0": b'v1\n{"batchWatermarkMs":0,"batchTimestampMs":1,"conf":{}}\n{"logOffset":0}',
        "commits/0": b'v1\n{"nextBatchWatermarkMs":0}',
        "sources/0/0": b'v1\n{"path":"file:///logs/PT1H.json","timestamp":1,"batchId":0}',
    }
    for name, data in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        path.with_name(f".{path.name}.crc").write_bytes(_crc(data))
    return folder


@pytest.mark.parametrize(
    ("damage", "problem"),
    [
        (lambda c: (c / "metadata").write_text("garbage\n"), "metadata: corrupt streaming checkpoint"),
        (lambda c: (c / "metadata").write_text("[1]\n"), "metadata: corrupt streaming checkpoint (no query id)"),
        (lambda c: (c / "offsets" / "0").write_text("{}\n"), "offsets/0: corrupt streaming checkpoint (no version line)"),
        (lambda c: (c / "commits" / "0").write_text("v1\n{broken"), "commits/0: corrupt streaming checkpoint"),
        (lambda c: (c / "sources" / "0" / "0").write_bytes(b"v1\n{}"), "sources/0/0: corrupt streaming checkpoint (checksum mismatch)"),
        (lambda c: (c / "sources" / "0" / "0").write_bytes(b"\xff\xfe"), "sources/0/0: corrupt streaming checkpoint"),
    ],
)  # fmt: skip
def test_a_corrupt_checkpoint_is_found(tmp_path: Path, damage, problem: str) -> None:
    assert checkpoint_problem(tmp_path / "none") is None
    folder = checkpoint(tmp_path / "checkpoint")
    assert checkpoint_problem(folder) is None
    damage(folder)
    found = checkpoint_problem(folder)
    assert found is not None
    assert problem in found
    assert "\n" not in found


class _Java:
    """Stands for a py4j JavaObject: a Throwable with a cause chain."""

    def __init__(self, text: str, cause: _Java | None = None) -> None:
        self.text, self.cause = text, cause

    def getCause(self) -> _Java | None:
        return self.cause

    def toString(self) -> str:
        return self.text


class _Py4JError(Exception):
    def __init__(self, java: _Java) -> None:
        super().__init__("An error occurred while calling o46.load.\n: trace")
        self.java_exception = java


def test_failures_are_told_in_one_line_with_their_cause() -> None:
    root = _Java("java.nio.file.AccessDeniedException: /logs/h10: Permission denied")
    wrapped = _Py4JError(_Java("java.io.UncheckedIOException: listing failed", root))
    assert describe(wrapped) == "java.nio.file.AccessDeniedException: /logs/h10: Permission denied"
    streaming = RuntimeError(
        "[STREAM_FAILED] Query [id = 1, runId = 2] terminated with exception: "
        "[PATH_NOT_FOUND] Path does not exist: file:/logs/m.json.\nJVM stacktrace: ..."
    )
    assert describe(streaming) == (
        "RuntimeError: [PATH_NOT_FOUND] Path does not exist: file:/logs/m.json."
    )
    assert describe(OSError()) == "OSError"


@pytest.mark.spark
@pytest.mark.slow  # a watcher process with its own JVM; the listing itself is tested above
@pytest.mark.timeout(300)
def test_an_unreadable_folder_does_not_stop_the_watcher(tmp_path: Path) -> None:
    """With Spark: the file source fails on the folder it cannot list, the readable files are
    still read, and each warning is one line naming the folder (and the Java cause)."""
    prefix = _without_root_powers()
    if prefix is None:
        pytest.skip("running as root without setpriv: chmod 000 cannot deny root here")
    logs, state = tmp_path / "logs", tmp_path / "state"
    for folder in ("h10", "bad"):
        (logs / folder).mkdir(parents=True)
        shutil.copy(SAMPLES / "PT1H.json", logs / folder / "PT1H.json")
    (logs / "bad").chmod(0)
    args = [sys.executable, "-m", "diagnostics", "watch", str(logs), "--state", str(state),
            "--once", "--master", "local[1]", "--conf", "spark.ui.enabled=false"]  # fmt: skip
    try:
        done = subprocess.run(
            [*prefix, *args], cwd=ROOT, capture_output=True, text=True, timeout=240,
            check=False, env={**os.environ, "SPARK_LOCAL_IP": "127.0.0.1"},
        )  # fmt: skip
    finally:
        (logs / "bad").chmod(0o755)
    assert done.returncode == 0, done.stderr[-3000:]
    warnings = [line for line in done.stderr.splitlines() if "warning:" in line]
    bad = logs / "bad"
    assert any(
        f"warning: {bad}: cannot list this folder (Permission denied)" in w for w in warnings
    )
    assert any(
        "the file source could not list the folders: java.nio.file.AccessDeniedException: "
        f"{bad}" in w
        for w in warnings
    ), warnings
    assert "Traceback" not in done.stderr
    manifest = json.loads((state / "manifest.json").read_text())
    assert [f["path"] for f in manifest["files"]] == [str((logs / "h10" / "PT1H.json").resolve())]


def test_a_warning_is_printed_once_per_tick(tmp_path: Path, monkeypatch) -> None:
    """Two passes in a tick (the batch's, the appended lines') both find the unreadable file:
    one warning. No Spark: the passes' Spark steps are replaced by no-ops."""
    from diagnostics.rules.model import RuleSet
    from diagnostics.watch import passes
    from diagnostics.watch.runner import WatchConfig, Watcher

    logs = tmp_path / "logs"
    odd = logs / "odd.json"  # stat works, reading fails
    odd.mkdir(parents=True)
    monkeypatch.setattr(passes, "run_plan", lambda *_a, **_k: 0)
    monkeypatch.setattr(passes, "derive", lambda *_a, **_k: {})
    said: list[str] = []
    config = WatchConfig(folders=(logs,), state=tmp_path / "state", once=True)
    watcher = Watcher(None, config, RuleSet(()), clock=lambda: None, say=said.append)  # type: ignore[arg-type]

    def discover() -> None:  # a batch pass for the file, as foreachBatch would run it
        watcher.run_pass([str(odd)])

    monkeypatch.setattr(watcher, "discover", discover)
    report = watcher.tick()
    warnings = [m for m in said if m.startswith("warning:")]
    assert warnings == [f"warning: {odd}: Is a directory (tried again next pass)"]
    assert report.problems == (f"{odd}: Is a directory (tried again next pass)",)


def test_an_idle_tick_does_not_classify_known_files_again(tmp_path: Path, monkeypatch) -> None:
    """Metrics and skipped files the manifest knows are not classified again on each tick (a
    head or footer read per file): only new files are. No Spark, as above."""
    from diagnostics.rules.model import RuleSet
    from diagnostics.watch import manifest, passes
    from diagnostics.watch.runner import WatchConfig, Watcher

    logs = tmp_path / "logs"
    logs.mkdir()
    for name in ("PT1H.json", "az-monitor-metrics.json", "README.md"):
        shutil.copy(SAMPLES / name, logs / name)
    monkeypatch.setattr(passes, "run_plan", lambda *_a, **_k: 0)
    monkeypatch.setattr(passes, "derive", lambda *_a, **_k: {})
    classified: list[str] = []

    def classify(path: Path) -> str:
        classified.append(path.name)
        return real(path)

    real = manifest.classify
    monkeypatch.setattr(manifest, "classify", classify)
    config = WatchConfig(folders=(logs,), state=tmp_path / "state", once=True)
    watcher = Watcher(None, config, RuleSet(()), clock=lambda: None)  # type: ignore[arg-type]
    monkeypatch.setattr(watcher, "discover", lambda: None)
    watcher.tick()
    assert sorted(classified) == ["PT1H.json", "README.md", "az-monitor-metrics.json"]
    known = watcher.files.manifest()
    assert [Path(p).name for p in known.metrics] == ["az-monitor-metrics.json"]
    assert [Path(p).name for p in known.skipped] == ["README.md"]

    classified.clear()
    watcher.tick()
    assert classified == []
    shutil.copy(SAMPLES / "azuremetrics.csv", logs / "new.csv")
    watcher.tick()
    assert classified == ["new.csv"]
