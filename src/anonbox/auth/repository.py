"""SQL for accounts, API keys, sign-in state and sessions."""

from __future__ import annotations

from collections.abc import Sequence

from anonbox.core.database import Connection, Row


async def insert_user(
    conn: Connection,
    *,
    user_id: str,
    email: str,
    name: str,
    created_at: int,
    language: str | None = None,
) -> None:
    await conn.execute(
        "INSERT INTO users (id, email, name, created_at, language) VALUES ($1, $2, $3, $4, $5)",
        user_id,
        email,
        name,
        created_at,
        language,
    )


async def user_id_by_email(conn: Connection, email: str) -> str | None:
    row = await conn.fetchrow("SELECT id FROM users WHERE email = $1", email)
    return None if row is None else str(row["id"])


async def insert_api_key(
    conn: Connection,
    *,
    key_id: str,
    user_id: str,
    name: str,
    key_hash: str,
    last_chars: str,
    created_at: int,
) -> None:
    await conn.execute(
        "INSERT INTO api_keys (id, user_id, name, key_hash, last_chars, created_at)"
        " VALUES ($1, $2, $3, $4, $5, $6)",
        key_id,
        user_id,
        name,
        key_hash,
        last_chars,
        created_at,
    )


async def count_keys_in_use(conn: Connection, user_id: str) -> int:
    row = await conn.fetchrow(
        "SELECT count(*) AS n FROM api_keys WHERE user_id = $1 AND revoked_at IS NULL", user_id
    )
    assert row is not None, "an aggregate always returns a row"
    return int(row["n"])


async def list_api_keys(conn: Connection, user_id: str) -> Sequence[Row]:
    return await conn.fetch(
        "SELECT id, name, last_chars, created_at, last_used_at, revoked_at FROM api_keys"
        " WHERE user_id = $1 ORDER BY id DESC",
        user_id,
    )


async def revoke_api_key(conn: Connection, *, key_id: str, user_id: str, revoked_at: int) -> bool:
    """Revoke one of the user's keys; False when it is not theirs. Revoking twice is fine."""
    changed = await conn.execute(
        "UPDATE api_keys SET revoked_at = COALESCE(revoked_at, $3) WHERE id = $1 AND user_id = $2",
        key_id,
        user_id,
        revoked_at,
    )
    return changed == 1


# --- accounts: one per e-mail address, a provider subject attached ------------------------


async def insert_user_if_new(
    conn: Connection,
    *,
    user_id: str,
    email: str,
    name: str,
    picture_url: str | None = None,
    subject: str | None = None,
    language: str | None = None,
    created_at: int,
) -> bool:
    """Create an account; False when its address (or subject) already has one."""
    inserted = await conn.execute(
        "INSERT INTO users (id, email, name, picture_url, google_sub, language, created_at)"
        " VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING",
        user_id,
        email,
        name,
        picture_url,
        subject,
        language,
        created_at,
    )
    return inserted == 1


async def update_user_for_subject(
    conn: Connection, *, subject: str, email: str, name: str, picture_url: str | None
) -> str | None:
    """Refresh the account of this subject: its name and picture, and its address unless
    another account has that address. The account's id, or None."""
    row = await conn.fetchrow(
        "UPDATE users SET name = $3, picture_url = $4,"
        " email = CASE WHEN EXISTS (SELECT 1 FROM users o WHERE o.email = $2"
        "  AND o.id <> users.id) THEN email ELSE $2 END"
        " WHERE google_sub = $1 RETURNING id",
        subject,
        email,
        name,
        picture_url,
    )
    return None if row is None else str(row["id"])


async def attach_subject_by_email(
    conn: Connection, *, subject: str, email: str, name: str, picture_url: str | None
) -> str | None:
    """Give the account of this address the provider subject; its id, or None."""
    row = await conn.fetchrow(
        "UPDATE users SET google_sub = $1, name = $3, picture_url = $4 WHERE email = $2"
        " RETURNING id",
        subject,
        email,
        name,
        picture_url,
    )
    return None if row is None else str(row["id"])


