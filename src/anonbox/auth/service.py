"""Who a credential belongs to, and making creators."""

from __future__ import annotations

from dataclasses import dataclass

from anonbox.auth import repository
from anonbox.auth.credentials import (
    API_KEY_PREFIX,
    MAX_CREDENTIAL_LENGTH,
    credential_hash,
    hashes_match,
    new_api_key,
)
from anonbox.core.clock import now_us
from anonbox.core.database import Database
from anonbox.core.errors import Conflict, Unauthorized
from anonbox.core.ids import new_ulid
from anonbox.links import repository as links

# Recording every use would turn each authenticated read into a write.
_LAST_USED_RESOLUTION_US = 60 * 1_000_000


@dataclass(frozen=True, slots=True)
class Principal:
    """The creator a request acts for, and the credential that proved it."""

    user_id: str
    credential_id: str


@dataclass(frozen=True, slots=True)
class NewCreator:
    user_id: str
    email: str
    link_id: str
    api_key: str


async def authenticate(db: Database, credential: str) -> Principal:
    if not credential.startswith(API_KEY_PREFIX) or len(credential) > MAX_CREDENTIAL_LENGTH:
        raise Unauthorized("The credential is not valid")
    presented = credential_hash(credential)
    row = await repository.active_api_key(db, presented)
    if row is None or not hashes_match(row["key_hash"], presented):
        raise Unauthorized("The credential is not valid, or has been revoked")
    now = now_us()
    last_used = row["last_used_at"]
    if last_used is None or now - last_used > _LAST_USED_RESOLUTION_US:
        await repository.touch_api_key(db, row["id"], now)
    return Principal(user_id=row["user_id"], credential_id=row["id"])


def normalised_email(email: str) -> str:
    """One mailbox, one account: addresses are compared and stored in lower case."""
    email = email.strip().lower()
    local, _, domain = email.partition("@")
    if not local or "." not in domain or len(email) > 320 or any(c.isspace() for c in email):
        raise ValueError(f"not an e-mail address: {email!r}")
    return email


async def create_creator(db: Database, *, email: str, name: str | None = None) -> NewCreator:
    """A new account with a default link and a fresh API key (the plaintext is returned once)."""
    email = normalised_email(email)
    now = now_us()
    user_id = new_ulid(now)
    api_key = new_api_key()
    async with db.transaction() as tx:
        if await repository.user_id_by_email(tx, email) is not None:
            raise Conflict(f"A creator with e-mail {email} already exists")
        await repository.insert_user(
            tx, user_id=user_id, email=email, name=name or email.split("@")[0], created_at=now
        )
        link_id = await links.insert_default_link(tx, user_id=user_id, created_at=now)
        await repository.insert_api_key(
            tx,
            key_id=new_ulid(now),
            user_id=user_id,
            name="default",
            key_hash=credential_hash(api_key),
            last_chars=api_key[-4:],
            created_at=now,
        )
    return NewCreator(user_id=user_id, email=email, link_id=link_id, api_key=api_key)
