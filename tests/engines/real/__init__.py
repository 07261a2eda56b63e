"""orderdoc's Flink and Spark rules checked against the real engines (docs/engines.md,
"Checked against the real engines"): the harness that runs captures through Apache Flink and
Spark Structured Streaming, and the tests. Marked slow: CI runs them, ``make test`` does not."""
