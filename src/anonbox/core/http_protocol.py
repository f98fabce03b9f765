"""uvicorn's fast HTTP parser (httptools), with the limits it lacks on the request head.

httptools buffers a request line and headers of any size, so one client could make the
server hold megabytes per connection. Here the head (request line plus headers) may
be at most ``MAX_HEAD_BYTES``; past that the caller gets a 431 in the error envelope
and the connection is closed, before anything reaches the application.

Nor does it wait for a head only so long: a client that opens connections and sends
their heads a byte at a time (slowloris) could hold them all open. Here a head must be
complete within ``HEAD_TIMEOUT_SECONDS`` (``ANONBOX_HEAD_TIMEOUT_SECONDS``, 10) of the
connection opening or of its first byte on a kept-alive connection; otherwise the
connection is closed. Between requests, uvicorn's keep-alive timeout closes idle ones.

Nor does it cap connections. Here each worker holds at most ``MAX_CONNECTIONS``
(``ANONBOX_MAX_CONNECTIONS``, 1000) at once; one more is answered, as soon as its request
head has arrived, with a 503 in the error envelope and ``Retry-After: 1``, and closed.
(uvicorn's own ``limit_concurrency`` answers a bare text 503.) A connection serves one
request at a time, so this also caps the requests in progress.
"""

from __future__ import annotations

import asyncio
import os
import time
from datetime import UTC, datetime
from typing import Any

import msgspec
from uvicorn.protocols.http.httptools_impl import STATUS_LINE, HttpToolsProtocol

from anonbox.core.envelope import error_envelope

MAX_HEAD_BYTES = 32 * 1024  # what nginx allows by default (4 buffers of 8 KiB)
# Read here, not from Settings: uvicorn makes protocols in each worker, from this module.
HEAD_TIMEOUT_SECONDS = float(os.environ.get("ANONBOX_HEAD_TIMEOUT_SECONDS") or 10)
MAX_CONNECTIONS = int(os.environ.get("ANONBOX_MAX_CONNECTIONS") or 1000)


class _HeadTooLarge(Exception):
    """Raised from a parser callback; httptools turns it into a parse error."""


class _OverCapacity(Exception):
    """Raised from a parser callback, for a connection past ``MAX_CONNECTIONS``."""


class BoundedHttpToolsProtocol(HttpToolsProtocol):
    open_connections = 0  # in this worker process

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._head_bytes = 0
        self._in_head = True
        self._too_large = False
        self._over_capacity = False
        self._head_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        BoundedHttpToolsProtocol.open_connections += 1
        self._over_capacity = BoundedHttpToolsProtocol.open_connections > MAX_CONNECTIONS
        self._start_head_timer()

    def connection_lost(self, exc: Exception | None) -> None:
        BoundedHttpToolsProtocol.open_connections -= 1
        self._stop_head_timer()
        super().connection_lost(exc)

    def _start_head_timer(self) -> None:
        if self._head_timer is None:
            self._head_timer = self.loop.call_later(HEAD_TIMEOUT_SECONDS, self._head_too_slow)

    def _stop_head_timer(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_too_slow(self) -> None:
        self._head_timer = None
        if self._in_head and not self.transport.is_closing():
            self.transport.close()

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._head_bytes = 0
        self._in_head = True
        self._start_head_timer()  # a kept-alive connection's next request

    def _count(self, size: int) -> None:
        self._head_bytes += size
        if self._head_bytes > MAX_HEAD_BYTES:
            self._too_large = True
            raise _HeadTooLarge

    def on_url(self, url: bytes) -> None:
        self._count(len(url))
        super().on_url(url)

    def on_header(self, name: bytes, value: bytes) -> None:
        self._count(len(name) + len(value) + 4)
        super().on_header(name, value)

    def on_headers_complete(self) -> None:
        self._in_head = False
        self._stop_head_timer()
        if self._over_capacity:
            raise _OverCapacity  # answered in send_400_response, as a parse error is
        super().on_headers_complete()

    def data_received(self, data: bytes) -> None:
        # httptools hands over a header only once it is complete, so a single endless
        # header must also be cut off by the raw bytes received while in the head.
        if self._in_head and self._head_bytes + len(data) > 4 * MAX_HEAD_BYTES:
            self._send_431()
            return
        super().data_received(data)

    def send_400_response(self, msg: str) -> None:
        # uvicorn answers any parse error with a plain 400; ours was a head too large.
        if self._too_large:
            self._send_431()
        elif self._over_capacity:
            self._send_error(
                503,
                "service_unavailable",
                "The server has too many connections open; try again in a moment",
                self._request_line(),
                extra_headers=b"retry-after: 1\r\n",
            )
        else:
            super().send_400_response(msg)

    def _send_431(self) -> None:
        self._send_error(
            431,
            "request_header_too_large",
            f"The request line and headers are larger than {MAX_HEAD_BYTES} bytes",
            self._request_line(),
        )

    def _request_line(self) -> dict[str, Any]:
        """As much of the request line as was read, as scope entries. The method is known
        once the target has begun (before that, httptools reports its first, DELETE)."""
        target: bytes = getattr(self, "url", b"")
        method = self.parser.get_method().decode("latin-1") if target else ""
        path, _, query = target.partition(b"?")
        return {
            "method": method,
            "raw_path": path,
            "path": path.decode("latin-1"),
            "query_string": query,
        }

    def _send_error(
        self,
        status: int,
        code: str,
        message: str,
        request: dict[str, Any],
        extra_headers: bytes = b"",
    ) -> None:
        """Answer in the error envelope, from below the application, and close."""
        scope = {
            "client": self.client,
            "method": "",
            "raw_path": b"",
            "path": "",
            "query_string": b"",
            **request,
            "anonbox.started": (time.perf_counter(), datetime.now(UTC)),
        }
        body = msgspec.json.encode(error_envelope(scope, status, code, message))
        self.transport.write(
            STATUS_LINE[status]
            + b"content-type: application/json\r\n"
            + b"content-length: "
            + str(len(body)).encode()
            + b"\r\n"
            + extra_headers
            + b"connection: close\r\n\r\n"
            + body
        )
        self.transport.close()
