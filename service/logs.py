"""Structured logging, configured once at start-up: JSON lines when stderr is not a
terminal, readable lines when it is. One line per RPC (see `service.interceptors`).

The JSON chain is kept short because it runs once per RPC: the level, a UTC timestamp
(formatted once per second, then only the microseconds), exception formatting, and
orjson (about 4 us cheaper per line than the standard library's json)."""

from __future__ import annotations

import logging
import sys
import time
from typing import Any

import orjson
import structlog
from structlog.typing import EventDict, WrappedLogger

from service.tracing import add_call_ids

_configured = False


class UtcStamp:
    """`timestamp`: ISO 8601 in UTC with microseconds (2026-11-30T08:01:44.380966Z), as
    structlog's `TimeStamper(fmt="iso", utc=True)` writes it, for less work per line."""

    def __init__(self) -> None:
        self._second = -1
        self._prefix = ""

    def __call__(self, logger: WrappedLogger, name: str, event_dict: EventDict) -> EventDict:
        now = time.time()
        second = int(now)
        if second != self._second:
            self._prefix = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(second))
            self._second = second
        event_dict["timestamp"] = f"{self._prefix}.{int((now - second) * 1e6):06d}Z"
        return event_dict


def _fallback(value: Any) -> Any:
    """What orjson cannot encode itself is written as its repr (as structlog does)."""
    return repr(value)


def json_line(value: Any, **_: Any) -> str:
    """orjson's encoding as text (PrintLogger writes text to any stderr, captured or not)."""
    return orjson.dumps(value, default=_fallback).decode()


STDLIB_LOGGERS = ("uvicorn", "uvicorn.error", "uvicorn.access", "asyncio", "grpc")
"""Libraries that log through the standard library: their lines go through structlog too,
so every line is JSON (uvicorn wrote plain text into the JSON log)."""


class ToStructlog(logging.Handler):
    """A standard-library handler that hands each record to structlog, as one line with the
    logger's name, the level and the message (and the exception, formatted)."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            fields: dict[str, Any] = {"logger": record.name}
            if record.exc_info:
                fields["exc_info"] = record.exc_info
            structlog.get_logger(record.name).log(record.levelno, record.getMessage(), **fields)
        except Exception:  # a log line must never break the server
            self.handleError(record)


def route_stdlib_logging(level: int) -> None:
    handler = ToStructlog(level)
    for name in STDLIB_LOGGERS:
        logger = logging.getLogger(name)
        logger.handlers = [handler]
        logger.setLevel(level)
        logger.propagate = False


def configure_logging(level: str = "info", json: bool | None = None) -> None:
    """Idempotent: the first call wins (tests and `serve` may both call it)."""
    global _configured
    if _configured:
        return
    _configured = True
    as_json = not sys.stderr.isatty() if json is None else json
    processors: list[Any] = [
        structlog.contextvars.merge_contextvars,
        add_call_ids,
        structlog.processors.add_log_level,
    ]
    if as_json:
        processors += [
            UtcStamp(),
            structlog.processors.format_exc_info,
            structlog.processors.JSONRenderer(serializer=json_line),
        ]
    else:
        processors += [
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.dev.ConsoleRenderer(colors=sys.stderr.isatty()),
        ]
    structlog.configure(
        processors=processors,
        wrapper_class=structlog.make_filtering_bound_logger(
            logging.getLevelNamesMapping()[level.upper()]
        ),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=True,
    )
    route_stdlib_logging(logging.getLevelNamesMapping()[level.upper()])


def get_logger(name: str) -> Any:
    return structlog.get_logger(name)
