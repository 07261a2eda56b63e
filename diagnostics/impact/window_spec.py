"""Reading a windowing function of ``GROUP BY`` (ASA's "Windowing functions" pages).

Both argument forms of each window: ``TumblingWindow(minute, 1[, offset])`` or
``TumblingWindow(Duration(minute, 1)[, Offset(millisecond, -1)])``; ``HoppingWindow(unit,
size, hop[, offset])`` or ``(Duration(...), Hop(...)[, Offset(...)])``; ``SlidingWindow(unit,
size)`` or ``(Duration(...))``; ``SessionWindow(unit, timeout, maxDuration)`` or
``(Timeout(...), MaxDuration(...))``, with ``OVER (PARTITION BY key)``. The short names
(``Tumbling``, ``Hopping``, ``Sliding``, ``Session``) too. Units as the pages list them.
"""

from __future__ import annotations

from collections.abc import Sequence

from diagnostics.durations import DAY, HOUR, MINUTE, MS, SECOND, US
from diagnostics.impact.conditions import Unsupported
from diagnostics.impact.model import Window, WindowKind
from diagnostics.jobdef.query import column_path
from diagnostics.jobdef.tokens import Kind, Token

#: The time units of the windowing functions, with their abbreviations.
UNITS: dict[str, int] = {
    "DAY": DAY, "DD": DAY, "D": DAY,
    "HOUR": HOUR, "HH": HOUR,
    "MINUTE": MINUTE, "MI": MINUTE, "N": MINUTE,
    "SECOND": SECOND, "SS": SECOND, "S": SECOND,
    "MILLISECOND": MS, "MS": MS,
    "MICROSECOND": US, "MCS": US,
}  # fmt: skip
_KINDS = {
    "TUMBLINGWINDOW": WindowKind.TUMBLING,
    "TUMBLING": WindowKind.TUMBLING,
    "HOPPINGWINDOW": WindowKind.HOPPING,
    "HOPPING": WindowKind.HOPPING,
    "SLIDINGWINDOW": WindowKind.SLIDING,
    "SLIDING": WindowKind.SLIDING,
    "SESSIONWINDOW": WindowKind.SESSION,
    "SESSION": WindowKind.SESSION,
}
#: Other windowing functions: named, not replayed.
OTHER_WINDOWS = frozenset({"SNAPSHOTWINDOW", "WINDOWS", "WINDOW"})
#: The largest window ASA accepts (every windowing page: 7 days).
MAX_WINDOW_NS = 7 * DAY


class WindowError(ValueError):
    """A windowing function written wrongly (a unit, a size): the message says which."""


def is_window(tok: Token) -> bool:
    """True for the name of a supported windowing function."""
    return tok.kind is Kind.WORD and tok.value.upper() in _KINDS


def split_arguments(tokens: Sequence[Token]) -> list[list[Token]]:
    """The comma-separated arguments between ``tokens[0] == '('`` and the last ``')'``."""
    args: list[list[Token]] = [[]]
    depth = 0
    for tok in tokens[1:-1]:
        if tok.is_punct("(") or tok.is_punct(")"):
            depth += 1 if tok.is_punct("(") else -1
        if depth == 0 and tok.is_punct(","):
            args.append([])
        else:
            args[-1].append(tok)
    return args if args != [[]] else []


def _unit(tok: Token) -> int:
    unit = UNITS.get(tok.value.upper()) if tok.kind is Kind.WORD else None
    if unit is None:
        msg = (
            f"'{tok.text}' is not a time unit (day, hour, minute, second, millisecond, "
            "microsecond, or dd, d, hh, mi, n, ss, s, ms, mcs)"
        )
        raise WindowError(msg)
    return unit


def _count(tokens: Sequence[Token], what: str) -> int:
    text = "".join(t.text for t in tokens)
    try:
        return int(text)
    except ValueError as exc:
        msg = f"{what} '{text}' is not a whole number"
        raise WindowError(msg) from exc


