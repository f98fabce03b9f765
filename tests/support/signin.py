"""Signing in without a provider or a mailbox: the link ``anonbox signin-link`` prints."""

from __future__ import annotations

import asyncio

import httpx

from anonbox.auth.sessions import open_session
from anonbox.core.database import connect
from anonbox.core.settings import Settings
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


def signed_in(server: Server, user_id: str) -> httpx.Client:
    """A browser signed in as ``user_id`` (a sign-in session's cookie), for the pages."""

    async def open_one() -> str:
        db = await connect(server.database_url)
        try:
            opened = await open_session(db, user_id=user_id, settings=Settings())
        finally:
            await db.close()
        return opened.access_token

    token = asyncio.run(open_one())
    return loopback_client(base_url=server.url, timeout=30, cookies={"anonbox_session": token})
