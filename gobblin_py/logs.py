"""Logging set-up: structlog events, human-readable on a terminal and JSON lines otherwise (cron, Airflow).

Lines go to whatever ``sys.stderr`` is when they are written, so a live progress display that takes stderr over
prints them above itself. A listener (:func:`add_listener`) sees every event before it is rendered and may take
it instead of a line (the progress display takes the INFO events it shows).
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Callable, MutableMapping
from typing import Any

import structlog

Listener = Callable[[str, MutableMapping[str, Any]], bool]
_listeners: list[Listener] = []


class _CurrentStderr:
    """``sys.stderr`` as it is at each write (a display may have replaced it since logging was set up)."""

    def write(self, text: str) -> int:
        return sys.stderr.write(text)

    def flush(self) -> None:
        sys.stderr.flush()


def colors_wanted(stream: Any = None) -> bool:
    """Colors on a terminal, unless ``NO_COLOR`` is set or ``TERM=dumb``."""
    stream = sys.stderr if stream is None else stream
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    return bool(getattr(stream, "isatty", lambda: False)())


def add_listener(listener: Listener) -> None:
    """Call ``listener(level, event)`` for every event logged; when it returns True, no line is written."""
    _listeners.append(listener)


def remove_listener(listener: Listener) -> None:
    """Stop calling ``listener``."""
    if listener in _listeners:
        _listeners.remove(listener)


def _dispatch(logger: Any, method: str, event: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
    taken = False
    for listener in list(_listeners):
        taken = listener(method, event) or taken
    if taken:
        raise structlog.DropEvent
    return event


def log_level() -> str:
    """The level set by :func:`configure_logging` (``INFO`` before it is called)."""
    return os.environ.get("GPY_LOG_LEVEL", "INFO")


def log_format() -> str:
    """``console`` or ``json``, as :func:`configure_logging` resolved it."""
    return os.environ.get("GPY_LOG_FORMAT", "console" if sys.stderr.isatty() else "json")


def configure_logging(level: str = "INFO", fmt: str = "auto") -> None:
    """Route structlog and stdlib logging to stderr at ``level``; ``fmt`` is ``console``, ``json`` or ``auto``."""
    numeric = logging.getLevelName(level.upper())
    if not isinstance(numeric, int):
        numeric = logging.INFO
    if fmt == "auto":
        fmt = "console" if sys.stderr.isatty() else "json"
    # Spark executors' Python workers inherit these and log the same way
    os.environ["GPY_LOG_LEVEL"] = logging.getLevelName(numeric)
    os.environ["GPY_LOG_FORMAT"] = fmt
    renderer = (
        structlog.processors.JSONRenderer()
        if fmt == "json"
        else structlog.dev.ConsoleRenderer(colors=colors_wanted())
    )
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            _dispatch,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(numeric),
        logger_factory=structlog.PrintLoggerFactory(file=_CurrentStderr()),
        cache_logger_on_first_use=False,
    )
    logging.basicConfig(level=max(numeric, logging.WARNING), stream=_CurrentStderr(),
                        format="%(levelname)s %(name)s: %(message)s")
    # py4j chatters at INFO about every callback connection
    logging.getLogger("py4j").setLevel(logging.WARNING)


def get_logger(name: str) -> structlog.stdlib.BoundLogger:
    return structlog.get_logger(name)
