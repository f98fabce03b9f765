"""A STAND-IN for a Misskey server: no Misskey installs here (it needs PostgreSQL, Redis
and a Node build), so this small server on loopback follows Misskey's published API for
what anonbox uses of it, and nothing more:

- NodeInfo (``/.well-known/nodeinfo`` → ``/nodeinfo/2.1``, ``software.name`` "misskey");
- MiAuth (https://misskey-hub.net/en/docs/for-developers/api/token/miauth/): the
  person opens ``/miauth/{session}?name&callback&permission``, allows it, and is sent to
  ``callback?session={session}``; the app then asks ``POST /api/miauth/{session}/check``
  and gets ``{"ok": true, "token", "user"}``;
- ``POST /api/drive/files/create`` (multipart: ``i``, ``file``, ``comment`` — the alt
  text, ``name``) → a DriveFile;
- ``POST /api/notes/create`` (JSON: ``i``, ``text``, ``visibility``, ``cw``,
  ``fileIds``) → ``{"createdNote": Note}``.

A missing or unknown ``i`` is refused as Misskey refuses it: 401 with
``{"error": {"code": "AUTHENTICATION_FAILED", ...}}``. What the tests look at (the notes,
the files, revoking a token) is in-process, not HTTP.
"""

from __future__ import annotations

import json
import secrets
import threading
import uuid
from dataclasses import dataclass, field
from email.parser import BytesParser
from email.policy import HTTP
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

from tests.server import free_port


@dataclass
class MisskeyUser:
    id: str
    username: str
    name: str


@dataclass
class _Session:
    callback: str
    permission: list[str]
    user: MisskeyUser | None = None
    token: str | None = None


@dataclass
class MisskeyStandIn:
    """The stand-in's state; ``url`` once started."""

    url: str = ""
    users: dict[str, MisskeyUser] = field(default_factory=dict)
    tokens: dict[str, MisskeyUser] = field(default_factory=dict)
    sessions: dict[str, _Session] = field(default_factory=dict)
    files: dict[str, dict[str, Any]] = field(default_factory=dict)
    file_bytes: dict[str, bytes] = field(default_factory=dict)
    notes: list[dict[str, Any]] = field(default_factory=list)
    # The next this many notes/create answer 503, as a server restarting does.
    unavailable: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def new_user(self) -> MisskeyUser:
        user = MisskeyUser(uuid.uuid4().hex[:10], f"m{uuid.uuid4().hex[:8]}", "Misskey person")
        self.users[user.username] = user
        return user

    def allow(self, miauth_url: str, user: MisskeyUser) -> str:
        """The person on the MiAuth page presses "allow": where they are sent back."""
        parts = urlsplit(miauth_url)
        session_id = parts.path.rsplit("/", 1)[1]
        query = parse_qs(parts.query)
        with self.lock:
            session = _Session(
                callback=query["callback"][0], permission=query["permission"][0].split(",")
            )
            session.user = user
            session.token = secrets.token_urlsafe(24)
            self.sessions[session_id] = session
        separator = "&" if "?" in session.callback else "?"
        return f"{session.callback}{separator}{urlencode({'session': session_id})}"

    def revoke_all(self, user: MisskeyUser) -> None:
        with self.lock:
            for token in [t for t, u in self.tokens.items() if u is user]:
                del self.tokens[token]

    def notes_of(self, user: MisskeyUser) -> list[dict[str, Any]]:
        return [n for n in self.notes if n["userId"] == user.id]


