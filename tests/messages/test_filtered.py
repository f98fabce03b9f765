"""The filtered folder: a message with a muted word (the creator's or the site's) is kept
apart, where only the creator sees it, restores it or empties the folder; the sender is
answered as for any message. A word muted later moves the waiting messages that hold it
there too; a block moves nothing (that would tell which messages share a sender). A link
set to ``muted: drop`` drops them as before. Each test runs on SQLite and on PostgreSQL."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import re
import time
import uuid
from collections.abc import Iterator
from typing import Any

import httpx

from anonbox.core.clock import now_us
from anonbox.core.database import connect
from anonbox.messages.inbox import service as inbox
from anonbox.outbox import repository as events
from tests.actions import assert_error, inbox_ids, post_reply
from tests.conftest import Creator, make_creator_in
from tests.server import Server
from tests.support.admin import make_account
from tests.support.db import execute, query
from tests.support.servers import own_server
from tests.support.signin import signed_in

UNKNOWN_ULID = "01jabcdefghjkmnpqrstvwxyz0"
DAY_US = 86_400 * 1_000_000
_addresses = itertools.count(1)


server = own_server("server", {"ANONBOX_TRUSTED_PROXIES": "127.0.0.1/32"})


def new_sender() -> str:
    n = next(_addresses)
    return f"10.77.{(n >> 8) & 255}.{n & 255}"


def send(api: httpx.Client, link_id: str, text: str, sender: str | None = None) -> httpx.Response:
    return api.post(
        f"/message/{link_id}",
        json={"message_content": text},
        headers={"X-Forwarded-For": sender or new_sender()},
    )


def sent_id(api: httpx.Client, link_id: str, text: str, sender: str | None = None) -> str:
    response = send(api, link_id, text, sender)
    assert response.status_code == 201, response.text
    return str(response.json()["data"]["id"])


def word() -> str:
    return f"zqmute{uuid.uuid4().hex[:10]}"


def mute(api: httpx.Client, creator: Creator, text: str) -> None:
    muted = api.post("/muted-words", json={"word": text}, headers=creator.headers)
    assert muted.status_code == 201, muted.text


def folder(api: httpx.Client, creator: Creator, **params: Any) -> dict[str, Any]:
    listed = api.get(f"/message/{creator.link_id}/filtered", params=params, headers=creator.headers)
    assert listed.status_code == 200, listed.text
    return dict(listed.json()["data"])


def folder_ids(api: httpx.Client, creator: Creator) -> list[str]:
    return [item["id"] for item in folder(api, creator, limit=100)["items"]]


def unread_of(database_url: str, creator: Creator) -> int:
    """The unread count the dashboard shows for the creator's link."""

    async def run() -> int:
        db = await connect(database_url)
        try:
            rows = await inbox.links_with_unread(db, creator.user_id)
        finally:
            await db.close()
        return int(next(row["unread"] for row in rows if row["id"] == creator.link_id))

    return asyncio.run(run())


def events_about(database_url: str, message_id: str) -> list[str]:
    rows = query(database_url, "SELECT kind FROM events WHERE message_id = $1", message_id)
    return [str(row["kind"]) for row in rows]


def set_muted(api: httpx.Client, creator: Creator, mode: str) -> dict[str, Any]:
    patched = api.patch(f"/links/{creator.link_id}", json={"muted": mode}, headers=creator.headers)
    assert patched.status_code == 200, patched.text
    return dict(patched.json()["data"])


