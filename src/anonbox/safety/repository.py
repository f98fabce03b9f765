"""SQL for safety: blocks, muted words, and the key periods of senders' hashes."""

from __future__ import annotations

from collections.abc import Sequence

from anonbox.core.database import Connection, Row

_BLOCK_COLUMNS = "SELECT id, message_excerpt, created_at, network FROM blocks"

# The versions of the creator's list and of the site's (migration 0025): two primary-key
# reads, the one query a post makes for muted words however long the lists are.
SITE = "site"  # the owner of the site's muted phrases (a creator's is their id)
_VERSIONS = (
    "SELECT (SELECT version FROM muted_list_versions WHERE owner = $1) AS own,"
    " (SELECT version FROM muted_list_versions WHERE owner = $2) AS site"
)


# --- blocks ------------------------------------------------------------------------------


async def message_sender(conn: Connection, *, message_id: str, link_id: str | None) -> Row | None:
    """The message's content and its sender's hashes (under ``link_id`` when given)."""
    # In the inbox, or in the filtered folder (where a muted word put it): a message there
    # can be blocked as well.
    columns = "content, sender_epoch, sender_hash, sender_network_hash"
    where = "id = $1" if link_id is None else "id = $1 AND link_id = $2"
    sql = (
        f"SELECT {columns} FROM messages WHERE {where}"  # noqa: S608 - constant clauses
        f" UNION ALL SELECT {columns} FROM filtered_messages WHERE {where}"
    )
    return await (
        conn.fetchrow(sql, message_id, link_id)
        if link_id is not None
        else conn.fetchrow(sql, message_id)
    )


async def block_of_message(
    conn: Connection, *, owner_id: str | None, message_id: str, network: bool
) -> Row | None:
    """The block already made from this message, this way, by ``owner_id`` (or site-wide)."""
    scope = "user_id IS NULL" if owner_id is None else "user_id = $3"
    return await conn.fetchrow(
        f"{_BLOCK_COLUMNS} WHERE {scope} AND message_id = $1 AND network = $2",
        message_id,
        network,
        *([] if owner_id is None else [owner_id]),
    )


async def insert_block(
    conn: Connection,
    *,
    block_id: str,
    owner_id: str | None,
    message_id: str,
    sender_epoch: int,
    sender_hash: str,
    excerpt: str,
    created_at: int,
    network: bool,
) -> None:
    await conn.execute(
        "INSERT INTO blocks (id, user_id, message_id, sender_epoch, sender_hash,"
        " message_excerpt, created_at, network) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
        block_id,
        owner_id,
        message_id,
        sender_epoch,
        sender_hash,
        excerpt,
        created_at,
        network,
    )


async def blocks_of(conn: Connection, owner_id: str) -> Sequence[Row]:
    return await conn.fetch(_BLOCK_COLUMNS + " WHERE user_id = $1 ORDER BY id DESC", owner_id)


async def blocks_from_message(conn: Connection, *, owner_id: str, message_id: str) -> Sequence[Row]:
    """The blocks ``owner_id`` made from this one message (the sender's, the network's)."""
    return await conn.fetch(
        _BLOCK_COLUMNS + " WHERE user_id = $1 AND message_id = $2 ORDER BY id", owner_id, message_id
    )


async def delete_block(
    conn: Connection, *, owner_id: str, block_id: str, message_id: str | None = None
) -> int:
    """Delete one of ``owner_id``'s blocks (with ``message_id``: only if made from it)."""
    if message_id is None:
        return await conn.execute(
            "DELETE FROM blocks WHERE id = $1 AND user_id = $2", block_id, owner_id
        )
    return await conn.execute(
        "DELETE FROM blocks WHERE id = $1 AND user_id = $2 AND message_id = $3",
        block_id,
        owner_id,
        message_id,
    )


async def blocks_against(conn: Connection, owner_id: str) -> Sequence[Row]:
    """Every block a post to ``owner_id``'s links must pass: theirs and the site's."""
    return await conn.fetch(
        "SELECT id, sender_epoch, sender_hash, network FROM blocks"
        " WHERE user_id = $1 OR user_id IS NULL",
        owner_id,
    )


async def rekey_block(
    conn: Connection, *, block_id: str, epoch: int, sender_hash: str | None
) -> None:
    await conn.execute(
        "UPDATE blocks SET sender_epoch = $2, sender_hash = $3 WHERE id = $1",
        block_id,
        epoch,
        sender_hash,
    )


