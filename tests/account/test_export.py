"""GET /account/export: everything the creator owns, as one valid JSON document in the
envelope, sent as a download; never a sender hash, key hash, webhook secret or push
endpoint; and only the caller's own account, whoever asks."""

from __future__ import annotations

import json
import re
from typing import Any

import httpx

from tests.account.conftest import furnish, insert_messages, send, unique
from tests.actions import assert_error
from tests.conftest import make_creator_in
from tests.server import Server
from tests.support.db import query

FILENAME = re.compile(r'^attachment; filename="anonbox-export-\d{4}-\d{2}-\d{2}\.json"$')


def export(api: httpx.Client, headers: dict[str, str]) -> tuple[httpx.Response, dict[str, Any]]:
    answer = api.get("/account/export", headers=headers)
    assert answer.status_code == 200, answer.text
    return answer, json.loads(answer.content)  # the whole document must parse


def test_the_export_holds_everything_the_account_made(server: Server, api: httpx.Client) -> None:
    account = furnish(server, api)

    answer, body = export(api, account.creator.headers)

    assert answer.headers["content-type"].startswith("application/json")
    assert FILENAME.match(answer.headers["content-disposition"]), answer.headers
    assert "no-store" in answer.headers["cache-control"]
    assert set(body) == {"status_code", "message", "data", "metadata"}
    assert body["status_code"] == 200
    assert body["metadata"]["method"] == "GET"
    assert body["metadata"]["url"] == "/account/export"
    data = body["data"]
    assert data["format"] == "anonbox-export/1"
    assert data["profile"]["user_id"] == account.creator.user_id
    assert data["profile"]["email"] == account.email
    assert data["profile"]["avatar_url"] == account.avatar_url
    assert [link["id"] for link in data["links"]] == account.link_ids
    assert all("user_id" not in link and isinstance(link["paused"], bool) for link in data["links"])
    assert data["links"][1]["prompt"].endswith("second prompt")

    messages = {m["id"]: m for m in data["messages"]}
    assert {i: m["message_content"] for i, m in messages.items()} == account.messages
    assert [m["id"] for m in data["messages"]] == sorted(
        account.messages, key=lambda i: (account.link_ids.index(messages[i]["link_id"]), i)
    )
    replies = {r["id"]: r["message_content"] for m in data["messages"] for r in m["replies"]}
    assert replies == account.replies
    assert {i for i, m in messages.items() if m["like_by_creator"]} == account.liked
    filtered = {m["id"]: m["message_content"] for m in data["filtered_messages"]}
    assert filtered == account.filtered
    assert all(m["filtered"] is True for m in data["filtered_messages"])

    assert [b["message_excerpt"] for b in data["blocks"]] == [account.blocked_excerpt[:120]]
    assert set(data["blocks"][0]) == {"id", "message_excerpt", "network", "created_at"}
    assert [w["word"] for w in data["muted_words"]] == [account.muted_word]
    assert sorted(k["id"] for k in data["api_keys"]) == sorted(account.api_key_ids)
    assert all(
        set(k) == {"id", "name", "last_chars", "created_at", "last_used_at", "revoked_at"}
        for k in data["api_keys"]
    )
    assert [w["url"] for w in data["webhooks"]] == [account.webhook_url]
    assert "secret" not in data["webhooks"][0]
    assert data["push_devices"]["count"] == 1
    assert data["email_notices"]["mode"] == "daily"


def test_nothing_about_a_sender_or_a_secret_is_exported(server: Server, api: httpx.Client) -> None:
    account = furnish(server, api)
    answer, _ = export(api, account.creator.headers)

    link_ids = account.link_ids
    placeholders = ", ".join(f"${i + 1}" for i in range(len(link_ids)))
    hashes = query(
        server.database_url,
        f"SELECT sender_hash, sender_network_hash FROM messages WHERE link_id IN ({placeholders})",  # noqa: S608 - placeholders only
        *link_ids,
    )

    def stored(sql: str, *args: Any) -> set[str]:
        """Every value of the rows ``sql`` reads, but NULLs and empty strings."""
        return {v for row in query(server.database_url, sql, *args) for v in row.values() if v}

    secrets = {value for row in hashes for value in row.values() if value}
    secrets |= stored(
        f"SELECT sender_hash, sender_network_hash FROM filtered_messages WHERE link_id IN ({placeholders})",  # noqa: S608, E501 - placeholders only
        *link_ids,
    )
    user_id = account.creator.user_id
    secrets |= stored("SELECT key_hash FROM api_keys WHERE user_id = $1", user_id)
    secrets |= stored("SELECT sender_hash FROM blocks WHERE user_id = $1", user_id)
    dropped = query(
        server.database_url, "SELECT id FROM dropped_messages WHERE link_id = $1", link_ids[1]
    )
    assert len(hashes) == len(account.messages)
    assert dropped
    assert len(secrets) > len(hashes)
    secrets |= {row["id"] for row in dropped}
    secrets |= {account.webhook_secret, account.push_endpoint, account.creator.api_key}
    text = answer.text
    assert sorted(secret for secret in secrets if secret in text) == []
    assert account.report_reason not in text  # a reporter's words are not the creator's


def test_another_creators_key_exports_only_its_own_account(
    server: Server, api: httpx.Client
) -> None:
    victim = furnish(server, api)
    other = make_creator_in(server.database_url)
    mine = unique("to the other creator")
    assert send(api, other.link_id, mine).status_code == 201

    answer, body = export(api, other.headers)

    assert body["data"]["profile"]["user_id"] == other.user_id
    assert [m["message_content"] for m in body["data"]["messages"]] == [mine]
    leaked = sorted(secret for secret in victim.secrets() if secret and secret in answer.text)
    assert leaked == []


def test_an_export_needs_a_valid_credential(api: httpx.Client) -> None:
    assert_error(api.get("/account/export"), 401)
    assert_error(api.get("/account/export", headers={"X-API-Key": "anb_" + "x" * 40}), 401)


def test_an_empty_account_exports_a_valid_document(server: Server, api: httpx.Client) -> None:
    creator = make_creator_in(server.database_url)
    _, body = export(api, creator.headers)
    data = body["data"]
    assert data["messages"] == []
    assert data["blocks"] == []
    assert data["webhooks"] == []
    assert data["email_notices"] is None
    assert data["push_devices"] == {"count": 0, "created_at": []}
    assert len(data["links"]) == 1
    assert len(data["api_keys"]) == 1


def test_messages_over_many_pages_come_out_once_each_in_order(
    server: Server, api: httpx.Client
) -> None:
    """Past a page of 1,000 rows: keyset paging loses and repeats nothing, and replies stay
    with their message across the page boundary."""
    creator = make_creator_in(server.database_url)
    insert_messages(server.database_url, creator.link_id, [f"message {i}" for i in range(2_345)])
    ids = [
        row["id"]
        for row in query(
            server.database_url,
            "SELECT id FROM messages WHERE link_id = $1 ORDER BY id",
            creator.link_id,
        )
    ]
    boundary = ids[999], ids[1000]
    for message_id in boundary:
        reply = api.post(
            f"/message/{creator.link_id}/{message_id}",
            json={"message_content": f"reply to {message_id}"},
            headers=creator.headers,
        )
        assert reply.status_code == 201, reply.text

    _, body = export(api, creator.headers)

    exported = body["data"]["messages"]
    assert [m["id"] for m in exported] == ids
    for message in exported:
        expected = [f"reply to {message['id']}"] if message["id"] in boundary else []
        assert [r["message_content"] for r in message["replies"]] == expected