def test_a_muted_post_lands_in_the_folder_answered_as_a_stored_one(
    server: Server, api: httpx.Client, creator: Creator
) -> None:
    muted_word = word()
    mute(api, creator, muted_word)
    stored = send(api, creator.link_id, "a plain question")
    filtered = send(api, creator.link_id, f"you {muted_word.upper()} you")
    assert stored.status_code == filtered.status_code == 201
    assert set(stored.json()) == set(filtered.json())
    assert set(stored.json()["data"]) == set(filtered.json()["data"])
    assert stored.json()["message"] == filtered.json()["message"]
    stored_id, filtered_id = stored.json()["data"]["id"], filtered.json()["data"]["id"]

    # In the folder, in the inbox's item shape; nowhere else.
    page = folder(api, creator)
    assert [item["id"] for item in page["items"]] == [filtered_id]
    [item] = page["items"]
    inbox_page = api.get(f"/message/{creator.link_id}", headers=creator.headers).json()["data"]
    assert set(item) == set(inbox_page["items"][0])
    assert item["message_content"] == f"you {muted_word.upper()} you"
    assert item["reply_count"] == 0
    assert page["next_cursor"] is None
    assert inbox_ids(api, creator) == [stored_id]
    assert unread_of(server.database_url, creator) == 1
    searched = api.get(
        f"/message/{creator.link_id}/search", params={"q": "you"}, headers=creator.headers
    )
    assert searched.status_code == 200, searched.text
    assert searched.json()["data"]["items"] == []
    # No event (so no webhook, push or e-mail) for the filtered one; one for the stored one.
    assert events_about(server.database_url, filtered_id) == []
    assert events_about(server.database_url, stored_id) == ["message.created"]
    # Not a message anyone, the creator included, can answer or read in public.
    answered = api.post(
        f"/message/{creator.link_id}/{filtered_id}",
        json={"message_content": "an answer"},
        headers=creator.headers,
    )
    assert_error(answered, 404)
    assert_error(api.get(f"/message/{creator.link_id}/{filtered_id}"), 404)
    card = api.get(f"/{creator.link_id}/{filtered_id}/card.png")
    assert card.status_code == 404


def test_restore_brings_it_back_with_an_event_and_then_it_can_be_answered(
    server: Server, api: httpx.Client, creator: Creator
) -> None:
    muted_word = word()
    mute(api, creator, muted_word)
    filtered_id = sent_id(api, creator.link_id, f"about {muted_word}")
    assert folder_ids(api, creator) == [filtered_id]

    restored = api.post(
        f"/message/{creator.link_id}/{filtered_id}/restore", headers=creator.headers
    )
    assert restored.status_code == 200, restored.text
    assert restored.json()["data"] is None
    assert folder_ids(api, creator) == []
    assert inbox_ids(api, creator) == [filtered_id]
    assert events_about(server.database_url, filtered_id) == ["message.created"]
    again = api.post(f"/message/{creator.link_id}/{filtered_id}/restore", headers=creator.headers)
    assert_error(again, 404)

    post_reply(api, creator, filtered_id, "answered after all")
    public = api.get(f"/message/{creator.link_id}").json()["data"]["items"]
    assert [item["id"] for item in public] == [filtered_id]


def test_a_receipt_of_a_filtered_message_reads_unanswered_until_restored_and_answered(
    api: httpx.Client, creator: Creator
) -> None:
    muted_word = word()
    mute(api, creator, muted_word)
    posted = api.post(
        f"/message/{creator.link_id}",
        params={"receipt": "true"},
        json={"message_content": f"with {muted_word}"},
        headers={"X-Forwarded-For": new_sender()},
    )
    assert posted.status_code == 201, posted.text
    message_id = posted.json()["data"]["id"]
    token = posted.json()["data"]["receipt"]["token"]
    receipt = api.get(f"/receipts/{token}")
    assert receipt.status_code == 200, receipt.text
    assert receipt.json()["data"]["message"]["answered"] is False

    api.post(f"/message/{creator.link_id}/{message_id}/restore", headers=creator.headers)
    post_reply(api, creator, message_id, "here is the answer")
    shown = api.get(f"/receipts/{token}").json()["data"]["message"]
    assert shown["answered"] is True
    assert [r["message_content"] for r in shown["replies"]] == ["here is the answer"]


def test_empty_deletes_the_folder(server: Server, api: httpx.Client, creator: Creator) -> None:
    muted_word = word()
    mute(api, creator, muted_word)
    ids = [sent_id(api, creator.link_id, f"{muted_word} {n}") for n in range(3)]
    assert sorted(folder_ids(api, creator)) == sorted(ids)
    # Paged as the inbox is.
    first = folder(api, creator, limit=2)
    assert len(first["items"]) == 2
    rest = folder(api, creator, limit=2, cursor=first["next_cursor"])
    assert [i["id"] for i in first["items"] + rest["items"]] == sorted(ids, reverse=True)
    assert rest["next_cursor"] is None

    emptied = api.delete(f"/message/{creator.link_id}/filtered", headers=creator.headers)
    assert emptied.status_code == 200, emptied.text
    assert emptied.json()["data"] == {"deleted": 3}
    assert folder_ids(api, creator) == []
    left = query(
        server.database_url,
        "SELECT id FROM filtered_messages WHERE link_id = $1",
        creator.link_id,
    )
    assert left == []


