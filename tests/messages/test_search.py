"""GET /message/{link_id}/search: the creator's messages and replies that contain a text,
newest first, with the inbox's filters, items and cursor paging; on SQLite and PostgreSQL.

A page is found first among the link's newest messages, then through the index for what
lies below them (``messages.search_repository``): the tests that post more than
``WINDOW`` messages reach that second step, with queries long enough for the index and
too short for it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest
from alembic import command

from anonbox.core.database import connect
from anonbox.messages.search.repository import WALKS, WINDOW
from anonbox.migrations import alembic_config
from tests.actions import assert_error, inbox_items, post_message, post_reply
from tests.conftest import Creator
from tests.messages.test_listing import pipelined_posts
from tests.server import Server
from tests.support.http import loopback_client

UNKNOWN_LINK = "nosuchlink0"


def search(
    api: httpx.Client, creator: Creator, q: str, **params: Any
) -> tuple[list[dict[str, Any]], str | None]:
    """One page of results: the items and next_cursor."""
    found = api.get(
        f"/message/{creator.link_id}/search", params={"q": q, **params}, headers=creator.headers
    )
    assert found.status_code == 200, found.text
    body = found.json()
    assert body["status_code"] == 200
    assert set(body["data"]) == {"items", "next_cursor"}
    return list(body["data"]["items"]), body["data"]["next_cursor"]


def search_ids(api: httpx.Client, creator: Creator, q: str, **params: Any) -> list[str]:
    return [item["id"] for item in search(api, creator, q, limit=100, **params)[0]]


def all_pages(
    api: httpx.Client, creator: Creator, q: str, limit: int, **params: Any
) -> list[list[str]]:
    pages: list[list[str]] = []
    cursor: str | None = None
    while True:
        extra = {} if cursor is None else {"cursor": cursor}
        items, cursor = search(api, creator, q, limit=limit, **params, **extra)
        pages.append([item["id"] for item in items])
        if cursor is None:
            return pages
        assert len(pages) <= 200, "next_cursor never ended"


def post_many(server: Server, creator: Creator, contents: list[str]) -> list[str]:
    """Post in order, quickly; returns the ids, oldest first."""
    answers = pipelined_posts(server.url, f"/message/{creator.link_id}", contents)
    return [answer["data"]["id"] for answer in answers]


def post_in_parallel(
    server: Server, creator: Creator, contents: list[str], connections: int = 8
) -> dict[str, str]:
    """Post on several connections at once (so commits are shared); each id's text."""
    parts = [contents[n::connections] for n in range(connections)]
    with ThreadPoolExecutor(connections) as pool:
        answers = pool.map(lambda part: post_many(server, creator, part), parts)
        return {
            message_id: text
            for part, ids in zip(parts, answers, strict=True)
            for message_id, text in zip(ids, part, strict=True)
        }


# --- what is found ------------------------------------------------------------------------


def test_a_word_is_found_in_any_case_with_the_inbox_item(
    api: httpx.Client, creator: Creator
) -> None:
    pizza = post_message(api, creator.link_id, "Do you like Pizza with pineapple?")
    post_message(api, creator.link_id, "What is your favourite film?")
    later = post_message(api, creator.link_id, "PIZZA or pasta tonight")
    assert api.put(f"/message/{creator.link_id}/{pizza}/like", headers=creator.headers).is_success

    items, cursor = search(api, creator, "pizza")

    assert cursor is None
    assert [item["id"] for item in items] == [later, pizza]
    inbox = {item["id"]: item for item in inbox_items(api, creator)}
    assert items == [inbox[later], inbox[pizza]]  # the inbox's shape and values
    assert items[1]["like_by_creator"] is True
    assert search_ids(api, creator, "  PASTA tonight ") == [later]  # trimmed
    assert search_ids(api, creator, "lasagne") == []


