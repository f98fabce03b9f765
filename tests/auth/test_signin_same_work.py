"""Asking for a sign-in mail does the same work before its answer, whatever the answer
keeps to itself (issue 39): whether a mail goes out (a first ask) or not (an ask for an
address asked for within the per-address limit), and whether the address has an account.
If the work differed, the time of the answer would tell a stranger what the page does
not: here the work itself is compared, never the clock.

The app is the real one (``create_app``, its wiring, its lifespan, its worker and an SMTP
mailer to a real SMTP server on loopback), driven over HTTP through its ASGI interface in
this process rather than as ``anonbox serve`` in another. The reason is attribution: the
server's own notification worker queries the same database all the time (and, after a
first ask, sends its mail), so a statement log of the whole process (``bench/sqltrace.py``,
or PostgreSQL's ``log_statement``) cannot say which statement belongs to the request, and
a window of time would make the test depend on the clock. In process, every statement,
limiter hit and mailer call made in the request's context (its task and the tasks it
starts) is recorded, and the worker, started outside it, is not. Each runs on SQLite and
on PostgreSQL.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import time
import uuid
import warnings
from collections.abc import AsyncIterator, Callable, Sequence
from contextvars import ContextVar
from email.message import EmailMessage
from typing import Any

import pytest

from anonbox.auth.service import create_creator
from anonbox.core.database import Connection, Database, Row, connect
from anonbox.core.settings import Settings
from tests.support.db import query
from tests.support.forms import csrf_of
from tests.support.mail import SMTPServer, signin_link_in

Step = tuple[str, ...]
# The steps of the request being recorded; None outside one (the worker, start-up).
_steps: ContextVar[list[Step] | None] = ContextVar("signin_steps", default=None)
ANSWERED: Step = ("answered",)


def _record(*step: str) -> None:
    steps = _steps.get()
    if steps is not None:
        steps.append(step)


def _shape(sql: str) -> str:
    """The statement, parameters apart: its text (values are ``$n`` placeholders)."""
    return " ".join(sql.split())


class RecordingConnection:
    def __init__(self, inner: Connection) -> None:
        self._inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)  # ``dialect`` and the like

    async def fetch(self, sql: str, *args: Any) -> Sequence[Row]:
        _record("fetch", _shape(sql))
        return await self._inner.fetch(sql, *args)

    async def fetchrow(self, sql: str, *args: Any) -> Row | None:
        _record("fetchrow", _shape(sql))
        return await self._inner.fetchrow(sql, *args)

    async def execute(self, sql: str, *args: Any) -> int:
        _record("execute", _shape(sql))
        return await self._inner.execute(sql, *args)


class RecordingDatabase(RecordingConnection):
    def __init__(self, inner: Database) -> None:
        super().__init__(inner)
        self._db = inner

    @contextlib.asynccontextmanager
    async def transaction(self) -> AsyncIterator[Connection]:
        _record("transaction")
        async with self._db.transaction() as tx:
            yield RecordingConnection(tx)
        _record("committed")

    def public_reads(self) -> RecordingDatabase:
        return self


class RecordingLimiter:
    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def hit(self, checks: Sequence[tuple[Any, str]]) -> Any:
        _record("limiter.hit", *(limit.name for limit, _ in checks))
        return await self._inner.hit(checks)


class RecordingMailer:
    def __init__(self, inner: Any) -> None:
        self._inner = inner

    async def send(self, message: EmailMessage) -> None:
        _record("mailer.send")
        await self._inner.send(message)


def recorded(app: Any, log: dict[str, list[Step]]) -> Callable[..., Any]:
    """``app``, recording each ``POST /signin/email`` under its address: every step made
    in its context, and where the answer began (``ANSWERED``)."""

    async def asgi(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or (scope["method"], scope["path"]) != (
            "POST",
            "/signin/email",
        ):
            await app(scope, receive, send)
            return
        steps: list[Step] = []
        log[dict(scope["headers"])[b"x-case"].decode()] = steps

        async def answering(message: Any) -> None:
            if message["type"] == "http.response.start":
                steps.append(ANSWERED)
            await send(message)

        token = _steps.set(steps)
        try:
            # From loopback, as over a socket: the per-network limit and its key count too.
            await app({**scope, "client": ("127.0.0.1", 50000)}, receive, answering)
        finally:
            _steps.reset(token)

    return asgi


def new_address(kind: str) -> str:
    return f"{kind}-{uuid.uuid4().hex[:12]}@example.org"


def settle(database_url: str, addresses: Sequence[str], timeout: float = 30.0) -> None:
    """Wait until no sign-in mail to ``addresses`` is due or being sent."""
    deadline = time.monotonic() + timeout
    for address in addresses:
        while query(
            database_url,
            "SELECT 1 FROM email_signin_tokens WHERE email = $1 AND mail_due_at IS NOT NULL",
            address,
        ):
            assert time.monotonic() < deadline, "a sign-in mail is still due"
            time.sleep(0.05)


def make_account(database_url: str, address: str) -> None:
    async def run() -> None:
        db = await connect(database_url)
        try:
            await create_creator(db, email=address)
        finally:
            await db.close()

    asyncio.run(run())


CASES = ("first, known", "repeated, known", "first, unknown", "repeated, unknown")


def test_a_first_and_a_repeated_ask_for_a_known_and_an_unknown_address_do_the_same_work(
    backend: str,
    database_url_factory: Callable[[str], str],
    smtp_server: SMTPServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    database_url = database_url_factory(backend)
    known, unknown, warm = new_address("known"), new_address("unknown"), new_address("warm")
    make_account(database_url, known)
    monkeypatch.setenv("ANONBOX_DATABASE_URL", database_url)
    monkeypatch.setenv("ANONBOX_SMTP_URL", smtp_server.url)
    monkeypatch.setenv("ANONBOX_MAIL_FROM", "anonbox <me@anonbox.test>")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # Litestar's, at import
        from litestar.testing import AsyncTestClient

        from anonbox.main import create_app

        clock = create_app(Settings.from_env())
    log: dict[str, list[Step]] = {}

    async def ask(client: Any, address: str, case: str) -> None:
        client.cookies.clear()  # a stranger's browser, each time
        page = await client.get("/signin")
        csrf = csrf_of(page.text)
        answer = await client.post(
            "/signin/email",
            data={"csrf_token": csrf, "email": address},
            headers={"X-Case": case},
        )
        assert answer.status_code == 200, answer.text
        assert 'id="signin-email-sent"' in answer.text

    async def run() -> None:
        async with AsyncTestClient(app=recorded(clock, log)) as client:
            state = clock.app.state  # type: ignore[attr-defined]
            parts = state.parts
            state.parts = dataclasses.replace(
                parts,
                db=RecordingDatabase(parts.db),
                limiter=RecordingLimiter(parts.limiter),
                mailer=RecordingMailer(parts.mailer),
            )
            await ask(client, warm, "warm-up")  # what a process does once (its first key)
            for case, address in zip(CASES, (known, known, unknown, unknown), strict=True):
                await ask(client, address, case)
            await asyncio.to_thread(settle, database_url, [known, unknown, warm])

    asyncio.run(run())

    before = {case: log[case][: log[case].index(ANSWERED)] for case in CASES}
    first = before[CASES[0]]
    # The recorder saw the ask's work: the link's row, written in a transaction.
    assert any(s[0] == "execute" and "INSERT INTO email_signin_tokens" in s[1] for s in first)
    for case in CASES[1:]:
        assert before[case] == first, f"{case!r} did other work than {CASES[0]!r}"
    # And the mails still go: one per first ask, from the worker, after the answers.
    for address in (known, unknown):
        [mail] = smtp_server.mailbox.to(address)
        assert signin_link_in(mail).startswith("http://testserver.local/signin/email?token=")