def test_messages_filtered_30_days_ago_are_purged(server: Server, api: httpx.Client) -> None:
    creator = make_creator_in(server.database_url)
    muted_word = word()
    mute(api, creator, muted_word)
    old, recent = (sent_id(api, creator.link_id, f"{muted_word} {n}") for n in ("old", "new"))
    execute(
        server.database_url,
        "UPDATE filtered_messages SET filtered_at = $2 WHERE id = $1",
        old,
        now_us() - 30 * DAY_US - 1,
    )
    execute(
        server.database_url,
        "UPDATE filtered_messages SET filtered_at = $2 WHERE id = $1",
        recent,
        now_us() - 29 * DAY_US,
    )

    async def purge() -> int:
        from anonbox.messages.filtered.service import purge_expired

        db = await connect(server.database_url)
        try:
            return await purge_expired(db)
        finally:
            await db.close()

    assert asyncio.run(purge()) >= 1
    assert folder_ids(api, creator) == [recent]
    assert asyncio.run(purge()) == 0  # idempotent: a second instance finds nothing more


def test_a_word_muted_later_moves_waiting_unanswered_messages(
    server: Server, api: httpx.Client, creator: Creator
) -> None:
    muted_word = word()
    waiting = sent_id(api, creator.link_id, f"first {muted_word}")
    answered = sent_id(api, creator.link_id, f"second {muted_word}")
    other = sent_id(api, creator.link_id, "nothing to see")
    post_reply(api, creator, answered, "answered already")
    # Another creator's message with the word stays where it is.
    stranger = make_creator_in(server.database_url)
    theirs = sent_id(api, stranger.link_id, f"theirs {muted_word}")

    mute(api, creator, muted_word)
    assert folder_ids(api, creator) == [waiting]
    assert inbox_ids(api, creator) == [other, answered]
    assert inbox_ids(api, stranger) == [theirs]


def test_a_japanese_word_muted_later_moves_waiting_messages_that_hold_it_in_any_kana(
    server: Server, api: httpx.Client, creator: Creator
) -> None:
    """The scan that moves waiting messages matches as a post is matched: inside a
    sentence without spaces, in hiragana or katakana, voicing marks kept."""
    tail = "".join(chr(0x30A2 + 2 * int(c, 16)) for c in uuid.uuid4().hex[:8])  # katakana
    hiragana = "ば" + tail.translate({c: c - 0x60 for c in range(0x30A1, 0x30F7)})
    in_katakana = sent_id(api, creator.link_id, f"お前はバ{tail}だ")
    in_hiragana = sent_id(api, creator.link_id, f"{hiragana}。")
    unvoiced = sent_id(api, creator.link_id, f"お前はハ{tail}だ")

    mute(api, creator, hiragana)
    assert sorted(folder_ids(api, creator)) == sorted([in_katakana, in_hiragana])
    assert inbox_ids(api, creator) == [unvoiced]


def test_a_block_moves_none_of_that_senders_waiting_messages(
    api: httpx.Client, creator: Creator
) -> None:
    sender, someone_else = new_sender(), new_sender()
    first = sent_id(api, creator.link_id, "one", sender)
    answered = sent_id(api, creator.link_id, "two", sender)
    later = sent_id(api, creator.link_id, "three", sender)
    unrelated = sent_id(api, creator.link_id, "four", someone_else)
    post_reply(api, creator, answered, "answered")

    blocked = api.post(f"/message/{creator.link_id}/{first}/block", headers=creator.headers)
    assert blocked.status_code == 201, blocked.text
    assert folder_ids(api, creator) == []
    assert inbox_ids(api, creator) == [unrelated, later, answered, first]
    # Dropped from now on, not filtered.
    assert send(api, creator.link_id, "five", sender).status_code == 201
    assert folder_ids(api, creator) == []
    assert inbox_ids(api, creator) == [unrelated, later, answered, first]


def test_a_site_phrase_added_later_moves_waiting_messages_and_a_site_block_none(
    server: Server, api: httpx.Client, creator: Creator
) -> None:
    admin = make_account(server.database_url, admin=True)
    phrase = word()
    sender = new_sender()
    with_phrase = sent_id(api, creator.link_id, f"a {phrase} here")
    from_sender = sent_id(api, creator.link_id, "from the sender", sender)
    reported_one = sent_id(api, creator.link_id, "the sender again", sender)
    added = api.post("/admin/muted-phrases", json={"phrase": phrase}, headers=admin.headers)
    assert added.status_code == 201, added.text
    try:
        assert folder_ids(api, creator) == [with_phrase]
        blocked = api.post(f"/admin/messages/{reported_one}/block-sender", headers=admin.headers)
        assert blocked.status_code == 201, blocked.text
        assert folder_ids(api, creator) == [with_phrase]
        assert inbox_ids(api, creator) == [reported_one, from_sender]
    finally:
        api.delete(f"/admin/muted-phrases/{added.json()['data']['id']}", headers=admin.headers)


