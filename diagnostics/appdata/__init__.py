"""Everything the troubleshooting app computes, as pure functions testable without Streamlit.

The pages in ``app/`` only render what these modules return:

* :mod:`~diagnostics.appdata.store`: opening an aggregate folder (validation, cache keys,
  lazy scans of its tables);
* :mod:`~diagnostics.appdata.build`: turning uploads (raw logs of any accepted shape, or an
  event capture) into an aggregate folder, with progress;
* :mod:`~diagnostics.appdata.overview`, :mod:`~diagnostics.appdata.lateness`,
  :mod:`~diagnostics.appdata.partitions`, :mod:`~diagnostics.appdata.alerts`: chart data
  prepared from polars frames;
* :mod:`~diagnostics.appdata.insight`: adapters to the explainer and the what-if sweep;
* :mod:`~diagnostics.appdata.figures`: plotly figures built from the prepared frames.
"""
