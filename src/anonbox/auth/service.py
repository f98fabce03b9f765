"""Who a credential belongs to; making creators; their API keys and profile."""

from __future__ import annotations

from dataclasses import dataclass

from anonbox.auth import repository
from anonbox.auth.schemas import MAX_KEY_NAME_CHARACTERS, ApiKeyInfo, NewApiKey, Profile
from anonbox.core.clock import isoformat_us, now_us
from anonbox.core.database import Connection, Database, one_at_a_time
from anonbox.core.errors import (
    Conflict,
    FieldProblem,
    NotFound,
    Unauthorized,
    ValidationFailed,
)
from anonbox.core.i18n import LANGUAGES
from anonbox.core.ids import new_ulid
from anonbox.core.text import contains_control_characters
from anonbox.identity.credential_cache import announce, changed_key
from anonbox.identity.credentials import (
    credential_hash,
    new_api_key,
)
from anonbox.identity.service import forget_credentials
from anonbox.links import repository as links
from anonbox.links.prompts import default_prompt

# Keys not revoked, per creator: a few scripts and bots each, not a key per request.
MAX_API_KEYS = 20


class TooManyApiKeys(Conflict):
    code = "too_many_api_keys"


@dataclass(frozen=True, slots=True)
class NewCreator:
    user_id: str
    email: str
    link_id: str
    api_key: str


def normalised_email(email: str) -> str:
    """One mailbox, one account: addresses are compared and stored in lower case."""
    email = email.strip().lower()
    local, _, domain = email.partition("@")
    if not local or "." not in domain or len(email) > 320 or any(c.isspace() for c in email):
        raise ValueError(f"not an e-mail address: {email!r}")
    return email


async def create_creator(
    db: Database, *, email: str, name: str | None = None, language: str | None = None
) -> NewCreator:
    """A new account with a default link and a fresh API key (the plaintext is returned once).
    ``language``: the account's and its link's (None, or one anonbox does not speak:
    English, and the first dashboard page picks the account's)."""
    email = normalised_email(email)
    now = now_us()
    user_id = new_ulid(now)
    async with db.transaction() as tx:
        if await repository.user_id_by_email(tx, email) is not None:
            raise Conflict(f"A creator with e-mail {email} already exists")
        if language not in LANGUAGES:
            language = None
        await repository.insert_user(
            tx,
            user_id=user_id,
            email=email,
            name=name or display_name(email),
            created_at=now,
            language=language,
        )
        link_id = await _insert_default_link(tx, user_id=user_id, language=language, now=now)
        key = await _insert_api_key(tx, user_id=user_id, name="default", now=now)
    return NewCreator(user_id=user_id, email=email, link_id=link_id, api_key=key.api_key)


def display_name(email: str) -> str:
    """The public name an account starts with when no provider gave one."""
    return email.split("@")[0]


async def _insert_default_link(
    conn: Connection, *, user_id: str, language: str | None, now: int
) -> str:
    """A new account's first link, asking in the language of the browser that signed up,
    and speaking it to the world (None: the account's, once it has one)."""
    return await links.insert_link(
        conn, user_id=user_id, prompt=default_prompt(language), created_at=now, language=language
    )


async def account_for_email(conn: Connection, email: str, *, language: str | None = None) -> str:
    """The account of this (normalised) address, created with a default link if new.
    ``language``: the signing-up browser's, for the new account and its first link's
    prompt (None: English, and the first dashboard page picks the account's language)."""
    now = now_us()
    user_id = new_ulid(now)
    if await repository.insert_user_if_new(
        conn,
        user_id=user_id,
        email=email,
        name=display_name(email),
        language=language,
        created_at=now,
    ):
        await _insert_default_link(conn, user_id=user_id, language=language, now=now)
        return user_id
    existing = await repository.user_id_by_email(conn, email)
    assert existing is not None, "the insert was refused only because the address has an account"
    return existing


