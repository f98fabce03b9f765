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

Every ``/api/`` exchange is kept in ``exchanges`` (the body as it arrived from anonbox,
the answer as sent), and the tests type-check them against npm ``misskey-js``'s endpoint
types with ``tsc`` (``tests/support/misskey_types.py``): the answers are whole ``Note``,
``DriveFile`` and ``UserDetailedNotMe`` objects and Misskey's error bodies, so that what
anonbox sends and what it reads are held to Misskey's published API, not to this file.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import threading
import time
import uuid
from dataclasses import dataclass, field
from email.parser import BytesParser
from email.policy import HTTP
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

from tests.server import free_port

# Misskey's own error bodies (ApiCallService / ApiServerService): message, code, id, kind.
AUTHENTICATION_FAILED = {
    "message": "Authentication failed. Please ensure your token is correct.",
    "code": "AUTHENTICATION_FAILED",
    "id": "b0a7f5f8-dc2f-4171-b91f-de88ad238e14",
    "kind": "client",
}
INVALID_PARAM = {
    "message": "Invalid param.",
    "code": "INVALID_PARAM",
    "id": "3d81ceae-475f-4600-b2a8-2bc116157532",
    "kind": "client",
}
FILE_REQUIRED = {
    "message": "File required.",
    "code": "FILE_REQUIRED",
    "id": "4267801e-70d1-416a-b011-4ee502885d8b",
    "kind": "client",
}
UNKNOWN_API_ENDPOINT = {
    "message": "Unknown API endpoint.",
    "code": "UNKNOWN_API_ENDPOINT",
    "id": "2ca3b769-540a-4f08-9dd5-b5a825b6d0f1",
    "kind": "client",
}


def _now() -> str:
    """A Misskey date: ISO 8601 in UTC with milliseconds."""
    t = time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + f".{int(t % 1 * 1000):03d}Z"


@dataclass
class MisskeyUser:
    id: str
    username: str
    name: str
    created_at: str = field(default_factory=_now)

    def lite(self, url: str) -> dict[str, Any]:
        """Misskey's ``UserLite`` of this person (a local user: ``host`` null)."""
        return {
            "id": self.id,
            "name": self.name,
            "username": self.username,
            "host": None,
            "avatarUrl": f"{url}/identicon/{self.id}",
            "avatarBlurhash": None,
            "avatarDecorations": [],
            "isBot": False,
            "isCat": False,
            "emojis": {},
            "onlineStatus": "unknown",
        }

    def detailed(self, url: str) -> dict[str, Any]:
        """Misskey's ``UserDetailedNotMe`` (what ``/api/miauth/{session}/check`` packs)."""
        return self.lite(url) | {
            "url": None,
            "uri": None,
            "movedTo": None,
            "alsoKnownAs": None,
            "createdAt": self.created_at,
            "updatedAt": None,
            "lastFetchedAt": None,
            "bannerUrl": None,
            "bannerBlurhash": None,
            "isLocked": False,
            "isSilenced": False,
            "isSuspended": False,
            "description": None,
            "location": None,
            "birthday": None,
            "lang": None,
            "fields": [],
            "verifiedLinks": [],
            "followersCount": 0,
            "followingCount": 0,
            "notesCount": 0,
            "pinnedNoteIds": [],
            "pinnedNotes": [],
            "pinnedPageId": None,
            "pinnedPage": None,
            "publicReactions": True,
            "followingVisibility": "public",
            "followersVisibility": "public",
            "chatScope": "mutual",
            "canChat": False,
            "roles": [],
            "memo": None,
        }


@dataclass
class Exchange:
    """One ``/api/`` request as the stand-in received it and its answer as sent.

    ``request`` is the JSON body, or a multipart body's fields as the JSON object
    misskey-js would have been given (a file part as ``{"$blob": {"size", "type"}}``).
    ``misskey`` is false for an answer Misskey itself never gives (the 503 of a proxy in
    front of a restarting server): its request is type-checked, the answer is not."""

    endpoint: str
    status: int
    request: dict[str, Any]
    response: Any
    test: str
    misskey: bool = True