def test_a_link_set_to_drop_drops_as_before(
    server: Server, api: httpx.Client, creator: Creator
) -> None:
    assert (
        api.get(f"/links/{creator.link_id}", headers=creator.headers).json()["data"]["muted"]
        == "filter"
    )
    assert set_muted(api, creator, "drop")["muted"] == "drop"
    muted_word = word()
    mute(api, creator, muted_word)
    dropped = send(api, creator.link_id, f"with {muted_word}")
    assert dropped.status_code == 201, dropped.text
    dropped_id = dropped.json()["data"]["id"]
    assert folder_ids(api, creator) == []
    assert inbox_ids(api, creator) == []
    rows = query(server.database_url, "SELECT id FROM dropped_messages WHERE id = $1", dropped_id)
    assert rows == [{"id": dropped_id}]

    assert set_muted(api, creator, "filter")["muted"] == "filter"
    kept = sent_id(api, creator.link_id, f"again {muted_word}")
    assert folder_ids(api, creator) == [kept]

    bad = api.patch(f"/links/{creator.link_id}", json={"muted": "hide"}, headers=creator.headers)
    assert_error(bad, 400)


def test_only_the_creator_may_see_restore_or_empty_the_folder(
    server: Server, api: httpx.Client, creator: Creator
) -> None:
    muted_word = word()
    mute(api, creator, muted_word)
    filtered_id = sent_id(api, creator.link_id, f"private {muted_word}")
    stranger = make_creator_in(server.database_url)
    base = f"/message/{creator.link_id}"
    assert_error(api.get(f"{base}/filtered", headers=stranger.headers), 403)
    assert_error(api.post(f"{base}/{filtered_id}/restore", headers=stranger.headers), 403)
    assert_error(api.delete(f"{base}/filtered", headers=stranger.headers), 403)
    assert_error(api.get(f"{base}/filtered"), 401)
    assert_error(api.post(f"{base}/{filtered_id}/restore"), 401)
    assert_error(api.delete(f"{base}/filtered"), 401)
    # Not through the stranger's own link either.
    elsewhere = f"/message/{stranger.link_id}/{filtered_id}/restore"
    assert_error(api.post(elsewhere, headers=stranger.headers), 404)
    assert folder_ids(api, creator) == [filtered_id]


def test_bad_ids_are_400_and_unknown_ones_404(api: httpx.Client, creator: Creator) -> None:
    base = f"/message/{creator.link_id}"
    assert_error(api.post(f"{base}/not-a-ulid/restore", headers=creator.headers), 400)
    assert_error(api.post(f"{base}/{UNKNOWN_ULID}/restore", headers=creator.headers), 404)
    bad_cursor = api.get(f"{base}/filtered", params={"cursor": "x"}, headers=creator.headers)
    assert_error(bad_cursor, 400)
    assert_error(api.get(f"{base}/filtered", params={"limit": 0}, headers=creator.headers), 400)
    assert_error(api.get("/message/!!/filtered", headers=creator.headers), 400)
    assert_error(api.get("/message/zzzzzzzz/filtered", headers=creator.headers), 404)


def test_the_export_shows_filtered_messages_marked(
    server: Server, api: httpx.Client, creator: Creator
) -> None:
    muted_word = word()
    mute(api, creator, muted_word)
    stored = sent_id(api, creator.link_id, "kept")
    filtered_id = sent_id(api, creator.link_id, f"filtered {muted_word}")
    exported = api.get("/account/export", headers=creator.headers)
    assert exported.status_code == 200, exported.text
    data = exported.json()["data"]
    assert [m["id"] for m in data["messages"]] == [stored]
    [item] = data["filtered_messages"]
    assert item["id"] == filtered_id
    assert item["filtered"] is True
    assert item["message_content"] == f"filtered {muted_word}"
    assert "sender_hash" not in item
    [link] = data["links"]
    assert link["muted"] == "filter"


# --- the clean-ups reach the folder ------------------------------------------------------