@pytest.mark.parametrize(
    ("text", "queries"),
    [
        ("昨日は東京タワーに行きました。楽しかった", ["東京タワー", "京タ", "楽", "した。楽"]),
        ("안녕하세요, 반가워요! 오늘 날씨가 좋네요", ["반가워요", "날씨", "하세요, 반"]),
        ("Apa kabar? Semoga harimu menyenangkan", ["KABAR", "harimu menyenang"]),
    ],
)
def test_japanese_korean_and_indonesian_are_found_by_substring(
    api: httpx.Client, creator: Creator, text: str, queries: list[str]
) -> None:
    wanted = post_message(api, creator.link_id, text)
    post_message(api, creator.link_id, "something else entirely, 別のメッセージ, 다른 메시지")

    for q in queries:
        assert search_ids(api, creator, q) == [wanted], q


def test_a_match_in_a_reply_returns_its_message_once(api: httpx.Client, creator: Creator) -> None:
    asked = post_message(api, creator.link_id, "What do you think about animals?")
    post_message(api, creator.link_id, "Another question")
    post_reply(api, creator, asked, "The zebra is my favourite")
    post_reply(api, creator, asked, "Zebras and giraffes")

    items, _ = search(api, creator, "zebra")

    assert [item["id"] for item in items] == [asked]
    assert items[0]["message_content"] == "What do you think about animals?"
    assert items[0]["reply_count"] == 2


def test_filters_are_the_inboxs(api: httpx.Client, creator: Creator) -> None:
    liked = post_message(api, creator.link_id, "kiwi one")
    answered = post_message(api, creator.link_id, "kiwi two")
    plain = post_message(api, creator.link_id, "kiwi three")
    post_message(api, creator.link_id, "mango")
    assert api.put(f"/message/{creator.link_id}/{liked}/like", headers=creator.headers).is_success
    post_reply(api, creator, answered, "answered")

    assert search_ids(api, creator, "kiwi") == [plain, answered, liked]
    assert search_ids(api, creator, "kiwi", filter="all") == [plain, answered, liked]
    assert search_ids(api, creator, "kiwi", filter="liked") == [liked]
    assert search_ids(api, creator, "kiwi", filter="answered") == [answered]
    assert search_ids(api, creator, "kiwi", filter="unanswered") == [plain, liked]
    assert search_ids(api, creator, "kiwi", filter="unread") == [plain, answered, liked]
    assert search_ids(api, creator, "mango", filter="liked") == []


def test_pages_have_no_duplicates_or_gaps(api: httpx.Client, creator: Creator) -> None:
    ids = [
        post_message(api, creator.link_id, f"fig {n}" if n % 3 else f"plum {n}") for n in range(25)
    ]
    figs = [i for n, i in enumerate(ids) if n % 3][::-1]

    for limit in (1, 4, 7, 100):
        pages = all_pages(api, creator, "fig", limit)
        assert [i for page in pages for i in page] == figs, limit
        assert all(len(page) == limit for page in pages[:-1])


def test_below_the_newest_messages_the_index_finds_the_rest(
    server: Server, api: httpx.Client, creator: Creator
) -> None:
    """Matches only older than the first walk: found through the index (or, for a query
    too short for trigrams, by walking on), in messages and in replies, paged."""
    contents = [f"apricot {n}" if n % 2 else f"old filler {n}" for n in range(60)]
    contents[0] = "the oldest: 東京タワー and a rare word quokka"
    contents += [f"new filler {n}" for n in range(WINDOW)]
    ids = post_many(server, creator, contents)
    oldest = ids[0]
    post_reply(api, creator, ids[2], "a reply that says wombat")

    assert search_ids(api, creator, "quokka") == [oldest]  # the index, in a message
    assert search_ids(api, creator, "京タ") == [oldest]  # too short for trigrams: a walk
    assert search_ids(api, creator, "wombat") == [ids[2]]  # the index, in a reply
    apricots = [i for n, i in enumerate(ids[:60]) if n % 2][::-1]
    for limit in (1, 7, 100):
        pages = all_pages(api, creator, "apricot", limit)
        assert [i for page in pages for i in page] == apricots, limit
        assert all(len(page) == limit for page in pages[:-1])
    assert search_ids(api, creator, "apricot", filter="answered") == []
    assert search_ids(api, creator, "wombat", filter="unanswered") == []


