"""Sign-in fixtures: a real OpenID Connect provider on loopback, a relay to break it, anonbox.

The provider is oidc-provider-mock (a subprocess). Its users are set with
``PUT /users/{sub}``; claims it does not know (``aud``, ``iss``, ``nonce``, ``exp``)
are copied into the ID token over the real ones, properly signed, which is how the
tests make an ID token that is wrong in exactly one way. A user agent is one
``httpx.Client`` (it keeps anonbox's cookies); the provider's consent page is
answered by POSTing the authorization URL with the form field ``sub``.

Every anonbox server here runs once on SQLite and once on PostgreSQL.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager as ContextManager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa

from tests.conftest import Creator, make_creator_in
from tests.server import Server, free_port
from tests.support.http import loopback_client
from tests.support.processes import stop

CLIENT_ID = "anonbox-tests"
CLIENT_SECRET = "anonbox-tests-secret"
REDIRECT_URI = "http://127.0.0.1:9/auth/google/callback"  # never followed
SIGNIN_COOKIE = "anonbox_signin"
REFRESH_COOKIE = "anonbox_refresh"


SESSION_MAX_SECONDS = 2


def http_client(base_url: str = "", **options: Any) -> httpx.Client:
    """A fresh HTTP client with an empty cookie jar, cheap to make."""
    return loopback_client(base_url=base_url, timeout=30, **options)


_BROWSER = http_client()  # talks to the provider (and relays to it); keeps no state we use
# Closed as the process ends, not by a fixture of this package: tests elsewhere (tests/web,
# tests/browser) sign in through it too, and a test process that ran none of this package's
# tests left its pooled connection to the provider open ("unclosed socket" at exit).
atexit.register(_BROWSER.close)


# --- the provider ----------------------------------------------------------------------


@dataclass(frozen=True)
class Provider:
    """oidc-provider-mock, listening at ``url``."""

    url: str

    def put_user(self, sub: str, claims: dict[str, Any]) -> None:
        answer = _BROWSER.put(f"{self.url}/users/{sub}", json=claims)
        assert answer.status_code == 204, answer.text

    def new_user(self, **claims: Any) -> User:
        """A provider account with a verified e-mail; ``claims`` override or add claims."""
        sub = f"sub-{uuid.uuid4().hex[:16]}"
        user = User(
            sub=sub,
            claims={
                "email": f"{sub}@example.org",
                "email_verified": True,
                "name": f"Person {sub[-6:]}",
                "picture": f"https://pictures.example.org/{sub}.png",
                **claims,
            },
        )
        self.put_user(user.sub, user.claims)
        return user


@dataclass(frozen=True)
class User:
    sub: str
    claims: dict[str, Any]


@pytest.fixture(scope="session")
def provider(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Provider]:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log_path = tmp_path_factory.mktemp("provider") / "oidc-provider-mock.log"
    with log_path.open("ab") as log:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "oidc_provider_mock",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + 30
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"oidc-provider-mock exited:\n{log_path.read_text()}")
            try:
                if _BROWSER.get(f"{url}/.well-known/openid-configuration").status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"oidc-provider-mock did not start:\n{log_path.read_text()}")
            time.sleep(0.1)
        yield Provider(url)
    finally:
        stop(process)


# --- a relay between anonbox and the provider, to break the provider on purpose --------


def flip_signature_character(id_token: str) -> str:
    """The same token with one character of its signature changed."""
    header, payload, signature = id_token.split(".")
    position = len(signature) // 2
    replacement = "A" if signature[position] != "A" else "B"
    return ".".join(
        [header, payload, signature[:position] + replacement + signature[position + 1 :]]
    )


def resign_with_foreign_key(id_token: str) -> str:
    """The same header and claims, signed with a key the provider never published."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    header = jwt.get_unverified_header(id_token)
    claims = jwt.decode(id_token, options={"verify_signature": False})
    extra = {k: v for k, v in header.items() if k not in {"alg", "typ"}}
    return jwt.encode(claims, key, algorithm=header["alg"], headers=extra or None)


_HOP_BY_HOP = {
    "connection",
    "keep-alive",
    "transfer-encoding",
    "content-length",
    "content-encoding",
    "te",
    "trailer",
    "upgrade",
    "proxy-connection",
}


