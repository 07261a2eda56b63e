"""Which files ``orderdoc aggregate`` reads from the folders, globs and files it is given."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from diagnostics.errors import InputError
from diagnostics.logs.aggregate import aggregate_files
from diagnostics.logs.inputs import expand_inputs


def test_a_dangling_link_is_neither_read_nor_listed(samples: Path, tmp_path: Path) -> None:
    logs, elsewhere = tmp_path / "logs", tmp_path / "elsewhere"
    (logs / "h10").mkdir(parents=True)
    elsewhere.mkdir()
    shutil.copy(samples / "PT1H.json", logs / "h10" / "PT1H.json")
    shutil.copy(samples / "bare-array.json", elsewhere / "bare-array.json")
    (logs / "linked.json").symlink_to(elsewhere / "bare-array.json")
    (logs / "h10" / "rotated.json").symlink_to(tmp_path / "gone" / "PT1H.json")
    (logs / "notes.md").write_text("not a log\n", encoding="utf-8")

    files = expand_inputs([str(logs)])
    assert files.logs == (
        str(elsewhere / "bare-array.json"),  # a link to a file is followed
        str(logs / "h10" / "PT1H.json"),
    )
    assert files.skipped == (str(logs / "notes.md"),)
    assert files.total_bytes == sum(Path(p).stat().st_size for p in files.logs)
    tables = aggregate_files(files.logs, files.metrics, skipped=files.skipped)
    assert tables.summary["files_skipped"] == [str(logs / "notes.md")]
    assert not any("gone" in path for path in tables.data_errors["source_file"])

    # a glob that matches it is expanded without it
    files = expand_inputs([str(logs / "h10" / "*.json")])
    assert files.logs == (str(logs / "h10" / "PT1H.json"),)
    assert files.skipped == ()


@pytest.mark.parametrize("given", ["folder", "glob", "file"])
def test_only_dangling_links_is_an_input_error(tmp_path: Path, given: str) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "PT1H.json").symlink_to(tmp_path / "gone.json")
    item = {"folder": logs, "glob": logs / "*.json", "file": logs / "PT1H.json"}[given]
    with pytest.raises(InputError) as caught:
        expand_inputs([str(item)])
    reason = "no such file or folder" if given == "file" else "matches no files"
    assert str(caught.value) == f"input {str(item)!r}: {reason}"