async def profile(conn: Connection, user_id: str) -> Row | None:
    return await conn.fetchrow(
        "SELECT u.id, u.name, u.email, u.picture_url, u.created_at,"
        " (SELECT l.id FROM links l WHERE l.user_id = u.id"
        "  ORDER BY l.created_at, l.id LIMIT 1) AS link_id"
        " FROM users u WHERE u.id = $1",
        user_id,
    )


# --- sign-in state ---------------------------------------------------------------------


async def insert_signin_state(
    conn: Connection,
    *,
    state: str,
    binding_hash: str,
    code_verifier: str,
    nonce: str,
    expires_at: int,
) -> None:
    await conn.execute(
        "INSERT INTO signin_states (state, binding_hash, code_verifier, nonce, expires_at)"
        " VALUES ($1, $2, $3, $4, $5)",
        state,
        binding_hash,
        code_verifier,
        nonce,
        expires_at,
    )


async def purge_signin_states(conn: Connection, *, expired_before: int) -> None:
    await conn.execute("DELETE FROM signin_states WHERE expires_at < $1", expired_before)


async def consume_signin_state(
    conn: Connection, *, state: str, binding_hash: str, now: int
) -> Row | None:
    """Mark the state used, once: only if issued here, to this user agent, unexpired, unused."""
    return await conn.fetchrow(
        "UPDATE signin_states SET used_at = $3"
        " WHERE state = $1 AND binding_hash = $2 AND used_at IS NULL AND expires_at > $3"
        " RETURNING code_verifier, nonce",
        state,
        binding_hash,
        now,
    )


# --- sessions --------------------------------------------------------------------------


async def insert_session(
    conn: Connection,
    *,
    session_id: str,
    user_id: str,
    access_hash: str,
    access_expires_at: int,
    refresh_hash: str,
    refresh_expires_at: int,
    created_at: int,
) -> None:
    await conn.execute(
        "INSERT INTO sessions (id, user_id, access_hash, access_expires_at, refresh_hash,"
        " refresh_expires_at, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7)",
        session_id,
        user_id,
        access_hash,
        access_expires_at,
        refresh_hash,
        refresh_expires_at,
        created_at,
    )


async def purge_sessions(conn: Connection, *, ended_before: int, opened_before: int) -> None:
    """Forget sessions that ended (expired or signed out) before ``ended_before`` or were
    opened before ``opened_before``, with their spent refresh tokens."""
    await conn.execute(
        "DELETE FROM sessions WHERE refresh_expires_at < $1 OR revoked_at < $1 OR created_at < $2",
        ended_before,
        opened_before,
    )


async def rotate_session(
    conn: Connection,
    *,
    old_refresh_hash: str,
    access_hash: str,
    access_expires_at: int,
    refresh_hash: str,
    refresh_expires_at: int,
    now: int,
    opened_after: int,
) -> Row | None:
    """Swap in new tokens if ``old_refresh_hash`` is the session's live refresh token and
    the session was opened after ``opened_after``: the session's id and user_id."""
    return await conn.fetchrow(
        "UPDATE sessions SET access_hash = $2, access_expires_at = $3,"
        " refresh_hash = $4, refresh_expires_at = $5"
        " WHERE refresh_hash = $1 AND revoked_at IS NULL AND refresh_expires_at > $6"
        " AND created_at > $7 RETURNING id, user_id",
        old_refresh_hash,
        access_hash,
        access_expires_at,
        refresh_hash,
        refresh_expires_at,
        now,
        opened_after,
    )


async def spend_refresh_token(
    conn: Connection, *, refresh_hash: str, session_id: str, spent_at: int
) -> None:
    await conn.execute(
        "INSERT INTO spent_refresh_tokens (refresh_hash, session_id, spent_at) VALUES ($1, $2, $3)",
        refresh_hash,
        session_id,
        spent_at,
    )


async def session_is_open(conn: Connection, session_id: str, now: int) -> bool:
    """Whether the session is neither signed out nor past its refresh lifetime."""
    row = await conn.fetchrow(
        "SELECT 1 FROM sessions WHERE id = $1 AND revoked_at IS NULL AND refresh_expires_at > $2",
        session_id,
        now,
    )
    return row is not None


async def session_of_spent_token(conn: Connection, refresh_hash: str) -> str | None:
    row = await conn.fetchrow(
        "SELECT session_id FROM spent_refresh_tokens WHERE refresh_hash = $1", refresh_hash
    )
    return None if row is None else str(row["session_id"])