def _named(arg: Sequence[Token], name: str) -> int | None:
    """``Name(unit, n)`` as nanoseconds; None when ``arg`` is not a call to ``name``."""
    if len(arg) < 2 or not arg[0].is_word(name.upper()) or not arg[1].is_punct("("):
        return None
    inner = split_arguments(arg[1:])
    if len(inner) != 2 or len(inner[0]) != 1:
        msg = f"{name}(...) takes a time unit and a size"
        raise WindowError(msg)
    return _unit(inner[0][0]) * _count(inner[1], f"{name} size")


def _positive(value: int, what: str, call: str) -> int:
    if value <= 0:
        msg = f"{call}: the {what} must be positive"
        raise WindowError(msg)
    if value > MAX_WINDOW_NS:
        msg = f"{call}: the {what} is over 7 days, the largest window ASA accepts"
        raise WindowError(msg)
    return value


def _sizes(args: list[list[Token]], names: Sequence[str], call: str) -> list[int | None]:
    """The sizes of ``args`` in nanoseconds: the ``(unit, n, m, ...)`` form or the
    ``Name(unit, n)`` form (``names`` in order; the last ones optional)."""
    if args and len(args[0]) == 1 and args[0][0].kind is Kind.WORD and len(args) > 1:
        unit = _unit(args[0][0])
        values = [unit * _count(a, "size") for a in args[1:]]
        if len(values) > len(names):
            msg = f"{call} takes at most {len(names) + 1} arguments"
            raise WindowError(msg)
        return [*values, *([None] * (len(names) - len(values)))]
    found: list[int | None] = [None] * len(names)
    for arg in args:
        for i, name in enumerate(names):
            value = _named(arg, name)
            if value is not None:
                found[i] = value
                break
        else:
            shown = " ".join(t.text for t in arg)
            msg = f"{call}: '{shown}' is not one of {', '.join(n + '(...)' for n in names)}"
            raise WindowError(msg)
    return found


def read_window(call: Sequence[Token], over: Sequence[Token] = ()) -> Window:
    """The window of ``call`` (name and parenthesised arguments) and its ``OVER
    (PARTITION BY key)`` tokens (session windows)."""
    kind = _KINDS[call[0].value.upper()]
    shown = call[0].value
    args = split_arguments(call[1:])
    if kind is WindowKind.SESSION:
        timeout, longest = _sizes(args, ("Timeout", "MaxDuration"), shown)
        if timeout is None or longest is None:
            msg = f"{shown} needs a timeout and a maximum duration"
            raise WindowError(msg)
        key = None
        if over:
            inner = list(over[1:])
            if inner and inner[0].is_punct("(") and inner[-1].is_punct(")"):
                inner = inner[1:-1]
            if len(inner) < 3 or not (inner[0].is_word("PARTITION") and inner[1].is_word("BY")):
                msg = f"{shown} OVER must be (PARTITION BY column)"
                raise WindowError(msg)
            key = column_path(inner[2:])
            if key is None:
                raise Unsupported(
                    f"{shown} OVER (PARTITION BY ...) on an expression is not replayed"
                )
        return Window(
            kind,
            _positive(timeout, "timeout", shown),
            max_duration=_positive(longest, "maximum duration", shown),
            partition_key=key,
        )
    if over:
        msg = f"{shown} takes no OVER clause"
        raise WindowError(msg)
    if kind is WindowKind.SLIDING:
        (size,) = _sizes(args, ("Duration",), shown)
        if size is None:
            msg = f"{shown} needs a window size"
            raise WindowError(msg)
        return Window(kind, _positive(size, "window size", shown))
    if kind is WindowKind.TUMBLING:
        size, offset = _sizes(args, ("Duration", "Offset"), shown)
        hop = size
    else:
        size, hop, offset = _sizes(args, ("Duration", "Hop", "Offset"), shown)
    if size is None or hop is None:
        msg = f"{shown} needs a window size" + (
            " and a hop size" if kind is WindowKind.HOPPING else ""
        )
        raise WindowError(msg)
    return Window(
        kind,
        _positive(size, "window size", shown),
        hop=_positive(hop, "hop size", shown),
        offset=offset or 0,
    )
