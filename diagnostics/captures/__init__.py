"""Reading event captures as users hold them: CSV, JSON Lines, Parquet (``.gz`` accepted) and
Event Hubs Capture Avro files; the input columns (any names), the arrival and partition
columns ASA adds, and the renames that keep input columns apart from the outcome columns.

The entry point is :func:`diagnostics.captures.reader.read_capture`; this package module
imports nothing so that the engine can use :mod:`diagnostics.captures.names` without cycles.
"""
