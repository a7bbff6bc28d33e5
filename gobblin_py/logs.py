"""Logging set-up: structlog events, human-readable on a terminal and JSON lines otherwise (cron, Airflow)."""

from __future__ import annotations

import logging
import os
import sys

import structlog


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
        else structlog.dev.ConsoleRenderer(colors=sys.stderr.isatty())
    )
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(numeric),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=False,
    )
    logging.basicConfig(level=max(numeric, logging.WARNING), stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s")
    # py4j chatters at INFO about every callback connection
    logging.getLogger("py4j").setLevel(logging.WARNING)


def get_logger(name: str) -> structlog.stdlib.BoundLogger:
    return structlog.get_logger(name)
