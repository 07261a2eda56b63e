"""orderdoc: diagnostics for event-time stream-processing jobs (Azure Stream Analytics rules)."""

__version__ = "0.1.0"
