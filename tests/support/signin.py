"""Signing in without a provider or a mailbox: the link ``anonbox signin-link`` prints."""

from __future__ import annotations

import asyncio
import uuid
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx

from anonbox.auth.sessions import open_session
from anonbox.core.database import connect
from anonbox.core.settings import Settings
from tests.conftest import Creator
from tests.server import Server, anonbox_command
from tests.support.http import loopback_client


def signin_link_command(server: Server, email: str) -> str:
    """Run ``anonbox signin-link`` against ``server``'s database; the link it prints."""
    made = anonbox_command(
        ["signin-link", "--email", email, "--base-url", server.url],
        env={"ANONBOX_DATABASE_URL": server.database_url, "PATH": "/usr/bin:/bin"},
    )
    made.check_returncode()
    return made.stdout.strip()


def session_token(server: Server, user_id: str) -> str:
    """A sign-in session's access token for ``user_id`` (what the pages' cookie holds, and
    what managing API keys asks for)."""

    async def open_one() -> str:
        db = await connect(server.database_url)
        try:
            opened = await open_session(db, user_id=user_id, settings=Settings())
        finally:
            await db.close()
        return opened.access_token

    return asyncio.run(open_one())


def access_tokens(database_url: str, creator: Creator, count: int) -> list[str]:
    """Sign-in sessions of the creator, as a sign-in would open them."""

    async def open_all() -> list[str]:
        db = await connect(database_url)
        try:
            settings = Settings()
            return [
                (await open_session(db, user_id=creator.user_id, settings=settings)).access_token
                for _ in range(count)
            ]
        finally:
            await db.close()

    with ThreadPoolExecutor(1) as pool:  # asyncio.run off any running loop
        return pool.submit(asyncio.run, open_all()).result()


def signed_in(server: Server, user_id: str, **options: Any) -> httpx.Client:
    """A browser signed in as ``user_id`` (a sign-in session's cookie), for the pages;
    ``options`` go to the client (its connection limits, say)."""
    token = session_token(server, user_id)
    return loopback_client(
        base_url=server.url, timeout=30, cookies={"anonbox_session": token}, **options
    )


def signed_in_browser(server: Server, email: str | None = None) -> httpx.Client:
    """An HTTP client that followed a sign-in link for ``email`` (a new address when none
    is given), as a browser would."""
    email = email or f"browser-{uuid.uuid4().hex[:10]}@example.org"
    browser = loopback_client(base_url=server.url, timeout=30)
    followed = browser.get(signin_link_command(server, email))
    if followed.status_code != 303:
        browser.close()
        raise AssertionError(followed.text)
    return browser
