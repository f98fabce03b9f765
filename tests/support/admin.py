"""Admins for the moderation tests: made as an operator makes them (a creator, then the
role granted), signed in through the API or a browser, and what they can read back."""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import dataclass
from typing import Any

import httpx

from anonbox.auth.service import create_creator, grant_admin
from anonbox.core.database import connect
from tests.actions import every_item
from tests.conftest import Creator


@dataclass(frozen=True)
class Admin:
    creator: Creator
    email: str

    @property
    def headers(self) -> dict[str, str]:
        return self.creator.headers

    @property
    def user_id(self) -> str:
        return self.creator.user_id


def make_account(database_url: str, *, admin: bool) -> Admin:
    """A creator with a known e-mail address, made an admin when ``admin``."""

    async def run() -> Admin:
        db = await connect(database_url)
        try:
            email = f"mod-{uuid.uuid4().hex[:10]}@example.org"
            made = await create_creator(db, email=email)
            if admin:
                await grant_admin(db, email=email)
        finally:
            await db.close()
        return Admin(Creator(made.user_id, made.link_id, made.api_key), email)

    return asyncio.run(run())


def mute_phrase(api: httpx.Client, admin: Admin, phrase: str) -> dict[str, Any]:
    added = api.post("/admin/muted-phrases", json={"phrase": phrase}, headers=admin.headers)
    assert added.status_code == 201, added.text
    return dict(added.json()["data"])


def unmute_phrase(api: httpx.Client, admin: Admin, phrase_id: str) -> None:
    removed = api.delete(f"/admin/muted-phrases/{phrase_id}", headers=admin.headers)
    assert removed.status_code == 200, removed.text


def muted_phrases(api: httpx.Client, admin: Admin) -> list[dict[str, Any]]:
    listed = api.get("/admin/muted-phrases", headers=admin.headers)
    assert listed.status_code == 200, listed.text
    return list(listed.json()["data"]["items"])


def audit_entries(api: httpx.Client, admin: Admin) -> list[dict[str, Any]]:
    """The whole audit log, newest first, following next_cursor to the end."""
    return every_item(api, "/admin/audit", {}, admin.headers)


def unique_phrase(label: str = "zq") -> str:
    """A phrase no other test's message contains: a muted phrase applies to every link."""
    return f"{label}{uuid.uuid4().hex[:10]}"