def _handler(state: MisskeyStandIn) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _send(self, status: int, body: Any) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _refuse(self) -> None:
            self._send(
                401,
                {
                    "error": {
                        "message": "Authentication failed. Please ensure your token is correct.",
                        "code": "AUTHENTICATION_FAILED",
                        "id": "b0a7f5f8-dc2f-4171-b91f-de88ad238e14",
                    }
                },
            )

        def do_GET(self) -> None:
            path = urlsplit(self.path).path
            if path == "/.well-known/nodeinfo":
                self._send(
                    200,
                    {
                        "links": [
                            {
                                "rel": "http://nodeinfo.diaspora.software/ns/schema/2.1",
                                "href": f"{state.url}/nodeinfo/2.1",
                            }
                        ]
                    },
                )
            elif path == "/nodeinfo/2.1":
                self._send(
                    200,
                    {
                        "version": "2.1",
                        "software": {"name": "misskey", "version": "2025.4.0"},
                        "protocols": ["activitypub"],
                    },
                )
            else:
                self._send(404, {"error": {"code": "NO_SUCH_ENDPOINT"}})

        def _body(self) -> tuple[dict[str, Any], dict[str, bytes]]:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            kind = self.headers.get("Content-Type", "")
            if kind.startswith("multipart/form-data"):
                message = BytesParser(policy=HTTP).parsebytes(
                    f"Content-Type: {kind}\r\n\r\n".encode() + raw
                )
                fields: dict[str, Any] = {}
                files: dict[str, bytes] = {}
                for part in message.iter_parts():
                    name = part.get_param("name", header="content-disposition")
                    payload = part.get_payload(decode=True) or b""
                    if part.get_filename():
                        files[str(name)] = payload
                    else:
                        fields[str(name)] = payload.decode()
                return fields, files
            return (json.loads(raw) if raw else {}), {}

        def do_POST(self) -> None:
            path = urlsplit(self.path).path
            body, files = self._body()
            if path.startswith("/api/miauth/") and path.endswith("/check"):
                session = state.sessions.get(path.split("/")[3])
                if session is None or session.user is None or session.token is None:
                    self._send(200, {"ok": False})
                    return
                with state.lock:
                    state.tokens[session.token] = session.user
                user = session.user
                self._send(
                    200,
                    {
                        "ok": True,
                        "token": session.token,
                        "user": {
                            "id": user.id,
                            "username": user.username,
                            "name": user.name,
                            "host": None,
                        },
                    },
                )
                return
            user = state.tokens.get(str(body.get("i", "")))
            if path == "/api/drive/files/create":
                if user is None:
                    self._refuse()
                    return
                if "file" not in files:
                    self._send(400, {"error": {"code": "INVALID_PARAM"}})
                    return
                file_id = uuid.uuid4().hex[:10]
                drive = {
                    "id": file_id,
                    "name": body.get("name", "file"),
                    "type": "image/png",
                    "comment": body.get("comment"),
                    "size": len(files["file"]),
                    "userId": user.id,
                    "url": f"{state.url}/files/{file_id}",
                }
                state.files[file_id] = drive
                state.file_bytes[file_id] = files["file"]
                self._send(200, drive)
            elif path == "/api/notes/create":
                if user is None:
                    self._refuse()
                    return
                with state.lock:
                    down = state.unavailable > 0
                    state.unavailable -= 1 if down else 0
                if down:
                    self._send(503, {"error": {"code": "INTERNAL_ERROR"}})
                    return
                if body.get("visibility") not in ("public", "home", "followers", "specified"):
                    self._send(400, {"error": {"code": "INVALID_PARAM"}})
                    return
                note = {
                    "id": uuid.uuid4().hex[:10],
                    "userId": user.id,
                    "text": body.get("text"),
                    "cw": body.get("cw"),
                    "visibility": body["visibility"],
                    "fileIds": list(body.get("fileIds") or []),
                    "files": [state.files[f] for f in body.get("fileIds") or []],
                }
                state.notes.append(note)
                self._send(200, {"createdNote": note})
            else:
                self._send(404, {"error": {"code": "NO_SUCH_ENDPOINT"}})

    return Handler


class MisskeyServer:
    def __init__(self) -> None:
        self.state = MisskeyStandIn()
        port = free_port()
        self.state.url = f"http://127.0.0.1:{port}"
        self._server = ThreadingHTTPServer(("127.0.0.1", port), _handler(self.state))
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