async def account_for_identity(
    conn: Connection,
    *,
    subject: str,
    email: str,
    name: str,
    picture_url: str | None,
    language: str | None = None,
) -> str:
    """The account a provider identity signs in to: the subject's own, else the one with
    its verified address (the subject is attached), else a new one with a default link.
    An account is one person, whichever way they sign in."""
    email = email.strip().lower()
    found = await repository.update_user_for_subject(
        conn, subject=subject, email=email, name=name, picture_url=picture_url
    ) or await repository.attach_subject_by_email(
        conn, subject=subject, email=email, name=name, picture_url=picture_url
    )
    if found is not None:
        return found
    now = now_us()
    user_id = new_ulid(now)
    inserted = await repository.insert_user_if_new(
        conn,
        user_id=user_id,
        email=email,
        name=name,
        picture_url=picture_url,
        subject=subject,
        language=language,
        created_at=now,
    )
    if not inserted:  # a sign-in of the same person committed in between
        raise Conflict("Signing in twice at once: please try again")
    await _insert_default_link(conn, user_id=user_id, language=language, now=now)
    return user_id


async def _insert_api_key(conn: Connection, *, user_id: str, name: str, now: int) -> NewApiKey:
    api_key = new_api_key()
    key_id = new_ulid(now)
    await repository.insert_api_key(
        conn,
        key_id=key_id,
        user_id=user_id,
        name=name,
        key_hash=credential_hash(api_key),
        last_chars=api_key[-4:],
        created_at=now,
    )
    return NewApiKey(
        id=key_id, name=name, api_key=api_key, last_chars=api_key[-4:], created_at=isoformat_us(now)
    )


async def create_api_key(db: Database, *, user_id: str, name: str) -> NewApiKey:
    if not name or len(name) > MAX_KEY_NAME_CHARACTERS:
        raise ValidationFailed(
            f"name must be 1 to {MAX_KEY_NAME_CHARACTERS} characters",
            [FieldProblem("name", "too_long" if name else "too_short")],
        )
    sent, name = name, name.strip()
    if not name:
        raise ValidationFailed("name must not be blank", [FieldProblem("name", "blank")])
    if contains_control_characters(sent):  # strip() takes some controls for whitespace
        raise ValidationFailed(
            "name must not contain control characters",
            [FieldProblem("name", "control_character")],
        )
    # Counted and added in a transaction that runs alone for this creator, on every
    # instance: parallel creations would otherwise all count below the cap.
    async with db.transaction() as tx:
        await one_at_a_time(tx, f"api_keys:{user_id}")
        if await repository.count_keys_in_use(tx, user_id) >= MAX_API_KEYS:
            raise TooManyApiKeys(
                f"At most {MAX_API_KEYS} API keys in use at once; revoke one first"
            )
        return await _insert_api_key(tx, user_id=user_id, name=name, now=now_us())


async def list_api_keys(db: Database, *, user_id: str) -> list[ApiKeyInfo]:
    def when(value: int | None) -> str | None:
        return None if value is None else isoformat_us(value)

    return [
        ApiKeyInfo(
            id=row["id"],
            name=row["name"],
            last_chars=row["last_chars"],
            created_at=isoformat_us(row["created_at"]),
            last_used_at=when(row["last_used_at"]),
            revoked_at=when(row["revoked_at"]),
        )
        for row in await repository.list_api_keys(db, user_id)
    ]


async def revoke_api_key(db: Database, *, user_id: str, key_id: str) -> None:
    """Revoke one of the user's keys: refused from then on, on every instance."""
    changed = changed_key(user_id)
    async with db.transaction() as tx:
        if not await repository.revoke_api_key(
            tx, key_id=key_id, user_id=user_id, revoked_at=now_us()
        ):
            raise NotFound("No API key with this id among yours")
        await announce(tx, [changed])
    forget_credentials(changed)


async def profile(db: Database, *, user_id: str) -> Profile:
    row = await repository.profile(db, user_id)
    if row is None:  # the account was deleted while its credential was in flight
        raise Unauthorized("This account no longer exists")
    return Profile(
        user_id=row["id"],
        name=row["name"],
        email=row["email"],
        link_id=row["link_id"],
        profile_url=row["picture_url"],
        created_at=isoformat_us(row["created_at"]),
    )


async def grant_admin(db: Database, *, email: str) -> int:
    async with db.transaction() as tx:
        user_ids = await repository.grant_admin(tx, normalised_email(email))
        changed = [changed_key(user_id) for user_id in user_ids]
        await announce(tx, changed)
    if not user_ids:
        raise NotFound(f"No creator with e-mail {email}")
    forget_credentials(*changed)
    return len(user_ids)