# --- muted words -------------------------------------------------------------------------


async def muted_versions(conn: Connection, owner_id: str) -> Row:
    """The versions of the creator's list (``own``) and of the site's (``site``); None for
    a list that never held anything."""
    row = await conn.fetchrow(_VERSIONS, owner_id, SITE)
    assert row is not None, "a select of two subqueries always answers a row"
    return row


async def muted_list_changed(conn: Connection, owner: str) -> None:
    """Bump the version of ``owner``'s list (a creator's id, or ``SITE``), in the
    transaction that changes it."""
    await conn.execute(
        "INSERT INTO muted_list_versions (owner, version) VALUES ($1, 1)"
        " ON CONFLICT (owner) DO UPDATE SET version = muted_list_versions.version + 1",
        owner,
    )


async def site_phrases(conn: Connection) -> list[str]:
    """The site's muted phrases as shown (normalised by the matcher, so a change of
    normalisation holds for phrases muted before it too)."""
    rows = await conn.fetch("SELECT phrase FROM muted_phrases")
    return [row["phrase"] for row in rows]


async def muted_words_of(conn: Connection, owner_id: str) -> list[str]:
    """The creator's muted words as shown (normalised by the matcher, so a change of
    normalisation holds for words muted before it too)."""
    rows = await conn.fetch("SELECT word FROM muted_words WHERE user_id = $1", owner_id)
    return [row["word"] for row in rows]


async def insert_muted_word(
    conn: Connection,
    *,
    word_id: str,
    owner_id: str,
    word: str,
    normalized: str,
    created_at: int,
    most: int,
) -> int:
    """Add the word unless the creator has it already or has ``most`` words; 1 if added."""
    return await conn.execute(
        "INSERT INTO muted_words (id, user_id, word, normalized, created_at)"
        " SELECT $1, $2, $3, $4, $5"
        # $7 is $2 again: PostgreSQL infers one type per parameter, and these two differ.
        " WHERE (SELECT count(*) FROM muted_words WHERE user_id = $7) < $6"
        " ON CONFLICT (user_id, normalized) DO NOTHING",
        word_id,
        owner_id,
        word,
        normalized,
        created_at,
        most,
        owner_id,
    )


async def muted_word_exists(conn: Connection, *, owner_id: str, normalized: str) -> bool:
    return (
        await conn.fetchrow(
            "SELECT 1 FROM muted_words WHERE user_id = $1 AND normalized = $2", owner_id, normalized
        )
        is not None
    )


async def muted_word_rows(conn: Connection, owner_id: str) -> Sequence[Row]:
    return await conn.fetch(
        "SELECT id, word, created_at FROM muted_words WHERE user_id = $1 ORDER BY id DESC",
        owner_id,
    )


async def delete_muted_word(conn: Connection, *, owner_id: str, word_id: str) -> int:
    return await conn.execute(
        "DELETE FROM muted_words WHERE id = $1 AND user_id = $2", word_id, owner_id
    )


# --- key periods of senders' hashes ------------------------------------------------------


async def epoch_salt(conn: Connection, epoch: int) -> str | None:
    """The period's salt, or None once it is erased (or before it is made)."""
    row = await conn.fetchrow("SELECT salt FROM sender_epochs WHERE epoch = $1", epoch)
    return None if row is None else str(row["salt"])


async def insert_epoch(conn: Connection, *, epoch: int, salt: str, created_at: int) -> int:
    """Write the period's salt unless another instance did first; 1 if this one did."""
    return await conn.execute(
        "INSERT INTO sender_epochs (epoch, salt, created_at) VALUES ($1, $2, $3)"
        " ON CONFLICT (epoch) DO NOTHING",
        epoch,
        salt,
        created_at,
    )


async def forget_epochs_before(conn: Connection, *, epoch: int, idempotent_since: int) -> None:
    """Erase the hashes, blocks and salts of the periods before ``epoch``, and the
    idempotency records made before ``idempotent_since`` (run it in a transaction)."""
    await conn.execute("DELETE FROM idempotency_keys WHERE created_at < $1", idempotent_since)
    await conn.execute(
        "UPDATE messages SET sender_epoch = NULL, sender_hash = NULL,"
        " sender_network_hash = NULL"
        " WHERE sender_epoch < $1",
        epoch,
    )
    await conn.execute("DELETE FROM blocks WHERE sender_epoch < $1", epoch)
    await conn.execute("DELETE FROM sender_epochs WHERE epoch < $1", epoch)
