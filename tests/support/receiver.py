"""Throwaway HTTP receivers on loopback, for what the server sends out (webhooks, push
notices, federation's deliveries): the test says what each request gets back and keeps
what it wants of it."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

# A POST's path, its headers (names lower-cased) and body -> the status and extra headers
# of the answer, whose body is empty.
OnPost = Callable[[str, dict[str, str], bytes], tuple[int, dict[str, str]]]
# A GET's path -> the body and media type of a 200.
OnGet = Callable[[str], tuple[bytes, str]]


@contextmanager
def receiving(
    on_post: OnPost,
    *,
    on_get: OnGet | None = None,
    host: str = "127.0.0.1",
    backlog: int = 5,
) -> Iterator[int]:
    """Serve on ``host`` (a free port, which is yielded) until the block ends. Without
    ``on_get`` a GET is refused (501); ``backlog`` is the listen queue, for receivers
    that several instances deliver to at once."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"]))
            headers = {k.lower(): v for k, v in self.headers.items()}
            status, extra = on_post(self.path, headers, body)
            self.send_response(status)
            for name, value in extra.items():
                self.send_header(name, value)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    if on_get is not None:
        answer_get = on_get

        def do_GET(self: BaseHTTPRequestHandler) -> None:
            body, media = answer_get(self.path)
            self.send_response(200)
            self.send_header("Content-Type", media)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        Handler.do_GET = do_GET  # type: ignore[attr-defined]

    class Server(ThreadingHTTPServer):
        request_queue_size = backlog

    server = Server((host, 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()
