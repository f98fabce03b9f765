"""Logs: one JSON object per line on stderr, or plain text, the same for every logger.

Plain text is the default in development (``ANONBOX_ENV=development``, itself the
default): there a person reads the log at a terminal, the development sign-in mail among
it, written as it reads. Anywhere else a machine collects the log, so each line is one
JSON object. ``ANONBOX_LOG_FORMAT`` chooses either way.

The service's own records, uvicorn's and every library's go through one handler. A
request adds one line of its own (``event: "request"``) naming its id, method, route
*template*, status and duration. No line ever carries a client address, a concrete
path, a query string or a body: the route template is all a reader learns of where a
request went (see docs/safety.md).

Request lines skip the logging machinery (a LogRecord alone costs more than the rest of
a small request): they are formatted straight into the handler, and the lines of the
requests that finish in one turn of the event loop are written together.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import time
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import msgspec

from anonbox.core.settings import DEVELOPMENT, ConfigurationError

LEVELS = ("debug", "info", "warning", "error", "critical")
FORMATS = ("json", "text")
REQUEST_LOGGER = "anonbox.request"

# The id of the request this task is serving, so that any record logged while serving it
# (an unhandled error, a provider failure) can be joined to the request's own line.
current_request_id: ContextVar[str | None] = ContextVar("anonbox_request_id", default=None)

_request_logger = logging.getLogger(REQUEST_LOGGER)
_encode = msgspec.json.Encoder().encode


@dataclass(frozen=True, slots=True)
class LogSettings:
    format: str = "json"
    level: str = "info"

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None) -> LogSettings:
        env = os.environ if environ is None else environ
        development = env.get("ANONBOX_ENV", DEVELOPMENT) == DEVELOPMENT
        fmt = env.get("ANONBOX_LOG_FORMAT", "text" if development else "json").strip().lower()
        level = env.get("ANONBOX_LOG_LEVEL", "info").strip().lower()
        if fmt not in FORMATS:
            raise ConfigurationError(f"ANONBOX_LOG_FORMAT must be json or text, not {fmt!r}")
        if level not in LEVELS:
            raise ConfigurationError(
                f"ANONBOX_LOG_LEVEL must be one of {', '.join(LEVELS)}, not {level!r}"
            )
        return cls(format=fmt, level=level)


class RequestLine(msgspec.Struct):
    """A request's line, in the order of every other line's keys."""

    ts: str
    level: str
    logger: str
    pid: int
    event: str
    request_id: str
    method: str
    route: str
    status: int
    duration_ms: float


_second_text: tuple[int, str] = (-1, "")


def _utc(created: float) -> str:
    """``2026-11-21T12:00:00.123Z``; the part up to the second is made once a second."""
    global _second_text
    second = int(created)
    if second != _second_text[0]:
        _second_text = (second, time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(second)))
    return f"{_second_text[1]}.{int((created - second) * 1000):03d}Z"


def _request_id_of(record: logging.LogRecord) -> str | None:
    found: str | None = getattr(record, "request_id", None) or current_request_id.get()
    return found


class JSONFormatter(logging.Formatter):
    """``{"ts", "level", "logger", "pid", "event", "request_id"?, "exception"?}``.

    Only these keys are written, never a record's other extras (uvicorn attaches a
    colour-coded copy of its messages as one).
    """

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "ts": _utc(record.created),
            "level": record.levelname.lower(),
            "logger": record.name,
            "pid": record.process,
            "event": record.getMessage(),
        }
        if request_id := _request_id_of(record):
            line["request_id"] = request_id
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        elif record.stack_info:
            line["stack"] = self.formatStack(record.stack_info)
        return _encode(line).decode()

    def format_request(self, line: RequestLine) -> str:
        return _encode(line).decode()


class TextFormatter(logging.Formatter):
    """``2026-11-21T12:00:00.000Z INFO anonbox.request request request_id=… status=201``."""

    def __init__(self) -> None:
        super().__init__("%(levelname)s %(name)s %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        text = f"{_utc(record.created)} {super().format(record)}"
        if request_id := _request_id_of(record):
            text += f" request_id={request_id}"
        return text

    def format_request(self, line: RequestLine) -> str:
        return (
            f"{line.ts} INFO {line.logger} {line.event} request_id={line.request_id} "
            f"method={line.method} route={line.route} status={line.status} "
            f"duration_ms={line.duration_ms}"
        )


class StderrHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """The process's one handler, to stderr; it also takes request lines directly."""

    def __init__(self) -> None:
        super().__init__(sys.stderr)
        self._pending: list[str] = []  # request lines not yet written
        global _request_sink
        _request_sink = self

    def add_request(self, line: RequestLine) -> bool:
        """Queue a request's line; False when this handler cannot format one."""
        formatter = self.formatter
        if not isinstance(formatter, JSONFormatter | TextFormatter):
            return False
        self._pending.append(formatter.format_request(line))
        if len(self._pending) == 1:
            try:
                asyncio.get_running_loop().call_soon(self.flush)
            except RuntimeError:  # no event loop: nothing to batch with
                self.flush()
        return True

    def _write_pending(self) -> None:
        if self._pending:
            pending, self._pending = self._pending, []
            with self.lock:  # type: ignore[union-attr]
                self.stream.write(self.terminator.join(pending) + self.terminator)

    def emit(self, record: logging.LogRecord) -> None:
        self._write_pending()  # lines stay in the order things happened
        super().emit(record)

    def flush(self) -> None:
        self._write_pending()
        super().flush()

    def close(self) -> None:
        global _request_sink
        if _request_sink is self:
            _request_sink = None
        super().close()


_request_sink: StderrHandler | None = None


def log_config(settings: LogSettings) -> dict[str, Any]:
    """A ``logging.config.dictConfig`` for the whole process, uvicorn included.

    uvicorn applies it in the parent and again in each worker it spawns. Its access log
    is silenced here as well as by ``access_log=False``: it would name every sender.
    """
    level = settings.level.upper()
    formatter = JSONFormatter if settings.format == "json" else TextFormatter
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"anonbox": {"()": f"{formatter.__module__}.{formatter.__qualname__}"}},
        "handlers": {
            "stderr": {"()": f"{StderrHandler.__module__}.StderrHandler", "formatter": "anonbox"}
        },
        "root": {"handlers": ["stderr"], "level": level},
        "loggers": {
            "uvicorn": {"handlers": [], "level": level, "propagate": True},
            "uvicorn.error": {"handlers": [], "level": level, "propagate": True},
            "uvicorn.access": {"handlers": [], "level": "CRITICAL", "propagate": False},
        },
    }


def log_request(
    request_id: str, method: str, route: str, status: int, duration_seconds: float
) -> None:
    """The one line a finished request leaves, at INFO."""
    if not _request_logger.isEnabledFor(logging.INFO):
        return
    now = time.time()
    duration_ms = round(duration_seconds * 1000, 3)
    line = RequestLine(
        _utc(now), "info", REQUEST_LOGGER, os.getpid(), "request",
        request_id, method, route, status, duration_ms,
    )  # fmt: skip
    sink = _request_sink
    if sink is not None and sink.add_request(line):
        return
    # Logging was not set up by log_config (the app run some other way): the usual path.
    _request_logger.info(
        "request %s %s %s %sms",
        method,
        route,
        status,
        duration_ms,
        extra={"request_id": request_id},
    )