def test_a_text_in_a_few_percent_of_a_long_inbox_is_paged_through_every_step(
    server: Server, creator: Creator
) -> None:
    """Found in the first walk, the second and the index (or the walk on, for two
    characters): pages meet without a duplicate or a gap."""
    count = WALKS[-1] + WINDOW + 300
    contents = [
        f"plum {n}" if n % 50 == 0 else (f"ガンバ {n}" if n % 97 == 0 else f"filler {n}")
        for n in range(count)
    ]
    sent = post_in_parallel(server, creator, contents)
    newest_first = sorted(sent, reverse=True)
    plums = [i for i in newest_first if sent[i].startswith("plum")]
    ganbas = [i for i in newest_first if sent[i].startswith("ガンバ")]
    with loopback_client(base_url=server.url, timeout=30) as api:
        for q, wanted in (("plum", plums), ("ガン", ganbas), ("ガンバ", ganbas)):
            for limit in (7, 100):
                pages = all_pages(api, creator, q, limit)
                assert [i for page in pages for i in page] == wanted, (q, limit)


def test_deleted_messages_and_replies_are_not_found(api: httpx.Client, creator: Creator) -> None:
    gone = post_message(api, creator.link_id, "delete me: walrus")
    kept = post_message(api, creator.link_id, "keep me")
    reply = post_reply(api, creator, kept, "walrus in a reply")
    assert search_ids(api, creator, "walrus") == [kept, gone]

    deleted = api.delete(f"/message/{creator.link_id}/{gone}", headers=creator.headers)
    assert deleted.status_code == 200, deleted.text
    assert search_ids(api, creator, "walrus") == [kept]

    deleted = api.delete(f"/message/{creator.link_id}/{kept}/{reply}", headers=creator.headers)
    assert deleted.status_code == 200, deleted.text
    assert search_ids(api, creator, "walrus") == []
    assert search_ids(api, creator, "keep me") == [kept]


def test_a_deleted_message_takes_its_replies_out_of_the_results(
    api: httpx.Client, creator: Creator
) -> None:
    asked = post_message(api, creator.link_id, "a question")
    post_reply(api, creator, asked, "an answer with a narwhal")
    assert search_ids(api, creator, "narwhal") == [asked]
    assert api.delete(f"/message/{creator.link_id}/{asked}", headers=creator.headers).is_success
    assert search_ids(api, creator, "narwhal") == []
    fresh = post_message(api, creator.link_id, "a new question")  # may reuse the rowids
    post_reply(api, creator, fresh, "another answer")
    assert search_ids(api, creator, "narwhal") == []
    assert search_ids(api, creator, "another answer") == [fresh]


def test_a_deleted_reply_leaves_nothing_behind_in_the_index(
    server: Server, api: httpx.Client, creator: Creator
) -> None:
    """The index is kept in step on delete: a reply written after a deleted one may take
    its row's place (SQLite reuses the largest rowid), and must not be found by the old
    text."""
    asked, other = post_many(server, creator, ["asked once", "asked twice"])
    post_many(server, creator, [f"filler {n}" for n in range(WINDOW)])
    gone = post_reply(api, creator, asked, "a narwhal answer")
    assert search_ids(api, creator, "narwhal") == [asked]  # through the index
    deleted = api.delete(f"/message/{creator.link_id}/{asked}/{gone}", headers=creator.headers)
    assert deleted.status_code == 200, deleted.text
    post_reply(api, creator, other, "a plain answer")

    assert search_ids(api, creator, "narwhal") == []
    assert search_ids(api, creator, "plain answer") == [other]


# --- whose messages -----------------------------------------------------------------------


