"""The data the package ships: the default rule pack, the app pages and the bundled samples.

They are read through :mod:`importlib.resources` from ``diagnostics/_data/<name>``. In the
source tree those are symbolic links to the top-level ``rules/``, ``app/`` and
``sample_logs/`` folders (the folders stay where they are); a built wheel holds copies as
package data (``[tool.setuptools.package-data]`` in pyproject.toml), so an installed
``orderdoc`` finds them wherever it runs, independent of the working directory.

Environment: ``ORDERDOC_RULES`` (rule files or folders, ``os.pathsep``-separated) replaces
the default rule pack; ``ORDERDOC_SAMPLES`` names another samples folder.
"""

from __future__ import annotations

import os
from enum import StrEnum
from importlib import resources
from pathlib import Path

from diagnostics.errors import OrderdocError

RULES_ENV = "ORDERDOC_RULES"
SAMPLES_ENV = "ORDERDOC_SAMPLES"


class Resource(StrEnum):
    """A folder of package data (the value is its name in the source tree)."""

    RULES = "rules"
    APP = "app"
    SAMPLES = "sample_logs"


#: A few files each folder must hold; :func:`missing` reports the ones that are absent.
EXPECTED: dict[Resource, tuple[str, ...]] = {
    Resource.RULES: ("schema.json", "late_events.yaml", "watermark_delay.yaml"),
    Resource.APP: ("streamlit_app.py", ".streamlit/config.toml", "screens/__init__.py"),
    Resource.SAMPLES: (
        "scenarios/README.md",
        "scenarios/late_senders/capture.csv",
        "jobs/late_senders.arm.json",
    ),
}


class ResourceError(OrderdocError):
    """A folder the package should ship is missing (a broken installation)."""


def resource_dir(resource: Resource) -> Path:
    """The folder of ``resource``; a :class:`ResourceError` if the installation lacks it."""
    root = resources.files("diagnostics").joinpath("_data", resource.value)
    path = Path(str(root))
    if not path.is_dir():
        msg = f"{path}: the packaged {resource.value} folder is missing; reinstall orderdoc"
        raise ResourceError(msg)
    return path


def missing() -> list[str]:
    """``name/file`` for every :data:`EXPECTED` file the installation lacks (empty: all there)."""
    root = Path(str(resources.files("diagnostics").joinpath("_data")))
    return [
        f"{resource.value}/{name}"
        for resource, names in EXPECTED.items()
        for name in names
        if not (root / resource.value / name).is_file()
    ]


def packaged_rules() -> Path:
    """The default rule pack shipped with the package."""
    return resource_dir(Resource.RULES)


def default_rule_paths() -> list[Path]:
    """``ORDERDOC_RULES`` (files or folders, ``os.pathsep``-separated) when set, else the
    packaged pack. A ``rules`` folder in the working directory is not looked at."""
    configured = os.environ.get(RULES_ENV, "")
    paths = [Path(p) for p in configured.split(os.pathsep) if p]
    return paths or [packaged_rules()]


def app_file() -> Path:
    """The Streamlit app's entry script."""
    return resource_dir(Resource.APP) / "streamlit_app.py"


def samples_dir() -> Path | None:
    """``ORDERDOC_SAMPLES`` when set, else the packaged samples; ``None`` if not a folder."""
    configured = os.environ.get(SAMPLES_ENV)
    if configured:
        folder = Path(configured)
        return folder if folder.is_dir() else None
    try:
        return resource_dir(Resource.SAMPLES)
    except ResourceError:
        return None