@dataclass
class Relay:
    """An HTTP relay in front of the provider that keeps the Host header, so the provider
    names the relay as issuer and endpoints. It can rewrite the ID token coming back from
    the token endpoint, or drop every connection as a provider that is down."""

    target: str
    port: int = 0
    down: bool = False
    rewrite_id_token: Callable[[str], str] | None = None
    token_endpoint_status: int | None = None  # answer this instead of relaying
    _server: ThreadingHTTPServer | None = field(default=None, repr=False)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def reset(self) -> None:
        self.down = False
        self.rewrite_id_token = None
        self.token_endpoint_status = None

    def start(self) -> Relay:
        relay = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                self._relay()

            def do_POST(self) -> None:
                self._relay()

            def do_PUT(self) -> None:
                self._relay()

            def _relay(self) -> None:
                if relay.down:  # the provider is gone: no answer at all
                    self.close_connection = True
                    return
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                is_token_endpoint = urlsplit(self.path).path.endswith("/token")
                if is_token_endpoint and relay.token_endpoint_status is not None:
                    self._answer(relay.token_endpoint_status, {}, b"provider trouble")
                    return
                headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP_BY_HOP}
                upstream = _BROWSER.request(
                    self.command,
                    relay.target + self.path,
                    headers=headers,  # Host kept: the provider describes the relay
                    content=body,
                )
                content = upstream.content
                if is_token_endpoint and relay.rewrite_id_token and upstream.status_code == 200:
                    document = json.loads(content)
                    document["id_token"] = relay.rewrite_id_token(document["id_token"])
                    content = json.dumps(document).encode()
                kept = {k: v for k, v in upstream.headers.items() if k.lower() not in _HOP_BY_HOP}
                self._answer(upstream.status_code, kept, content)

            def _answer(self, status: int, headers: dict[str, str], content: bytes) -> None:
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(content)))
                self.end_headers()
                self.wfile.write(content)

        server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        server.daemon_threads = True
        self.port = server.server_address[1]
        self._server = server
        threading.Thread(target=server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()


@pytest.fixture(scope="session")
def session_relay(provider: Provider) -> Iterator[Relay]:
    relay = Relay(target=provider.url).start()
    yield relay
    relay.stop()


@pytest.fixture
def relay(session_relay: Relay) -> Iterator[Relay]:
    session_relay.reset()
    yield session_relay
    session_relay.reset()


# --- anonbox servers -------------------------------------------------------------------

ACCESS_TTL_SECONDS = 2  # on the short-lived server
STATE_TTL_SECONDS = 2  # on the short-lived server (cookie jars count whole seconds)


@dataclass(frozen=True)
class Anonbox:
    """A running anonbox configured for sign-in, and the provider it trusts."""

    server: Server
    provider: Provider

    @property
    def url(self) -> str:
        return self.server.url


def signin_env(issuer: str, **extra: str) -> dict[str, str]:
    return {
        "ANONBOX_GOOGLE_ISSUER": issuer,
        "ANONBOX_GOOGLE_CLIENT_ID": CLIENT_ID,
        "ANONBOX_GOOGLE_CLIENT_SECRET": CLIENT_SECRET,
        "ANONBOX_GOOGLE_REDIRECT_URI": REDIRECT_URI,
        **extra,
    }


@contextlib.contextmanager
def running_servers(
    database_url_factory: Callable[[str], str],
    log_dir: Path,
    backend: str,
    envs: dict[str, dict[str, str]],
) -> Iterator[dict[str, Server]]:
    """Start one anonbox per entry of ``envs``, each on a fresh database, all at once."""
    servers = {
        name: Server(database_url_factory(backend), log_dir / f"{name}-{backend}.log", env=env)
        for name, env in envs.items()
    }
    try:
        with ThreadPoolExecutor(len(servers)) as pool:
            for started in [pool.submit(server.start) for server in servers.values()]:
                started.result()
        yield servers
    finally:
        with ThreadPoolExecutor(len(servers)) as pool:
            list(pool.map(Server.stop, servers.values()))


@pytest.fixture(scope="session", params=["sqlite", "postgresql"])
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


StartServers = Callable[[str, dict[str, dict[str, str]]], ContextManager[dict[str, Server]]]


@pytest.fixture(scope="session")
def start_servers(
    backend: str,
    database_url_factory: Callable[[str], str],
    tmp_path_factory: pytest.TempPathFactory,
) -> StartServers:
    """``start_servers(logs, envs)``: ``running_servers`` on this backend, logging to a new
    folder named after ``logs``."""

    def start(logs: str, envs: dict[str, dict[str, str]]) -> ContextManager[dict[str, Server]]:
        return running_servers(database_url_factory, tmp_path_factory.mktemp(logs), backend, envs)

    return start


@pytest.fixture(scope="session")
def fleet(
    provider: Provider, session_relay: Relay, start_servers: StartServers
) -> Iterator[dict[str, Server]]:
    """Every differently configured anonbox the tests need, started together per backend."""
    envs = {
        "direct": signin_env(provider.url),
        "relayed": signin_env(session_relay.url),
        "short-lived": signin_env(
            provider.url,
            ANONBOX_ACCESS_TOKEN_TTL_SECONDS=str(ACCESS_TTL_SECONDS),
            ANONBOX_SIGNIN_STATE_TTL_SECONDS=str(STATE_TTL_SECONDS),
        ),
        "bounded": signin_env(provider.url, ANONBOX_SESSION_MAX_SECONDS=str(SESSION_MAX_SECONDS)),
        "forgetful": signin_env(provider.url, ANONBOX_REFRESH_TOKEN_TTL_SECONDS="1"),
        "unreachable": signin_env(f"http://127.0.0.1:{free_port()}"),  # nothing listens
        "unconfigured": {"ANONBOX_GOOGLE_CLIENT_ID": ""},
    }
    with start_servers("logs", envs) as servers:
        yield servers


def _member(name: str, member: str, doc: str) -> Any:
    """A fixture called ``name``: the fleet's ``member`` with the provider, as ``Anonbox``."""

    def fixture(fleet: dict[str, Server], provider: Provider) -> Anonbox:
        return Anonbox(fleet[member], provider)

    fixture.__doc__ = doc
    return pytest.fixture(name=name)(fixture)


anonbox = _member("anonbox", "direct", "anonbox trusting the provider directly.")
relayed_anonbox = _member(
    "relayed_anonbox", "relayed", "anonbox whose provider is reached only through the relay."
)
short_lived_anonbox = _member(
    "short_lived_anonbox",
    "short-lived",
    "anonbox whose access tokens and sign-in states live a second or two.",
)
bounded_anonbox = _member(
    "bounded_anonbox",
    "bounded",
    "anonbox whose sessions end SESSION_MAX_SECONDS after sign-in, however renewed.",
)
forgetful_anonbox = _member(
    "forgetful_anonbox",
    "forgetful",
    "anonbox whose refresh tokens live a second, so ended sessions are soon forgotten.",
)
unreachable_provider_anonbox = _member(
    "unreachable_provider_anonbox",
    "unreachable",
    "anonbox configured with an issuer where nothing listens.",
)


@pytest.fixture
def unconfigured_server(fleet: dict[str, Server]) -> Server:
    """anonbox without ANONBOX_GOOGLE_CLIENT_ID."""
    return fleet["unconfigured"]


@pytest.fixture
def new_user_agent() -> Iterator[Callable[[str], httpx.Client]]:
    """Browsers: each its own cookie jar."""
    clients: list[httpx.Client] = []

    def make(base_url: str) -> httpx.Client:
        client = http_client(base_url)
        clients.append(client)
        return client

    yield make
    for client in clients:
        client.close()


# --- the steps of a sign-in ------------------------------------------------------------


@dataclass(frozen=True)
class SignedIn:
    """What a sign-in gives the user agent that did it."""

    access_token: str
    refresh_token: str
    user_agent: httpx.Client

    @property
    def headers(self) -> dict[str, str]:
        return {"X-API-Key": self.access_token}


def start_signin(user_agent: httpx.Client) -> str:
    """``GET /auth/google/url``; returns the provider URL (the cookie stays in the agent)."""
    started = user_agent.get("/auth/google/url")
    assert started.status_code == 200, started.text
    assert user_agent.cookies.get(SIGNIN_COOKIE), started.headers
    return str(started.json()["data"]["url"])


def consent(authorization_url: str, sub: str) -> tuple[str, str]:
    """The person consents at the provider; returns the ``code`` and ``state`` it redirects with."""
    answer = _BROWSER.post(authorization_url, data={"sub": sub})
    assert answer.status_code in {302, 303}, answer.text
    location = answer.headers["location"]
    assert location.startswith(REDIRECT_URI), location
    query = parse_qs(urlsplit(location).query)
    return query["code"][0], query["state"][0]


def callback(user_agent: httpx.Client, code: str, state: str) -> httpx.Response:
    return user_agent.post("/auth/google/callback", json={"code": code, "state": state})


def sign_in(user_agent: httpx.Client, user: User) -> SignedIn:
    """The whole flow, as a browser and a person do it; the sign-in must succeed."""
    code, state = consent(start_signin(user_agent), user.sub)
    finished = callback(user_agent, code, state)
    assert finished.status_code == 200, finished.text
    return SignedIn(
        access_token=finished.json()["data"]["access_token"],
        refresh_token=finished.headers["x-refresh-token"],
        user_agent=user_agent,
    )


def set_cookies(response: httpx.Response, name: str) -> list[str]:
    """The ``Set-Cookie`` header values for cookie ``name``."""
    return [
        value
        for value in response.headers.get_list("set-cookie")
        if value.split("=", 1)[0].strip() == name
    ]


def cookie_attributes(set_cookie: str) -> dict[str, str]:
    """``{"value": ..., "path": ..., "samesite": ..., "httponly": "", ...}``, keys lower-cased."""
    first, *rest = [part.strip() for part in set_cookie.split(";")]
    attributes = {"value": first.split("=", 1)[1]}
    for part in rest:
        name, _, value = part.partition("=")
        attributes[name.strip().lower()] = value.strip()
    return attributes


def profile(client: httpx.Client, access_token: str) -> dict[str, Any]:
    answer = client.get("/user", headers={"X-API-Key": access_token})
    assert answer.status_code == 200, answer.text
    return dict(answer.json()["data"])


@contextlib.contextmanager
def cookie_header_client(base_url: str, cookies: dict[str, str]) -> Iterator[httpx.Client]:
    """A user agent that sends exactly these cookies, whatever it is told to store."""
    header = "; ".join(f"{k}={v}" for k, v in cookies.items())
    with http_client(base_url, headers={"Cookie": header}) as client:
        yield client


def make_local_creator(server: Server) -> tuple[Creator, str]:
    """A creator made as ``anonbox creator create`` makes one; returns it and its e-mail."""
    email = f"local-{uuid.uuid4().hex[:10]}@example.org"
    return make_creator_in(server.database_url, email), email
