"""Column names as ASA matches them: regardless of case.

ASA compares the names a query uses (``TIMESTAMP BY EventTime``, ``OVER DeviceId``) with the
input's field names without regard to case, at every compatibility level (1.0 lower-cases
field names as it reads them; 1.1 and later keep their case in the output but still match
regardless of it). orderdoc does the same for every column a setting or a job's query names:
the exact name first, else the one column equal to it ignoring case. Two columns that differ
only in case are ambiguous (ASA fails on such input); a name matching none gets the closest
column as a suggestion (docs/schemas.md, "Input contract").
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence


class AmbiguousColumn(ValueError):
    """Several columns equal a name ignoring case, none exactly."""


def match_column(name: str, columns: Sequence[str]) -> str | None:
    """The column ``name`` denotes among ``columns``: itself, else the one column equal to it
    ignoring case, else ``None``; raises :class:`AmbiguousColumn` when several are."""
    if name in columns:
        return name
    folded = name.casefold()
    found = [c for c in columns if c.casefold() == folded]
    if len(found) > 1:
        listed = ", ".join(f"'{c}'" for c in found)
        msg = f"'{name}' matches columns {listed}, which differ only in case: rename one of them"
        raise AmbiguousColumn(msg)
    return found[0] if found else None


def did_you_mean(name: str, columns: Sequence[str]) -> str:
    """``; did you mean 'x'?`` for the column closest to ``name``, or ``""``."""
    by_fold = {c.casefold(): c for c in columns}
    close = difflib.get_close_matches(name.casefold(), list(by_fold), n=1, cutoff=0.6)
    return f"; did you mean '{by_fold[close[0]]}'?" if close else ""
