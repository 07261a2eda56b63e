"""``orderdoc watch``: continuous aggregation of a live log folder, alert state, notifications.

Modules: :mod:`~diagnostics.watch.manifest` (offsets of appended lines), :mod:`~diagnostics.watch.passes`
(one pass in Spark), :mod:`~diagnostics.watch.alertstate` (durable alert state and outbox),
:mod:`~diagnostics.watch.runner` (the loop), :mod:`~diagnostics.watch.files` (atomic writes).
"""
