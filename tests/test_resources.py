"""Package data: the rule pack, the app pages and the samples are read from the package
(diagnostics/_data), never from the working directory; scripts/check_wheel.py checks the
built wheel the same way."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from diagnostics import resources
from diagnostics.cli import main
from diagnostics.resources import Resource, default_rule_paths, missing, resource_dir

ROOT = Path(__file__).resolve().parents[1]


def tracked(folder: str) -> list[str]:
    listed = subprocess.run(
        ["git", "ls-files", folder], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout.split()
    return [name.split("/", 1)[1] for name in listed if (ROOT / name).is_file()]


@pytest.mark.parametrize("resource", list(Resource))
def test_every_file_of_the_folder_is_package_data(resource: Resource) -> None:
    folder = resource_dir(resource)
    names = tracked(resource.value)
    assert names, f"git lists no files in {resource.value}/"
    assert [n for n in names if not (folder / n).is_file()] == []


def test_nothing_expected_is_missing() -> None:
    assert missing() == []


def test_a_missing_file_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    expected = {**resources.EXPECTED, Resource.RULES: ("schema.json", "gone.yaml")}
    monkeypatch.setattr(resources, "EXPECTED", expected)
    assert missing() == ["rules/gone.yaml"]


def test_the_wheel_maps_the_folders_into_the_package() -> None:
    config = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert 'diagnostics = ["_data/**/*", "_data/app/.streamlit/*"]' in config
    for resource in Resource:
        link = ROOT / "diagnostics" / "_data" / resource.value
        assert link.is_symlink()
        assert link.resolve() == ROOT / resource.value


def test_default_rules_ignore_a_rules_folder_in_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "rules").mkdir()
    (tmp_path / "rules" / "broken.yaml").write_text("not: [a rule\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(resources.RULES_ENV, raising=False)
    assert default_rule_paths() == [resource_dir(Resource.RULES)]
    assert main(["rules", "check"]) == 0
    assert capsys.readouterr().out.startswith("ok: ")


def test_orderdoc_rules_names_the_rules_to_use(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text("not: [a rule\n", encoding="utf-8")
    monkeypatch.setenv(resources.RULES_ENV, str(broken))
    assert default_rule_paths() == [broken]
    assert main(["rules", "check"]) == 2
    assert "broken.yaml" in capsys.readouterr().err


def test_the_app_entry_script_is_packaged() -> None:
    app = resources.app_file()
    assert app.is_file()
    assert app.parent == resource_dir(Resource.APP)


def test_samples_follow_orderdoc_samples(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(resources.SAMPLES_ENV, str(tmp_path))
    assert resources.samples_dir() == tmp_path
    monkeypatch.setenv(resources.SAMPLES_ENV, str(tmp_path / "nope"))
    assert resources.samples_dir() is None
    monkeypatch.delenv(resources.SAMPLES_ENV)
    assert resources.samples_dir() == resource_dir(Resource.SAMPLES)
