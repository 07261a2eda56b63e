"""The project's error types.

Every error a user can cause is an :class:`OrderdocError`; the command line prints its
message on one line and exits with code 2. Anything else is a bug.
"""

from __future__ import annotations


class OrderdocError(Exception):
    """Base class of errors caused by input, flags or configuration (exit code 2)."""

    exit_code = 2


class UsageError(OrderdocError):
    """A command-line flag has a bad value (the message names the flag)."""


class InputError(OrderdocError):
    """An input file is unreadable or lacks what is needed (the message names file, column, row)."""


class PolicyError(OrderdocError):
    """An ordering policy is invalid (the message names the setting and the allowed range)."""


class EngineStateError(OrderdocError):
    """A batch was fed to the incremental engine in a way that breaks its contract."""
