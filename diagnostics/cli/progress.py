"""A minimal progress line on stderr, shown only when stderr is a terminal."""

from __future__ import annotations

import sys
from typing import TextIO


class ProgressLine:
    """Callable ``(done, total)`` that redraws ``label: done / total (pct)`` on a TTY."""

    def __init__(self, label: str, stream: TextIO | None = None) -> None:
        self.label = label
        self.stream = stream or sys.stderr
        self.enabled = self.stream.isatty()
        self._shown = False

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled:
            return
        pct = 100 * done / total if total else 100.0
        self.stream.write(f"\r{self.label}: {done:,} / {total:,} ({pct:.0f}%)")
        self.stream.flush()
        self._shown = True

    def finish(self) -> None:
        """End the progress line so the next output starts on a fresh line."""
        if self._shown:
            self.stream.write("\n")
            self.stream.flush()
            self._shown = False


#: Lines a command prints on stderr once it has succeeded (an error stays one line).
_NOTES: list[str] = []


def note(line: str) -> None:
    """Print ``line`` on stderr when the command ends without an error."""
    _NOTES.append(line)


def flush_notes(stream: TextIO | None = None, *, show: bool = True) -> None:
    """Print the notes (``show``: else drop them)."""
    lines, _NOTES[:] = list(_NOTES), []
    if show:
        for line in lines:
            (stream or sys.stderr).write(line + "\n")
