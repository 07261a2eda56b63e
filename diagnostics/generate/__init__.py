"""Synthetic event captures with one known cause each (``orderdoc generate``).

See :data:`~diagnostics.generate.config.CAUSES` for the seven scenarios and what the default
ASA policy reports on each, :mod:`~diagnostics.generate.scenarios` for how they are built and
:mod:`~diagnostics.generate.output` for the columns and file formats.
"""

from diagnostics.generate.config import CAUSES, GenerateConfig, Scenario
from diagnostics.generate.output import generate, write_capture

__all__ = ["CAUSES", "GenerateConfig", "Scenario", "generate", "write_capture"]
