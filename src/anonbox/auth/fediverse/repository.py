"""SQL for fediverse accounts: anonbox's registrations with instances
(``fediverse_apps``), the remote accounts linked to anonbox accounts
(``fediverse_accounts``) and sign-ins in progress (``fediverse_signins``)."""

from __future__ import annotations

from collections.abc import Sequence

from anonbox.core.database import Connection, Row

# --- registrations with instances --------------------------------------------------------


async def app_for(conn: Connection, *, instance: str, redirect_uri: str) -> Row | None:
    return await conn.fetchrow(
        "SELECT client_id, client_secret FROM fediverse_apps"
        " WHERE instance = $1 AND redirect_uri = $2",
        instance,
        redirect_uri,
    )


async def apps_of(conn: Connection, *, instance: str) -> Sequence[Row]:
    """Every registration with the instance (one per redirect address anonbox has had),
    the newest first."""
    return await conn.fetch(
        "SELECT client_id, client_secret FROM fediverse_apps WHERE instance = $1"
        " ORDER BY created_at DESC",
        instance,
    )


async def insert_app(
    conn: Connection,
    *,
    instance: str,
    redirect_uri: str,
    client_id: str,
    client_secret: str,
    created_at: int,
) -> None:
    """Keep a registration; one registered meanwhile by another sign-in is kept instead."""
    await conn.execute(
        "INSERT INTO fediverse_apps (instance, redirect_uri, client_id, client_secret,"
        " created_at) VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING",
        instance,
        redirect_uri,
        client_id,
        client_secret,
        created_at,
    )


# --- sign-ins in progress ----------------------------------------------------------------


async def insert_signin(
    conn: Connection,
    *,
    state: str,
    binding_hash: str,
    software: str,
    instance: str,
    code_verifier: str | None,
    user_id: str | None,
    expires_at: int,
) -> None:
    await conn.execute(
        "INSERT INTO fediverse_signins (state, binding_hash, software, instance,"
        " code_verifier, user_id, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7)",
        state,
        binding_hash,
        software,
        instance,
        code_verifier,
        user_id,
        expires_at,
    )


async def purge_signins(conn: Connection, *, expired_before: int) -> None:
    await conn.execute("DELETE FROM fediverse_signins WHERE expires_at < $1", expired_before)


async def consume_signin(
    conn: Connection, *, state: str, binding_hash: str, now: int
) -> Row | None:
    """Spend a sign-in in progress, once, in the browser that started it, in time."""
    return await conn.fetchrow(
        "UPDATE fediverse_signins SET used_at = $3 WHERE state = $1 AND binding_hash = $2"
        " AND used_at IS NULL AND expires_at > $3"
        " RETURNING software, instance, code_verifier, user_id",
        state,
        binding_hash,
        now,
    )


# --- linked accounts ---------------------------------------------------------------------

_ACCOUNT = (
    "SELECT id, user_id, software, instance, remote_id, acct, created_at, disconnected_at"
    " FROM fediverse_accounts"
)


async def account_by_remote(conn: Connection, *, instance: str, remote_id: str) -> Row | None:
    return await conn.fetchrow(
        _ACCOUNT + " WHERE instance = $1 AND remote_id = $2", instance, remote_id
    )


async def insert_account(
    conn: Connection,
    *,
    account_id: str,
    user_id: str,
    software: str,
    instance: str,
    remote_id: str,
    acct: str,
    access_token: str,
    created_at: int,
) -> bool:
    inserted = await conn.execute(
        "INSERT INTO fediverse_accounts (id, user_id, software, instance, remote_id, acct,"
        " access_token, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)"
        " ON CONFLICT DO NOTHING",
        account_id,
        user_id,
        software,
        instance,
        remote_id,
        acct,
        access_token,
        created_at,
    )
    return inserted == 1


async def reconnect(conn: Connection, *, account_id: str, acct: str, access_token: str) -> None:
    """A new token from signing in again: the account is connected again."""
    await conn.execute(
        "UPDATE fediverse_accounts SET access_token = $2, acct = $3, disconnected_at = NULL"
        " WHERE id = $1",
        account_id,
        access_token,
        acct,
    )


async def accounts_of(conn: Connection, user_id: str) -> Sequence[Row]:
    return await conn.fetch(_ACCOUNT + " WHERE user_id = $1 ORDER BY id", user_id)


async def token_of(conn: Connection, *, account_id: str, user_id: str) -> Row | None:
    """The account's software, instance and token ('' once disconnected): for revoking it."""
    return await conn.fetchrow(
        "SELECT software, instance, access_token FROM fediverse_accounts"
        " WHERE id = $1 AND user_id = $2",
        account_id,
        user_id,
    )


async def forget_token(conn: Connection, *, account_id: str, now: int) -> None:
    """The token emptied and the account disconnected, as when the instance refuses it."""
    await conn.execute(
        "UPDATE fediverse_accounts SET access_token = '', disconnected_at = $2"
        " WHERE id = $1 AND disconnected_at IS NULL",
        account_id,
        now,
    )


async def delete_account(conn: Connection, *, account_id: str, user_id: str) -> bool:
    deleted = await conn.execute(
        "DELETE FROM fediverse_accounts WHERE id = $1 AND user_id = $2", account_id, user_id
    )
    return deleted == 1


async def other_ways_in(conn: Connection, *, user_id: str, account_id: str) -> int:
    """How many ways into the account there are besides this fediverse account: its other
    fediverse accounts, Google, and its e-mail address unless it is a placeholder."""
    row = await conn.fetchrow(
        "SELECT (SELECT COUNT(*) FROM fediverse_accounts f WHERE f.user_id = u.id"
        "  AND f.id <> $2)"
        " + CASE WHEN u.google_sub IS NOT NULL THEN 1 ELSE 0 END"
        " + CASE WHEN u.email LIKE $3 THEN 0 ELSE 1 END AS ways"
        " FROM users u WHERE u.id = $1",
        user_id,
        account_id,
        "%@fediverse.invalid",
    )
    return 0 if row is None else int(row["ways"])


async def insert_user(
    conn: Connection,
    *,
    user_id: str,
    email: str,
    name: str,
    language: str | None,
    created_at: int,
) -> None:
    """An account made by a fediverse sign-in (``email`` a placeholder nobody receives)."""
    await conn.execute(
        "INSERT INTO users (id, email, name, language, created_at) VALUES ($1, $2, $3, $4, $5)",
        user_id,
        email,
        name,
        language,
        created_at,
    )