@dataclass
class _Session:
    callback: str
    permission: list[str]
    user: MisskeyUser | None = None
    token: str | None = None
    # Misskey hands a session's token out once (``fetched``), then answers ``ok: false``.
    fetched: bool = False


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
    exchanges: list[Exchange] = field(default_factory=list)
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

        def _body(self) -> tuple[dict[str, Any], dict[str, tuple[bytes, str]]]:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            kind = self.headers.get("Content-Type", "")
            if kind.startswith("multipart/form-data"):
                message = BytesParser(policy=HTTP).parsebytes(
                    f"Content-Type: {kind}\r\n\r\n".encode() + raw
                )
                fields: dict[str, Any] = {}
                files: dict[str, tuple[bytes, str]] = {}
                for part in message.iter_parts():
                    name = part.get_param("name", header="content-disposition")
                    decoded = part.get_payload(decode=True)
                    payload = decoded if isinstance(decoded, bytes) else b""
                    if part.get_filename():
                        files[str(name)] = (payload, part.get_content_type())
                    else:
                        fields[str(name)] = payload.decode()
                return fields, files
            return (json.loads(raw) if raw else {}), {}

        def do_POST(self) -> None:
            path = urlsplit(self.path).path
            body, files = self._body()
            status, answer, from_misskey = _answer(state, path, body, files)
            request = dict(body) | {
                name: {"$blob": {"size": len(data), "type": kind}}
                for name, (data, kind) in files.items()
            }
            endpoint = path.removeprefix("/api/")
            if endpoint.startswith("miauth/") and endpoint.endswith("/check"):
                endpoint = "miauth/{session}/check"
            with state.lock:
                state.exchanges.append(
                    Exchange(
                        endpoint=endpoint,
                        status=status,
                        request=request,
                        response=answer,
                        test=_current_test(),
                        misskey=from_misskey,
                    )
                )
            self._send(status, answer)

    return Handler


def _current_test() -> str:
    """The test running now, by its node id (without xdist's group and pytest's phase)."""
    running = os.environ.get("PYTEST_CURRENT_TEST", "")
    return running.rsplit(" (", 1)[0].split("@", 1)[0]


def _answer(
    state: MisskeyStandIn,
    path: str,
    body: dict[str, Any],
    files: dict[str, tuple[bytes, str]],
) -> tuple[int, Any, bool]:
    """Misskey's answer to ``POST path``: status, JSON body, and whether Misskey gives it."""
    if path.startswith("/api/miauth/") and path.endswith("/check"):
        session = state.sessions.get(path.split("/")[3])
        with state.lock:
            if session is None or session.user is None or session.token is None or session.fetched:
                return 200, {"ok": False}, True
            session.fetched = True
            state.tokens[session.token] = session.user
        return (
            200,
            {"ok": True, "token": session.token, "user": session.user.detailed(state.url)},
            True,
        )
    user = state.tokens.get(str(body.get("i", "")))
    if path == "/api/drive/files/create":
        if user is None:
            return 401, {"error": AUTHENTICATION_FAILED}, True
        if "file" not in files:
            return 400, {"error": FILE_REQUIRED}, True
        data, kind = files["file"]
        file_id = uuid.uuid4().hex[:10]
        # A PNG's size is in its IHDR chunk, which Misskey reads into ``properties``.
        width, height = int.from_bytes(data[16:20]), int.from_bytes(data[20:24])
        drive = {
            "id": file_id,
            "createdAt": _now(),
            "name": body.get("name") or "untitled",
            "type": kind,
            "md5": hashlib.md5(data, usedforsecurity=False).hexdigest(),
            "size": len(data),
            "isSensitive": False,
            "blurhash": None,
            "properties": {"width": width, "height": height},
            "url": f"{state.url}/files/{file_id}",
            "thumbnailUrl": None,
            "comment": body.get("comment"),
            "folderId": None,
            "folder": None,
            "userId": user.id,
            "user": None,
        }
        with state.lock:
            state.files[file_id] = drive
            state.file_bytes[file_id] = data
        return 200, drive, True
    if path == "/api/notes/create":
        if user is None:
            return 401, {"error": AUTHENTICATION_FAILED}, True
        with state.lock:
            down = state.unavailable > 0
            state.unavailable -= 1 if down else 0
        if down:
            # What the proxy in front of a restarting Misskey answers, not Misskey.
            return 503, {"error": {"code": "SERVICE_UNAVAILABLE"}}, False
        visibility = body.get("visibility", "public")
        if visibility not in ("public", "home", "followers", "specified"):
            reason = {
                "param": "#/properties/visibility/enum",
                "reason": "must be equal to one of the allowed values",
            }
            return 400, {"error": INVALID_PARAM | {"info": reason}}, True
        file_ids = [str(f) for f in body.get("fileIds") or []]
        note = {
            "id": uuid.uuid4().hex[:10],
            "createdAt": _now(),
            "text": body.get("text"),
            "cw": body.get("cw"),
            "userId": user.id,
            "user": user.lite(state.url),
            "replyId": None,
            "renoteId": None,
            "visibility": visibility,
            "mentions": [],
            "fileIds": file_ids,
            "files": [state.files[f] for f in file_ids if f in state.files],
            "tags": [],
            "poll": None,
            "emojis": {},
            "localOnly": False,
            "reactionAcceptance": None,
            "reactionEmojis": {},
            "reactions": {},
            "reactionCount": 0,
            "renoteCount": 0,
            "repliesCount": 0,
        }
        with state.lock:
            state.notes.append(note)
        return 200, {"createdNote": note}, True
    return 404, {"error": UNKNOWN_API_ENDPOINT}, True


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
