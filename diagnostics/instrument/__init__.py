"""The instrumented replay: ASA-format diagnostics records and per-minute metrics.

:func:`~diagnostics.instrument.run.instrument` turns an engine outcomes frame into ASA resource-log
(or activity-log) records, ``InputPartitionNotProgressing`` notices and the ``metrics.parquet``
table; :func:`~diagnostics.instrument.outputs.write_outputs` writes them for a finished replay
(``orderdoc replay``, the demo). See
``docs/diagnostics.md`` for the records written.
"""

from diagnostics.instrument.options import InstrumentOptions, LogFormat
from diagnostics.instrument.run import Instrumented, instrument, write_diagnostics, write_metrics

__all__ = [
    "InstrumentOptions",
    "Instrumented",
    "LogFormat",
    "instrument",
    "write_diagnostics",
    "write_metrics",
]
