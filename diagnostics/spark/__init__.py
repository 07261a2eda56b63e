"""The Spark side of ``orderdoc aggregate``: session building, explicit schemas, the job.

The job never names a master: :mod:`~diagnostics.spark.session` turns ``--master``,
``--remote`` or the default into a session, and :mod:`~diagnostics.spark.job` only takes one.
"""
