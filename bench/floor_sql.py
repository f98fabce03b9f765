"""The statements the floor sends, copied from anonbox's repositories, in anonbox's order
(``bench/floor.py`` says which endpoint runs which, and where each comes from). SQL is
written once with ``$n`` placeholders; ``floor_db.SQLite`` makes them ``?n``."""

# ruff: noqa: S608 - the statements are constants, put together from constants

POSTING_TARGET = (
    "SELECT l.user_id, l.paused, l.muted, EXISTS (SELECT 1 FROM account_deletions d"
    " WHERE d.user_id = l.user_id) AS disabled FROM links l WHERE l.id = $1"
)
BLOCKS = (
    "SELECT id, sender_epoch, sender_hash, network FROM blocks"
    " WHERE user_id = $1 OR user_id IS NULL"
)
MUTED_VERSIONS = (
    "SELECT count(*) AS n, max(id) AS newest,"
    " (SELECT count(*) FROM muted_phrases) AS site_n,"
    " (SELECT max(id) FROM muted_phrases) AS site_newest"
    " FROM muted_words WHERE user_id = $1"
)
MUTED_WORDS = "SELECT normalized FROM muted_words WHERE user_id = $1"
INSERT_POSTS = {
    "sqlite": (
        "INSERT INTO messages (id, link_id, content, created_at, sender_epoch, sender_hash,"
        " sender_network_hash)"
        " SELECT r.value ->> 0, l.id, r.value ->> 2, r.value ->> 3, r.value ->> 4, r.value ->> 5,"
        " r.value ->> 6"
        " FROM json_each($1) r JOIN links l ON l.id = r.value ->> 1"
        " RETURNING id"
    ),
    "postgresql": (
        "WITH m AS ("
        " INSERT INTO messages (id, link_id, content, created_at, sender_epoch, sender_hash,"
        " sender_network_hash)"
        " SELECT r.id, l.id, r.content, r.created_at, r.sender_epoch, r.sender_hash,"
        " r.sender_network_hash"
        " FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::int[], $6::text[],"
        " $7::text[])"
        " AS r(id, link_id, content, created_at, sender_epoch, sender_hash, sender_network_hash)"
        " JOIN links l ON l.id = r.link_id"
        " RETURNING id, link_id, created_at),"
        " e AS ("
        " INSERT INTO events (user_id, link_id, kind, message_id, created_at)"
        " SELECT l.user_id, m.link_id, 'message.created', m.id, m.created_at"
        " FROM m JOIN links l ON l.id = m.link_id ORDER BY m.id)"
        " SELECT m.id, (SELECT count(pg_notify('anonbox_events', 'link:' || d.link_id))"
        " FROM (SELECT DISTINCT link_id FROM m) d) AS notified FROM m"
    ),
}
EVENTS_OF_POSTS = (  # SQLite: the stored messages' events, in the insert's transaction
    "INSERT INTO events (user_id, link_id, kind, message_id, created_at)"
    " SELECT l.user_id, m.link_id, 'message.created', m.id, m.created_at"
    " FROM messages m JOIN links l ON l.id = m.link_id"
    " WHERE m.id IN (SELECT value FROM json_each($1)) ORDER BY m.id"
)
API_KEY = (
    "SELECT k.id, k.user_id, k.key_hash, k.last_used_at, u.is_admin,"
    " EXISTS (SELECT 1 FROM account_deletions d WHERE d.user_id = u.id) AS erasing"
    " FROM api_keys k JOIN users u ON u.id = k.user_id"
    " WHERE k.key_hash = $1 AND k.revoked_at IS NULL"
)
TOUCH_KEY = "UPDATE api_keys SET last_used_at = $1 WHERE id = $2"
LINK_HOLDER = (
    "SELECT l.user_id, EXISTS (SELECT 1 FROM account_deletions d"
    " WHERE d.user_id = l.user_id) AS disabled FROM links l WHERE l.id = $1"
)
# True only while the link is the user's and in use: the creator's writes check it in the
# statement that writes, not in a query before it.
LINK_OWNED_BY = (
    "EXISTS (SELECT 1 FROM links l WHERE l.id = {link} AND l.user_id = {owner}"
    " AND NOT EXISTS (SELECT 1 FROM account_deletions d WHERE d.user_id = l.user_id))"
)
TOGGLE_LIKE = {  # one toggle: (message id, link id, owner id, flips)
    "sqlite": (
        "UPDATE messages SET like_by_creator = like_by_creator <> ((t.value ->> 3) % 2 = 1)"
        " FROM json_each($1) t"
        " WHERE messages.id = t.value ->> 0 AND messages.link_id = t.value ->> 1 AND "
        + LINK_OWNED_BY.format(link="messages.link_id", owner="t.value ->> 2")
        + " RETURNING id, link_id, like_by_creator,"
        " (SELECT user_id FROM links WHERE links.id = messages.link_id) AS owner_id"
    ),
    "postgresql": (
        "UPDATE messages SET like_by_creator = messages.like_by_creator <> (t.flips % 2 = 1)"
        " FROM unnest($1::text[], $2::text[], $3::text[], $4::int[])"
        " AS t(id, link_id, owner_id, flips)"
        " WHERE messages.id = t.id AND messages.link_id = t.link_id AND "
        + LINK_OWNED_BY.format(link="messages.link_id", owner="t.owner_id")
        + " RETURNING messages.id, messages.link_id, messages.like_by_creator, t.owner_id"
    ),
}
COUNT_OWNED_REPLY = (
    "UPDATE messages SET reply_count = reply_count + 1 WHERE id = $1 AND link_id = $2 AND "
    + LINK_OWNED_BY.format(link="$2", owner="$3")
)
INSERT_REPLY = "INSERT INTO replies (id, message_id, content, created_at) VALUES ($1, $2, $3, $4)"
RECORD_EVENT = (  # SQLite
    "INSERT INTO events (user_id, link_id, kind, message_id, reply_id, created_at)"
    " SELECT user_id, id, $2, $3, $4, $5 FROM links WHERE id = $1"
)
ADD_REPLIES = (  # PostgreSQL: the three writes and the notification in one statement
    "WITH b AS (SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[],"
    " $5::text[], $6::bigint[]) AS b(message_id, link_id, owner_id, reply_id, content,"
    " created_at)),"
    " m AS (UPDATE messages SET reply_count = messages.reply_count + c.n"
    " FROM (SELECT message_id, link_id, owner_id, count(*) AS n FROM b"
    " GROUP BY message_id, link_id, owner_id) c"
    " WHERE messages.id = c.message_id AND messages.link_id = c.link_id AND "
    + LINK_OWNED_BY.format(link="messages.link_id", owner="c.owner_id")
    + " RETURNING messages.id, messages.link_id, c.owner_id),"
    " a AS (SELECT b.reply_id, m.id AS message_id, m.link_id, b.owner_id, b.content,"
    " b.created_at FROM b JOIN m ON m.id = b.message_id AND m.owner_id = b.owner_id),"
    " r AS (INSERT INTO replies (id, message_id, content, created_at)"
    " SELECT reply_id, message_id, content, created_at FROM a),"
    " e AS (INSERT INTO events (user_id, link_id, kind, message_id, reply_id, created_at)"
    " SELECT owner_id, link_id, $7, message_id, reply_id, created_at FROM a ORDER BY reply_id)"
    " SELECT a.reply_id, (SELECT count(pg_notify($8, 'link:' || d.link_id))"
    " FROM (SELECT DISTINCT link_id FROM a) d) AS notified FROM a"
)
NOTIFY_CHANNEL = "anonbox_events"
INBOX = (  # anonbox's statement, answer ids included (issue 41's answer pages)
    "SELECT m.id, m.content, m.like_by_creator, m.created_at, m.reply_count, m.follow_up_of,"
    " CASE WHEN m.reply_count > 0 THEN"
    " (SELECT a.id FROM answers a WHERE a.message_id = m.id) END AS answer_id"
    " FROM messages m JOIN (SELECT id FROM messages WHERE link_id = $1{before}"
    " ORDER BY id DESC LIMIT $2) page ON page.id = m.id ORDER BY m.id DESC"
)
INBOX_FIRST = INBOX.format(before="")
INBOX_AFTER = INBOX.format(before=" AND id < $3")