def test_only_the_creator_searches_and_only_their_own_link(
    server: Server, api: httpx.Client, make_creator: Any
) -> None:
    owner, other = make_creator(), make_creator()
    secret = post_message(api, owner.link_id, "owner's private pangolin")
    theirs = post_message(api, other.link_id, "other's pangolin")
    # Below a walk's worth of newer messages: the other's search goes through the index,
    # which holds every link's messages.
    post_many(server, other, [f"filler {n}" for n in range(WINDOW)])

    path = f"/message/{owner.link_id}/search"
    assert_error(api.get(path, params={"q": "pangolin"}), 401)
    assert_error(api.get(path, params={"q": "pangolin"}, headers=other.headers), 403)
    missing = api.get(
        f"/message/{UNKNOWN_LINK}/search", params={"q": "pangolin"}, headers=owner.headers
    )
    assert_error(missing, 404)
    assert search_ids(api, owner, "pangolin") == [secret]
    found = api.get(
        f"/message/{other.link_id}/search", params={"q": "pangolin"}, headers=other.headers
    )
    assert found.status_code == 200
    assert [item["id"] for item in found.json()["data"]["items"]] == [theirs]
    assert secret not in found.text
    assert "private" not in found.text


# --- bad input ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "q",
    [
        "",
        "   ",
        "\x00",
        "a\x00b",
        "bell\x07",
        "x" * 101,
        "x" * 10_240,
    ],
)
def test_a_query_that_cannot_be_one_is_a_400(api: httpx.Client, creator: Creator, q: str) -> None:
    answer = api.get(f"/message/{creator.link_id}/search", params={"q": q}, headers=creator.headers)
    assert_error(answer, 400)


def test_missing_q_bad_cursor_filter_or_limit_are_400s(api: httpx.Client, creator: Creator) -> None:
    path = f"/message/{creator.link_id}/search"
    for params in (
        {},
        {"q": "x", "cursor": "not-a-cursor"},
        {"q": "x", "cursor": "' OR 1=1 --"},
        {"q": "x", "filter": "everything"},
        {"q": "x", "limit": "0"},
        {"q": "x", "limit": "101"},
    ):
        assert_error(api.get(path, params=params, headers=creator.headers), 400)


HOSTILE = [
    '"',
    '""',
    '"unterminated',
    "*",
    "pine*",
    "NEAR(",
    "NEAR(a b, 2)",
    "AND OR",
    "a AND b",
    "NOT",
    "^",
    "-",
    "+",
    "(",
    ")",
    "{",
    "content:",
    "content : x",
    "link_id:",
    "%",
    "_",
    "%_%",
    "\\",
    "\\%",
    "'",
    "' OR '1'='1",
    "'; DROP TABLE messages; --",
    "x" * 100,
    "💥" * 100,
    "\u0301",
    "\t\n",
]


@pytest.mark.parametrize("where", ["among the newest", "below the newest"])
def test_hostile_queries_are_plain_text(
    server: Server, api: httpx.Client, creator: Creator, where: str
) -> None:
    """FTS5 syntax, LIKE wildcards and SQL are searched for as text: found where the text
    contains them, else nothing; never a 500. The special messages are either among the
    newest (found by the walk) or only below them (found through the index)."""
    specials = ["100% sure", "snake_case_name", 'she said "NEAR(me)" AND OR pine* content: x']
    fillers = [f"plain words only {n}" for n in range(WINDOW)]
    if where == "among the newest":
        post_many(server, creator, fillers)
        percent, snake, quote = post_many(server, creator, specials)
    else:
        percent, snake, quote = post_many(server, creator, specials)
        post_many(server, creator, fillers)

    for q in HOSTILE:
        answer = api.get(
            f"/message/{creator.link_id}/search", params={"q": q}, headers=creator.headers
        )
        assert answer.status_code in {200, 400}, (q, answer.text)
        if answer.status_code == 400:
            assert_error(answer, 400)
            continue
        stripped = q.strip()
        for item in answer.json()["data"]["items"]:
            assert stripped.lower() in item["message_content"].lower(), (q, item)

    assert search_ids(api, creator, "%") == [percent]
    assert search_ids(api, creator, "_") == [snake]
    assert search_ids(api, creator, "e_c") == [snake]
    assert search_ids(api, creator, "0% s") == [percent]
    assert search_ids(api, creator, '"NEAR(me)"') == [quote]
    assert search_ids(api, creator, "AND OR pine*") == [quote]
    assert search_ids(api, creator, '"') == [quote]
    assert search_ids(api, creator, 'd "N') == [quote]
    assert search_ids(api, creator, "content: x") == [quote]
    assert search_ids(api, creator, "t: x") == [quote]