async def revoke_session(conn: Connection, *, session_id: str, revoked_at: int) -> None:
    await conn.execute(
        "UPDATE sessions SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL",
        session_id,
        revoked_at,
    )


async def grant_admin(conn: Connection, email: str) -> list[str]:
    """Make every account with this e-mail an admin; the ids of the accounts changed."""
    rows = await conn.fetch("UPDATE users SET is_admin = TRUE WHERE email = $1 RETURNING id", email)
    return [str(row["id"]) for row in rows]


# --- sign-in links by e-mail ---------------------------------------------------------------


async def insert_email_signin(
    conn: Connection,
    *,
    token_hash: str,
    email: str,
    binding_hash: str | None,
    created_at: int,
    expires_at: int,
    mail_due_at: int | None = None,
    mail_language: str | None = None,
    site_url: str | None = None,
) -> None:
    """One statement whether or not a mail is to go out: only ``mail_due_at`` (None: no
    mail) tells them apart, so asking does the same work either way."""
    await conn.execute(
        "INSERT INTO email_signin_tokens (token_hash, email, binding_hash, created_at,"
        " expires_at, mail_due_at, mail_language, site_url)"
        " VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
        token_hash,
        email,
        binding_hash,
        created_at,
        expires_at,
        mail_due_at,
        mail_language,
        site_url,
    )


async def due_signin_mails(conn: Connection, now: int, limit: int) -> Sequence[Row]:
    """Sign-in mails whose time has come, oldest first; ``user_id`` is the row's token
    hash (the dispatcher's unit of concurrency: each mail is its own)."""
    return await conn.fetch(
        "SELECT token_hash AS user_id, token_hash, mail_due_at FROM email_signin_tokens"
        " WHERE mail_due_at <= $1 ORDER BY mail_due_at LIMIT $2",
        now,
        limit,
    )


async def claim_signin_mail(
    conn: Connection, *, token_hash: str, seen_at: int, until: int
) -> Row | None:
    """Take the mail until ``until`` if nobody has since it was seen due; what writing it
    needs, or None."""
    return await conn.fetchrow(
        "UPDATE email_signin_tokens SET mail_due_at = $3"
        " WHERE token_hash = $1 AND mail_due_at = $2"
        " RETURNING email, binding_hash, expires_at, mail_attempts, mail_language, site_url",
        token_hash,
        seen_at,
        until,
    )


async def finish_signin_mail(
    conn: Connection, *, token_hash: str, due_at: int | None, attempts: int
) -> None:
    """The mail went out or was given up (``due_at`` None), or is due again at ``due_at``."""
    await conn.execute(
        "UPDATE email_signin_tokens SET mail_due_at = $2, mail_attempts = $3 WHERE token_hash = $1",
        token_hash,
        due_at,
        attempts,
    )


async def purge_email_signins(conn: Connection, *, expired_before: int) -> None:
    await conn.execute("DELETE FROM email_signin_tokens WHERE expires_at < $1", expired_before)


async def consume_email_signin(
    conn: Connection, *, token_hash: str, binding_hash: str | None, now: int
) -> str | None:
    """Mark the link used, once: only unexpired, unused, and opened in a browser that
    asked for its address while it is valid (any browser, for a link with no binding).
    A browser asked when one of the address's unexpired rows holds its binding: the
    link's own, or one written when it asked and no new mail went out. Its address, or
    None."""
    row = await conn.fetchrow(
        "UPDATE email_signin_tokens SET used_at = $3"
        " WHERE token_hash = $1 AND used_at IS NULL AND expires_at > $3"
        " AND (binding_hash IS NULL OR binding_hash = $2 OR EXISTS ("
        "SELECT 1 FROM email_signin_tokens asked WHERE asked.email = email_signin_tokens.email"
        " AND asked.binding_hash = $2 AND asked.expires_at > $3))"
        " RETURNING email",
        token_hash,
        binding_hash,
        now,
    )
    return None if row is None else str(row["email"])


async def email_signin(conn: Connection, token_hash: str) -> Row | None:
    return await conn.fetchrow(
        "SELECT binding_hash, expires_at, used_at FROM email_signin_tokens WHERE token_hash = $1",
        token_hash,
    )
