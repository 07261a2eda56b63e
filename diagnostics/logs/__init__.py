"""Reading ASA diagnostic logs of every export shape, without Spark.

* :mod:`~diagnostics.logs.reader` splits a file into records (shape detection, line numbers);
* :mod:`~diagnostics.logs.normalise` turns one record into a :class:`DataError` or a
  :class:`Quarantined` record;
* :mod:`~diagnostics.logs.messages` parses facts out of message text;
* :mod:`~diagnostics.logs.jobs` says which job a record belongs to and how it is shown;
* :mod:`~diagnostics.logs.aggregate` is the whole aggregation in polars (the Spark job's
  reference and benchmark peer).
"""

from diagnostics.logs.reader import read_records
from diagnostics.logs.records import PARSED_SCHEMA, DataError, Quarantined

__all__ = ["PARSED_SCHEMA", "DataError", "Quarantined", "read_records"]