def test_delete_all_unanswered_empties_the_folder_and_counts_it(
    server: Server, api: httpx.Client, creator: Creator
) -> None:
    muted_word = word()
    mute(api, creator, muted_word)
    answered = sent_id(api, creator.link_id, "answered")
    post_reply(api, creator, answered, "an answer")
    sent_id(api, creator.link_id, "waiting")
    for n in range(2):
        sent_id(api, creator.link_id, f"{muted_word} {n}")
    stranger = make_creator_in(server.database_url)
    theirs = sent_id(api, stranger.link_id, f"theirs {muted_word}")
    mute(api, stranger, muted_word)
    # (Muting moved the stranger's waiting message to their own folder.)
    assert folder_ids(api, stranger) == [theirs]

    deleted = api.delete(f"/message/{creator.link_id}/unanswered", headers=creator.headers)
    assert deleted.status_code == 200, deleted.text
    assert deleted.json()["data"] == {"deleted": 3}
    assert inbox_ids(api, creator) == [answered]
    assert folder_ids(api, creator) == []
    assert folder_ids(api, stranger) == [theirs]


def test_the_clean_up_pages_say_the_folder_is_included_and_work_from_it(
    server: Server, api: httpx.Client, creator: Creator
) -> None:
    muted_word = word()
    mute(api, creator, muted_word)
    base = f"/dashboard/links/{creator.link_id}"
    sender = new_sender()
    with signed_in(server, creator.user_id) as browser:
        confirm = browser.get(f"{base}/unanswered/delete")
        assert confirm.status_code == 200, confirm.text
        plain = "Every message of this link that you have not replied to is deleted for good."
        assert f'<p class="confirm-text">{plain}</p>' in confirm.text
        filtered_id = sent_id(api, creator.link_id, f"one {muted_word}", sender)
        confirm = browser.get(f"{base}/unanswered/delete")
        assert f"{plain} That includes the one message in the Filtered folder." in confirm.text
        sent_id(api, creator.link_id, f"two {muted_word}")
        confirm = browser.get(f"{base}/unanswered/delete")
        assert f"{plain} That includes the 2 messages in the Filtered folder." in confirm.text

        # No "Delete all from this sender…" (withdrawn: it would link messages to one
        # sender), on a card of the folder or on a message's page, nor at its old address.
        stored = sent_id(api, creator.link_id, "stored, same sender", sender)
        folder_page = browser.get(f"{base}/filtered")
        card = re.search(rf'<article[^>]*id="f-{filtered_id}".*?</article>', folder_page.text, re.S)
        assert card, folder_page.text
        assert "Restore to the inbox" in card.group(0)
        message_page = browser.get(f"{base}/messages/{stored}")
        assert message_page.status_code == 200, message_page.text
        assert "Block sender" in message_page.text
        for page in (folder_page.text, message_page.text):
            assert "from this sender" not in page
            assert "/sender/delete" not in page
        for message_id in (filtered_id, stored):
            old = f"{base}/messages/{message_id}/sender/delete"
            assert browser.get(old).status_code == 404
            refused = browser.post(old, data={"from": "filtered"})
            assert refused.status_code in (403, 404, 405), refused.text
    assert inbox_ids(api, creator) == [stored]
    kept = folder_ids(api, creator)
    assert len(kept) == 2
    assert filtered_id in kept


# --- an open dashboard hears of moves ---------------------------------------------------


def removals(lines: Iterator[str], expected: int) -> list[dict[str, Any]]:
    """The next ``expected`` ``removed`` events of a live stream (keep-alives between)."""
    found: list[dict[str, Any]] = []
    kind = None
    for line in lines:
        if line.startswith("event:"):
            kind = line.split(":", 1)[1].strip()
        elif line.startswith("data:") and kind == "removed":
            found.append(json.loads(line.split(":", 1)[1]))
            if len(found) == expected:
                break
        elif not line:
            kind = None
    return found


@contextlib.contextmanager
def live_stream(server: Server, creator: Creator) -> Iterator[Iterator[str]]:
    """The lines of the creator's open dashboard stream, once it has had its first look."""
    path = f"/dashboard/links/{creator.link_id}/events"
    with (
        signed_in(server, creator.user_id) as browser,
        browser.stream("GET", path, timeout=httpx.Timeout(10.0, read=5.0)) as events,
    ):
        assert events.status_code == 200
        lines = events.iter_lines()
        assert next(lines) == ": connected"
        time.sleep(0.5)  # the stream has had its first look
        yield lines


