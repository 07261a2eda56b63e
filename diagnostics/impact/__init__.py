"""What the event ordering did to a job's results (``orderdoc impact``, docs/impact.md).

* :mod:`.model` describes an aggregating step; :mod:`.steps`, :mod:`.conditions` and
  :mod:`.window_spec` read the steps from the query;
* :mod:`.windows` places events in windows by ASA's rules; :mod:`.aggregate` evaluates a
  step over one placement; :mod:`.compare` puts "as emitted" beside "on time";
* :mod:`.edges` marks the windows at an edge of the data; :mod:`.spread` measures the
  interior windows' errors and their periodic pattern;
* :mod:`.summary` counts, ranks and says it.
"""

from diagnostics.impact.summary import (
    Impact,
    format_summary,
    measure_impact,
    spread_lines,
    summarize,
)

__all__ = ["Impact", "format_summary", "measure_impact", "spread_lines", "summarize"]