def test_the_endpoint_is_documented(api: httpx.Client) -> None:
    operation = api.get("/openapi.json").json()["paths"]["/message/{link_id}/search"]["get"]
    assert {"400", "401", "403", "404"} <= set(operation["responses"])
    assert {p["name"] for p in operation["parameters"]} >= {"q", "filter", "cursor", "limit"}


# --- the migration ------------------------------------------------------------------------


def _index_finds(url: str, backend: str, table: str, text: str) -> list[str]:
    """Ids that the search index alone (not a scan) finds for ``text`` in ``table``."""

    async def run() -> list[str]:
        db = await connect(url)
        try:
            if backend == "sqlite":
                rows = await db.fetch(
                    f"SELECT t.id FROM {table}_search($1) s"  # noqa: S608 - ours
                    f" JOIN {table} t ON t.rowid = s.rowid",
                    f'content : "{text}"',
                )
                await db.execute(
                    f"INSERT INTO {table}_search ({table}_search) VALUES ('integrity-check')"  # noqa: S608
                )
                return [row["id"] for row in rows]
            async with db.transaction() as tx:
                # No sequential scan, no plain index scan: only the trigram index can answer.
                await tx.execute("SET LOCAL enable_seqscan = off")
                await tx.execute("SET LOCAL enable_indexscan = off")
                plan = await tx.fetch(
                    f"EXPLAIN SELECT id FROM {table} WHERE content ILIKE $1",  # noqa: S608 - ours
                    f"%{text}%",
                )
                assert f"ix_{table}_content_trgm" in " ".join(r[0] for r in plan), plan
                rows = await tx.fetch(
                    f"SELECT id FROM {table} WHERE content ILIKE $1",  # noqa: S608 - ours
                    f"%{text}%",
                )
                return [row["id"] for row in rows]
        finally:
            await db.close()

    return asyncio.run(run())


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_the_migration_indexes_the_rows_already_there_and_goes_back_down(
    backend: str, database_url_factory: Callable[..., str]
) -> None:
    url = database_url_factory(backend, migrated=False)
    config = alembic_config(url)
    command.upgrade(config, "0014")

    user, link, message, reply = "01j" + "a" * 23, "oldlink123", "01j" + "b" * 23, "01j" + "c" * 23

    async def seed() -> None:
        db = await connect(url)
        try:
            await db.execute(
                "INSERT INTO users (id, email, name, created_at) VALUES ($1, $2, 'Old', 1)",
                user,
                "old@example.com",
            )
            await db.execute(
                "INSERT INTO links (id, user_id, prompt, created_at) VALUES ($1, $2, 'Ask', 1)",
                link,
                user,
            )
            await db.execute(
                "INSERT INTO messages (id, link_id, content, created_at) VALUES ($1, $2, $3, 2)",
                message,
                link,
                "Before search: 東京タワー",
            )
            await db.execute(
                "INSERT INTO replies (id, message_id, content, created_at) VALUES ($1, $2, $3, 3)",
                reply,
                message,
                "an OLD reply",
            )
        finally:
            await db.close()

    asyncio.run(seed())
    command.upgrade(config, "head")
    assert _index_finds(url, backend, "messages", "東京タワ") == [message]
    assert _index_finds(url, backend, "replies", "old reply") == [reply]

    command.downgrade(config, "0014")
    command.upgrade(config, "head")  # down and up again: nothing left over in the way
    assert _index_finds(url, backend, "messages", "東京タワ") == [message]