def test_an_open_dashboard_is_told_of_messages_moved_to_the_folder(
    server: Server, api: httpx.Client, creator: Creator
) -> None:
    muted_word = word()
    sender = new_sender()
    with_word = sent_id(api, creator.link_id, f"this has {muted_word}")
    from_sender = [sent_id(api, creator.link_id, f"mine {n}", sender) for n in range(2)]
    plain = sent_id(api, creator.link_id, "plain")
    with live_stream(server, creator) as lines:
        mute(api, creator, muted_word)
        assert removals(lines, 1) == [{"id": with_word, "filtered": True}]

        # A block moves nothing, so it tells nothing: the next removal is the deletion's,
        # told the same way as a move, as not filtered.
        blocked = api.post(
            f"/message/{creator.link_id}/{from_sender[0]}/block", headers=creator.headers
        )
        assert blocked.status_code == 201, blocked.text
        deleted = api.delete(f"/message/{creator.link_id}/{plain}", headers=creator.headers)
        assert deleted.status_code == 200, deleted.text
        assert removals(lines, 1) == [{"id": plain, "filtered": False}]
    assert folder_ids(api, creator) == [with_word]
    assert sorted(inbox_ids(api, creator)) == sorted(from_sender)


def test_an_open_dashboard_is_told_of_bulk_deletions(
    server: Server, api: httpx.Client, creator: Creator
) -> None:
    answered = sent_id(api, creator.link_id, "answered")
    post_reply(api, creator, answered, "an answer")
    waiting = [sent_id(api, creator.link_id, f"waiting {n}") for n in range(2)]
    with live_stream(server, creator) as lines:
        base = f"/message/{creator.link_id}"
        deleted = api.delete(f"{base}/unanswered", headers=creator.headers)
        assert deleted.status_code == 200, deleted.text
        assert deleted.json()["data"] == {"deleted": 2}
        told = removals(lines, 2)
        assert sorted(item["id"] for item in told) == sorted(waiting)
        assert all(item["filtered"] is False for item in told)
    assert inbox_ids(api, creator) == [answered]


def test_an_open_dashboard_is_told_of_a_bulk_deletion_longer_than_one_read(
    server: Server, api: httpx.Client, creator: Creator
) -> None:
    many = events.REMOVALS_PER_READ + 5
    waiting = [
        sent_id(api, creator.link_id, f"waiting {n}", f"10.{79 + n // 250}.{n % 250}.1")
        for n in range(many)
    ]
    with live_stream(server, creator) as lines:
        deleted = api.delete(f"/message/{creator.link_id}/unanswered", headers=creator.headers)
        assert deleted.status_code == 200, deleted.text
        assert deleted.json()["data"] == {"deleted": many}
        # The newest, those an open page shows, come last: all of them, without a reload.
        told = removals(lines, many)
        assert sorted(item["id"] for item in told) == sorted(waiting)


# --- a network block ------------------------------------------------------------------------

_networks = itertools.count(1)


def test_a_network_block_moves_none_of_the_networks_waiting_messages(
    api: httpx.Client, creator: Creator
) -> None:
    n = next(_networks)
    slash_24 = f"10.78.{n}"  # the IPv4 network a block of {slash_24}.1 covers
    slash_48 = f"2001:db8:{n:x}"  # and the IPv6 one of {slash_48}:1::1
    first = sent_id(api, creator.link_id, "first", f"{slash_24}.1")
    sent_id(api, creator.link_id, "next door", f"{slash_24}.2")
    answered = sent_id(api, creator.link_id, "answered", f"{slash_24}.3")
    post_reply(api, creator, answered, "an answer")
    sent_id(api, creator.link_id, "another /24", f"10.78.{n + 100}.1")
    v6_first = sent_id(api, creator.link_id, "v6 first", f"{slash_48}:1::1")
    sent_id(api, creator.link_id, "v6 next door", f"{slash_48}:ff00::9")
    sent_id(api, creator.link_id, "another /48", f"2001:db8:{n + 100:x}::1")
    base = f"/message/{creator.link_id}"
    before = inbox_ids(api, creator)

    for path in (f"{first}/block", f"{first}/block?network=true", f"{v6_first}/block?network=true"):
        blocked = api.post(f"{base}/{path}", headers=creator.headers)
        assert blocked.status_code == 201, blocked.text
        assert blocked.json()["data"]["network"] is path.endswith("network=true")
        assert folder_ids(api, creator) == []
        assert inbox_ids(api, creator) == before
    # From now on the networks are dropped, neither stored nor filtered.
    for address in (f"{slash_24}.4", f"{slash_48}:1234::5"):
        assert send(api, creator.link_id, "rotated", address).status_code == 201
    assert folder_ids(api, creator) == []
    assert inbox_ids(api, creator) == before
