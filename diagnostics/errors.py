"""The project's error types, and the settings an error can be about.

Every error a user can cause is an :class:`OrderdocError`; the command line prints its
message on one line and exits with code 2. Anything else is a bug.

Library errors speak of settings, never of command-line flags: an error that a setting
resolves carries it (:attr:`OrderdocError.setting`, a :class:`Setting`) and its message uses
the setting's words; the command line maps the setting to its flag
(:mod:`diagnostics.cli.flags`), the app to its field.
"""

from __future__ import annotations

from enum import StrEnum


class Setting(StrEnum):
    """The settings the library's errors name (each value is the words a message uses)."""

    ARRIVAL = "arrival column"
    PARTITION = "partition column"
    PATH_FORMAT = "capture path format"
    CAPTURE = "event capture"
    TIMESTAMP_BY = "TIMESTAMP BY column"
    OVER = "TIMESTAMP BY ... OVER columns"
    PARTITION_BY = "PARTITION BY"
    PARTITIONS = "partition count"
    LATE_ARRIVAL = "late-arrival tolerance"
    OUT_OF_ORDER = "out-of-order tolerance"
    EVENT_COUNT = "number of events"
    DURATION = "duration"
    SEED = "seed"
    START = "start time"
    OUTPUT = "output path"
    ERROR_WINDOW = "error window"
    IDLE_NOTICE = "idle notice interval"
    JOB = "job name"
    SOURCE = "input name"
    SPARK_MASTER = "Spark master"
    SPARK_REMOTE = "Spark Connect URL"
    CTI_EVERY = "CTI frequency"
    CTI_DELAY = "CTI delay"
    CTI_IMPORT = "imported CTIs"
    END_COLUMN = "interval end column"
    WEBHOOK = "webhook URL"
    EVALUATION_TIME = "evaluation time"
    JOB_DEFINITION = "job definition"
    PARAMETERS = "ARM parameter file"
    JOB_INPUT = "job input"
    FIX_FOLDER = "fix folder"
    WATCH_INTERVAL = "watch interval"
    WATCH_STATE = "state folder"
    METRICS_PORT = "metrics port"
    RULES = "engine rules"
    WINDOW = "window size"
    OUT_OF_ORDERNESS = "Flink out-of-orderness bound"
    IDLENESS = "Flink idleness timeout"
    ALLOWED_LATENESS = "Flink allowed lateness"
    WATERMARK_INTERVAL = "Flink watermark interval"
    WATERMARK_DELAY = "Spark watermark delay"
    TRIGGER = "Spark trigger interval"
    INPUT_COLUMN = "Spark input column"


class OrderdocError(Exception):
    """Base class of errors caused by input, flags or configuration (exit code 2).

    ``setting``: the setting that resolves the error, when one does.
    """

    exit_code = 2

    def __init__(self, message: str = "", setting: Setting | None = None) -> None:
        super().__init__(message)
        self.setting = setting


class UsageError(OrderdocError):
    """A setting (a command-line flag) has a bad value (the message names the setting)."""


class InputError(OrderdocError):
    """An input file is unreadable or lacks what is needed (the message names file, column, row)."""


class SettingError(InputError):
    """An input error that choosing ``setting`` resolves (e.g. which column is the arrival)."""

    def __init__(self, message: str, setting: Setting) -> None:
        super().__init__(message, setting)
        self.setting: Setting = setting


class PolicyError(OrderdocError):
    """An ordering policy is invalid (the message names the setting and the allowed range)."""


class EngineStateError(OrderdocError):
    """A batch was fed to the incremental engine in a way that breaks its contract."""


def setting_of(exc: BaseException) -> Setting | None:
    """The setting ``exc`` or an error it was raised from is about, if any."""
    seen: BaseException | None = exc
    while seen is not None:
        setting = getattr(seen, "setting", None)
        if isinstance(setting, Setting):
            return setting
        seen = seen.__cause__
    return None
