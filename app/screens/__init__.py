"""The app's pages: each module has ``render()`` and only renders what ``diagnostics.appdata``
computes (through the cached wrappers of :mod:`screens.cache`)."""
