"""What an aggregating step of an ASA query says: its window, keys, aggregates and filters.

Frozen descriptions only; :mod:`diagnostics.impact.steps` reads them from the query text,
:mod:`diagnostics.impact.windows` and :mod:`diagnostics.impact.aggregate` evaluate them.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from diagnostics.durations import format_duration


class WindowKind(StrEnum):
    """ASA's windowing functions that replay supports."""

    TUMBLING = "TumblingWindow"
    HOPPING = "HoppingWindow"
    SLIDING = "SlidingWindow"
    SESSION = "SessionWindow"


class Function(StrEnum):
    """Aggregate functions that replay supports."""

    COUNT = "COUNT"
    SUM = "SUM"
    AVG = "AVG"
    MIN = "MIN"
    MAX = "MAX"


class Operator(StrEnum):
    """Comparison operators of WHERE and HAVING."""

    EQ = "="
    NE = "<>"
    LT = "<"
    LE = "<="
    GT = ">"
    GE = ">="


class Logic(StrEnum):
    """How conditions combine."""

    AND = "AND"
    OR = "OR"


@dataclass(frozen=True, slots=True)
class Window:
    """A window of ``GROUP BY``. Times in nanoseconds: ``size`` (the duration; the timeout of
    a session window), ``hop`` (hopping; equal to ``size`` for tumbling), ``offset``,
    ``max_duration`` (session) and the session window's ``partition_key``."""

    kind: WindowKind
    size: int
    hop: int = 0
    offset: int = 0
    max_duration: int = 0
    partition_key: str | None = None

    def describe(self) -> str:
        """``TumblingWindow(1m)``, ``HoppingWindow(10m, hop 5m, offset -1ms)``, ..."""
        if self.kind is WindowKind.SESSION:
            text = f"timeout {format_duration(self.size)}, maximum {format_duration(self.max_duration)}"
            if self.partition_key:
                text += f", partition by {self.partition_key}"
        else:
            text = format_duration(self.size)
            if self.kind is WindowKind.HOPPING:
                text += f", hop {format_duration(self.hop)}"
            if self.offset:
                sign = "-" if self.offset < 0 else ""
                text += f", offset {sign}{format_duration(abs(self.offset))}"
        return f"{self.kind.value}({text})"


@dataclass(frozen=True, slots=True)
class Aggregate:
    """``function(column)`` (``column`` None: ``COUNT(*)``), output as ``name``."""

    function: Function
    column: str | None
    name: str

    def describe(self) -> str:
        """As the query writes it: ``COUNT(*)``, ``AVG(value)``."""
        return f"{self.function.value}({self.column or '*'})"


@dataclass(frozen=True, slots=True)
class Operand:
    """One side of a comparison: a column, a literal, an aggregate (HAVING) or NULL."""

    column: str | None = None
    literal: float | str | None = None
    aggregate: Aggregate | None = None


@dataclass(frozen=True, slots=True)
class Comparison:
    """``left op right``; ``op`` None with ``right`` None means ``left IS NULL`` (``negated``:
    ``IS NOT NULL``)."""

    left: Operand
    op: Operator | None
    right: Operand | None
    negated: bool = False


@dataclass(frozen=True, slots=True)
class Condition:
    """Conditions combined by ``logic`` (a single comparison: one part); ``negated``: NOT."""

    logic: Logic
    parts: tuple[Comparison | Condition, ...]
    negated: bool = False


@dataclass(frozen=True, slots=True)
class AggregateStep:
    """A step that aggregates the input over a window.

    ``name`` is the WITH step or the ``INTO`` output. A WITH step before it may project or
    rename the input's columns (``AS``) (a WITH step that projects, ``AS`` renames): ``keys`` and
    the aggregates' columns are the input's, ``labels`` the step's own names; ``filters``
    are the WHERE conditions of that step and of this one.
    """

    name: str
    window: Window
    keys: tuple[str, ...]
    aggregates: tuple[Aggregate, ...]
    filters: tuple[Condition, ...] = ()
    having: Condition | None = None
    hidden: tuple[Aggregate, ...] = ()
    #: the keys as the step names them (``keys`` are the input's columns they read)
    labels: tuple[str, ...] = ()
    #: the WITH step it reads (``None``: the input itself)
    reads: str | None = None

    def key_labels(self) -> tuple[str, ...]:
        """The keys as the step names them."""
        return self.labels or self.keys

    def describe(self) -> str:
        """``step x: COUNT(*), AVG(value) by device_id over TumblingWindow(1m)``."""
        shown = ", ".join(a.describe() for a in self.aggregates)
        by = f" by {', '.join(self.key_labels())}" if self.keys else ""
        having = " with HAVING" if self.having is not None else ""
        return f"step `{self.name}`: {shown}{by} over {self.window.describe()}{having}"


@dataclass(frozen=True, slots=True)
class Skipped:
    """A step not replayed, and why, in one line."""

    name: str
    reason: str

    def describe(self) -> str:
        """``step `x`: JOIN is not replayed; events only``."""
        return f"step `{self.name}`: {self.reason}"


@dataclass(frozen=True, slots=True)
class Projection:
    """A WITH step that only filters and projects the input (read through by the steps after
    it): ``columns`` maps each name it selects to the input column it is (``None``: computed
    by an expression), ``None`` for ``SELECT *``; ``filters`` are its WHERE conditions and
    those of the steps it reads, on the input's columns."""

    name: str
    columns: tuple[tuple[str, str | None], ...] | None
    filters: tuple[Condition, ...] = ()


@dataclass(frozen=True, slots=True)
class QuerySteps:
    """The aggregating steps of a query that are replayed, the ones that are not, and the
    WITH steps that only filter and project the input."""

    steps: tuple[AggregateStep, ...]
    skipped: tuple[Skipped, ...]
    projections: tuple[Projection, ...] = ()
