"""Logging: structured events, human-readable on a terminal and JSON lines otherwise (cron, Airflow).

An event is a name and key/value fields: ``log.info("job_committed", job="Orders", records=10)``. As a JSON
line it is ``{"job": "Orders", "records": 10, "event": "job_committed", "level": "info", "timestamp": ...}``;
on a terminal ``<timestamp> [info     ] job_committed   job=Orders records=10``, in colour unless ``NO_COLOR``.
This is a small module of its own rather than structlog because every ``gpy`` process pays for its imports
before any work: structlog pulls in rich and asyncio, about a quarter of a small job's start-up.

Lines go to whatever ``sys.stderr`` is when they are written, so a live progress display that takes stderr over
prints them above itself. A listener (:func:`add_listener`) sees every event before it is rendered and may take
it instead of a line (the progress display takes the INFO events it shows). Stdlib ``logging`` (libraries) goes
to stderr at WARNING and above. Credentials in an event's fields are masked (:mod:`gobblin_py.sdk.redact`).
"""

from __future__ import annotations

import json
import logging
import os
import sys
import threading
import traceback
from collections.abc import Callable, MutableMapping
from datetime import datetime, timezone
from typing import Any

from gobblin_py.sdk.redact import redact, redact_value

Listener = Callable[[str, MutableMapping[str, Any]], bool]
_listeners: list[Listener] = []
_LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING, "error": logging.ERROR,
           "critical": logging.CRITICAL}
_COLORS = {"debug": "\x1b[32m", "info": "\x1b[32m", "warning": "\x1b[33m", "error": "\x1b[31m",
           "critical": "\x1b[31;1m"}
_RESET, _DIM, _BRIGHT, _KEY, _VALUE = "\x1b[0m", "\x1b[2m", "\x1b[1m", "\x1b[36m", "\x1b[35m"
_write_lock = threading.Lock()


def _isatty(stream: Any) -> bool:
    isatty = getattr(stream, "isatty", None)
    return bool(isatty()) if callable(isatty) else False


class _Output:
    """Where events go and how they look: set by :func:`configure_logging`, read from the environment before."""

    def __init__(self) -> None:
        self.threshold = _LEVELS.get(os.environ.get("GPY_LOG_LEVEL", "INFO").lower(), logging.INFO)
        self.fmt = os.environ.get("GPY_LOG_FORMAT") or ("console" if _isatty(sys.stderr) else "json")
        self.colors = False


_output = _Output()


def colors_wanted(stream: Any = None) -> bool:
    """Colors on a terminal, unless ``NO_COLOR`` is set or ``TERM=dumb``."""
    stream = sys.stderr if stream is None else stream
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    return _isatty(stream)


def add_listener(listener: Listener) -> None:
    """Call ``listener(level, event)`` for every event logged; when it returns True, no line is written."""
    _listeners.append(listener)


def remove_listener(listener: Listener) -> None:
    """Stop calling ``listener``."""
    if listener in _listeners:
        _listeners.remove(listener)


def log_level() -> str:
    """The level set by :func:`configure_logging` (``INFO`` before it is called)."""
    return os.environ.get("GPY_LOG_LEVEL", "INFO")


def log_format() -> str:
    """``console`` or ``json``, as :func:`configure_logging` resolved it."""
    return os.environ.get("GPY_LOG_FORMAT", "console" if sys.stderr.isatty() else "json")


def configure_logging(level: str = "INFO", fmt: str = "auto") -> None:
    """Events and stdlib logging to stderr at ``level``; ``fmt`` is ``console``, ``json`` or ``auto``."""
    numeric = logging.getLevelName(level.upper())
    if not isinstance(numeric, int):
        numeric = logging.INFO
    if fmt == "auto":
        fmt = "console" if _isatty(sys.stderr) else "json"
    # Spark executors' Python workers inherit these and log the same way
    os.environ["GPY_LOG_LEVEL"] = logging.getLevelName(numeric)
    os.environ["GPY_LOG_FORMAT"] = fmt
    _output.threshold, _output.fmt = numeric, fmt
    _output.colors = fmt == "console" and colors_wanted()
    logging.basicConfig(level=max(numeric, logging.WARNING), stream=_CurrentStderr(),
                        format="%(levelname)s %(name)s: %(message)s")
    # py4j chatters at INFO about every callback connection
    logging.getLogger("py4j").setLevel(logging.WARNING)


class _CurrentStderr:
    """``sys.stderr`` as it is at each write (a display may have replaced it since logging was set up)."""

    def write(self, text: str) -> int:
        return sys.stderr.write(text)

    def flush(self) -> None:
        sys.stderr.flush()


class EventLogger:
    """Logs named events with key/value fields; ``exc_info=True`` adds the exception being handled."""

    def __init__(self, name: str) -> None:
        self.name = name

    def debug(self, event: str, **fields: Any) -> None:
        _emit("debug", event, fields)

    def info(self, event: str, **fields: Any) -> None:
        _emit("info", event, fields)

    def warning(self, event: str, **fields: Any) -> None:
        _emit("warning", event, fields)

    def error(self, event: str, **fields: Any) -> None:
        _emit("error", event, fields)

    def critical(self, event: str, **fields: Any) -> None:
        _emit("critical", event, fields)

    def exception(self, event: str, **fields: Any) -> None:
        fields.setdefault("exc_info", True)
        _emit("error", event, fields)


def get_logger(name: str) -> EventLogger:
    """The event logger for ``name`` (cheap; loggers hold no state but their name)."""
    return EventLogger(name)


def _emit(level: str, event: str, fields: dict[str, Any]) -> None:
    if _LEVELS[level] < _output.threshold:
        return
    exc_info = fields.pop("exc_info", None)
    record: dict[str, Any] = {**redact_value(fields), "event": event, "level": level}
    taken = False
    for listener in list(_listeners):
        taken = listener(level, record) or taken
    if taken:
        return
    record["timestamp"] = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    trace = redact(_traceback_text(exc_info))
    if _output.fmt == "json":
        if trace:
            record["exception"] = trace
        line = json.dumps(record, default=repr) + "\n"
    else:
        line = _console_line(record) + "\n" + (trace + "\n" if trace else "")
    with _write_lock:
        sys.stderr.write(line)
        sys.stderr.flush()


def _traceback_text(exc_info: Any) -> str:
    if not exc_info:
        return ""
    if isinstance(exc_info, BaseException):
        exc_info = (type(exc_info), exc_info, exc_info.__traceback__)
    elif not isinstance(exc_info, tuple):
        exc_info = sys.exc_info()
    if exc_info[0] is None:
        return ""
    return "".join(traceback.format_exception(*exc_info)).rstrip("\n")


def _console_value(value: Any) -> str:
    if isinstance(value, str) and value and not any(c.isspace() for c in value):
        return value
    return repr(value)


def _console_line(record: dict[str, Any]) -> str:
    level, event, stamp = record["level"], str(record["event"]), record["timestamp"]
    pairs = sorted((k, v) for k, v in record.items() if k not in ("event", "level", "timestamp"))
    if not _output.colors:
        text = f"{stamp} [{level:<9}] {event:<30} " + " ".join(f"{k}={_console_value(v)}" for k, v in pairs)
        return text.rstrip()
    fields = " ".join(f"{_KEY}{k}{_RESET}={_VALUE}{_console_value(v)}{_RESET}" for k, v in pairs)
    return (f"{_DIM}{stamp}{_RESET} [{_COLORS[level]}{level:<9}{_RESET}] {_BRIGHT}{event:<30}{_RESET} "
            f"{fields}").rstrip()
