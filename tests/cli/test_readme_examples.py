"""The README's command examples run as written (on the bundled samples, in this process).

Every ``orderdoc replay|whatif|explain|cti|generate|translate`` line of a ``bash`` block that names only
files shipped in ``sample_logs/`` is run with its ``out/`` folders moved under a temporary
folder; the command table's ``whatif`` form is run on a bundled capture, without ``--out``
as the table shows it."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from tests.captures.helpers import run_cli

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
RUNNABLE = ("replay", "whatif", "explain", "cti", "generate", "translate")


def _looks_like_a_path(word: str) -> bool:
    """A file or folder argument (runnable only if it ships with the checkout)."""
    suffixes = (".csv", ".json", ".jsonl", ".parquet", ".avro", ".gz", ".yaml", ".yml")
    return not word.startswith("-") and ("/" in word or word.endswith(suffixes))


def _commands() -> list[list[str]]:
    commands = []
    for block in re.findall(r"```bash\n(.*?)```", README, flags=re.S):
        text = block.replace("\\\n", " ")
        for line in text.splitlines():
            words = shlex.split(line.split("  #")[0], comments=True)
            if len(words) < 2 or words[0] != "orderdoc" or words[1] not in RUNNABLE:
                continue
            paths = [w for w in words[2:] if _looks_like_a_path(w) and not w.startswith("out/")]
            if "--spark" not in words and all((ROOT / p).exists() for p in paths):
                commands.append(words[1:])
    return commands


COMMANDS = _commands()


def test_the_readme_has_runnable_examples() -> None:
    assert [c[0] for c in COMMANDS].count("replay") >= 3
    assert any(c[0] == "explain" for c in COMMANDS)


@pytest.mark.parametrize("argv", COMMANDS, ids=lambda argv: " ".join(argv[:2]))
def test_readme_command_runs_as_written(
    argv: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    moved = [str(tmp_path / w) if w.startswith("out/") else w for w in argv]
    code, _, err = run_cli(*moved)
    assert code == 0, err


def test_the_command_tables_whatif_form_runs_without_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    row = re.search(r"`orderdoc (whatif CAPTURE [^`]*?)(?: \.\.\.)?`", README)
    assert row is not None
    argv = shlex.split(row.group(1))
    assert "--out" not in argv
    monkeypatch.chdir(tmp_path)
    capture = str(ROOT / "sample_logs/scenarios/late_senders/capture.csv")
    argv = [capture if w == "CAPTURE" else "event_time" if w == "COL" else w for w in argv]
    code, out, err = run_cli(*argv)
    assert code == 0, err
    assert "recommend" in out.lower()
    assert list(tmp_path.iterdir()) == []  # nothing written without --out


def test_the_readme_lists_the_outcome_columns_the_replay_adds() -> None:
    from diagnostics.engine.columns import OUTCOME_COLUMNS

    paragraph = README.split("`outcomes.parquet` keeps every input column and adds, per event:")[1]
    paragraph = paragraph.split("(see `docs/schemas.md`")[0]
    assert re.findall(r"`(\w+)`", paragraph) == list(OUTCOME_COLUMNS)
