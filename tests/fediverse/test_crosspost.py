"""Answers posted to the creator's own account: per link off (the default) or on with a
visibility and a content warning; the post carries the question, the answer, the link and
the share card with its alt text; a token the instance refuses disconnects the account
and the creator is told. Against mastodon-mock (PyPI) and the Misskey stand-in."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.actions import answer_path, assert_error, post_message, post_reply
from tests.conftest import Creator
from tests.fediverse.conftest import (
    browser,
    instance_tokens,
    link_account,
    new_creator,
)
from tests.server import Server
from tests.support.forms import csrf_of
from tests.support.mastodon import Mastodon, MastodonAccount
from tests.support.misskey import MisskeyServer, MisskeyUser
from tests.support.misskey_types import MIAUTH_CHECK, assert_types_hold

PNG = b"\x89PNG\r\n\x1a\n"


def wait_for(found: Callable[[], Any], seconds: float = 20.0) -> Any:
    deadline = time.monotonic() + seconds
    while True:
        value = found()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError("nothing arrived in time")
        time.sleep(0.1)


def with_mastodon(anonbox: Server, mastodon: Mastodon) -> tuple[Creator, MastodonAccount]:
    creator = new_creator(anonbox)
    person = mastodon.new_account()
    back = link_account(anonbox, creator, mastodon.url, lambda url: mastodon.authorize(url, person))
    assert back.status_code == 303, back.text
    assert back.headers["location"].startswith("/dashboard/account")
    return creator, person


def with_misskey(anonbox: Server, misskey: MisskeyServer) -> tuple[Creator, MisskeyUser]:
    creator = new_creator(anonbox)
    person = misskey.state.new_user()
    back = link_account(
        anonbox, creator, misskey.state.url, lambda url: misskey.state.allow(url, person)
    )
    assert back.status_code == 303, back.text
    return creator, person


def patch_link(api: httpx.Client, creator: Creator, body: dict[str, Any]) -> httpx.Response:
    return api.patch(f"/links/{creator.link_id}", json=body, headers=creator.headers)


def test_answers_are_not_posted_unless_a_link_asks(anonbox: Server, mastodon: Mastodon) -> None:
    api = browser(anonbox)
    creator, person = with_mastodon(anonbox, mastodon)
    link = api.get(f"/links/{creator.link_id}", headers=creator.headers).json()["data"]
    assert (link["crosspost"], link["crosspost_cw"]) == ("off", None)

    message = post_message(api, creator.link_id, "not to be posted")
    post_reply(api, creator, message, "a quiet answer")
    # A later answer on a posting link arrives: the quiet one would have arrived first.
    assert patch_link(api, creator, {"crosspost": "public"}).status_code == 200
    second = post_message(api, creator.link_id, "to be posted")
    post_reply(api, creator, second, "a loud answer")

    statuses = wait_for(lambda: mastodon.statuses_of(person))
    assert len(statuses) == 1
    assert "a loud answer" in statuses[0]["content"]


def test_a_mastodon_post_carries_question_answer_link_and_card(
    anonbox: Server, mastodon: Mastodon
) -> None:
    api = browser(anonbox)
    creator, person = with_mastodon(anonbox, mastodon)
    changed = patch_link(api, creator, {"crosspost": "unlisted", "crosspost_cw": " spoilers "})
    assert changed.status_code == 200, changed.text
    assert (changed.json()["data"]["crosspost"], changed.json()["data"]["crosspost_cw"]) == (
        "unlisted",
        "spoilers",
    )
    question = f"What is your favourite tea? {uuid.uuid4().hex[:6]}"
    message = post_message(api, creator.link_id, question)

    post_reply(api, creator, message, "Genmaicha, always.")

    [status] = wait_for(lambda: mastodon.statuses_of(person))
    assert question in status["content"]
    assert "Genmaicha, always." in status["content"]
    # The answer's own page (its id, not the message's, which tells the send time).
    assert f"{anonbox.url}{answer_path(api, creator.link_id, message)}" in status["content"]
    assert status["visibility"] == "unlisted"
    assert status["spoiler_text"] == "spoilers"
    [media] = status["media_attachments"]
    assert media["type"] == "image"
    assert question in media["description"]
    assert "Genmaicha, always." in media["description"]
    card = mastodon.http.get(httpx.URL(media["url"]).raw_path.decode())
    assert card.content.startswith(PNG)


def test_the_post_speaks_the_links_language(anonbox: Server, mastodon: Mastodon) -> None:
    """A link set to Japanese posts in Japanese, as its card and previews speak, whatever
    the creator's own pages read."""
    api = browser(anonbox)
    creator, person = with_mastodon(anonbox, mastodon)
    changed = patch_link(api, creator, {"crosspost": "public", "language": "ja"})
    assert changed.status_code == 200, changed.text
    message = post_message(api, creator.link_id, "好きなお茶は何ですか")

    post_reply(api, creator, message, "玄米茶です")

    [status] = wait_for(lambda: mastodon.statuses_of(person))
    assert "匿名の質問：好きなお茶は何ですか" in status["content"]  # noqa: RUF001 - Japanese colon
    assert "私の回答：玄米茶です" in status["content"]  # noqa: RUF001 - Japanese colon
    assert "Anonymous question" not in status["content"]


def test_followers_only_on_misskey_with_a_drive_file(
    anonbox: Server, misskey: MisskeyServer
) -> None:
    api = browser(anonbox)
    creator, person = with_misskey(anonbox, misskey)
    assert (
        patch_link(api, creator, {"crosspost": "followers", "crosspost_cw": "food"}).status_code
        == 200
    )
    message = post_message(api, creator.link_id, "Sweet or savoury?")

    post_reply(api, creator, message, "Savoury.")

    [note] = wait_for(lambda: misskey.state.notes_of(person))
    assert note["visibility"] == "followers"
    assert note["cw"] == "food"
    assert "Sweet or savoury?" in note["text"]
    assert "Savoury." in note["text"]
    assert f"{anonbox.url}{answer_path(api, creator.link_id, message)}" in note["text"]
    [drive] = note["files"]
    assert "Sweet or savoury?" in drive["comment"]
    assert misskey.state.file_bytes[drive["id"]].startswith(PNG)


def test_a_refused_token_disconnects_the_account_and_tells_the_creator(
    anonbox: Server, mastodon: Mastodon
) -> None:
    api = browser(anonbox)
    creator, person = with_mastodon(anonbox, mastodon)
    assert patch_link(api, creator, {"crosspost": "public"}).status_code == 200
    linked = api.get("/account/fediverse", headers=creator.headers).json()["data"]["items"]
    assert [item["connected"] for item in linked] == [True]
    # The person revokes anonbox's access at their instance: the token anonbox keeps.
    for token in instance_tokens(anonbox):
        mastodon.revoke(token)
    message = post_message(api, creator.link_id, "Are you there?")

    post_reply(api, creator, message, "Not any more.")

    def disconnected() -> bool:
        items = api.get("/account/fediverse", headers=creator.headers).json()["data"]["items"]
        return not items[0]["connected"]

    wait_for(disconnected)
    assert mastodon.statuses_of(person) == []
    page = browser(anonbox, creator.user_id)
    assert 'id="fediverse-disconnected"' in page.get("/dashboard").text
    assert f"fediverse-disconnected-{linked[0]['id']}" in page.get("/dashboard/account").text
    # Nothing more is posted to it, and turning posting on again needs an account.
    assert_error(patch_link(api, creator, {"crosspost": "unlisted"}), 409, "no_fediverse_account")


def test_a_token_misskey_refuses_disconnects_the_account_too(
    anonbox: Server, misskey: MisskeyServer
) -> None:
    api = browser(anonbox)
    creator, person = with_misskey(anonbox, misskey)
    assert patch_link(api, creator, {"crosspost": "public"}).status_code == 200
    # The person removes anonbox in their Misskey settings: its token is refused (401).
    misskey.state.revoke_all(person)
    message = post_message(api, creator.link_id, "Still linked?")

    post_reply(api, creator, message, "No.")

    def disconnected() -> bool:
        items = api.get("/account/fediverse", headers=creator.headers).json()["data"]["items"]
        return not items[0]["connected"]

    wait_for(disconnected)
    assert misskey.state.notes_of(person) == []
    refused = [e for e in misskey.state.exchanges if e.status == 401]
    assert refused, "the stand-in refused nothing"
    assert all(e.response["error"]["code"] == "AUTHENTICATION_FAILED" for e in refused)


def test_turning_posting_on_needs_a_linked_account(anonbox: Server) -> None:
    api = browser(anonbox)
    creator = new_creator(anonbox)

    assert_error(patch_link(api, creator, {"crosspost": "public"}), 409, "no_fediverse_account")

    link = api.get(f"/links/{creator.link_id}", headers=creator.headers).json()["data"]
    assert link["crosspost"] == "off"


@pytest.mark.parametrize(
    "body",
    [
        {"crosspost": "everyone"},
        {"crosspost": True},
        {"crosspost_cw": "x" * 101},
        {"crosspost_cw": "bell\u0007"},
        {"crosspost_cw": "\u001c trailing"},
        {"crosspost_cw": 5},
    ],
)
def test_bad_posting_settings_are_refused_and_change_nothing(
    anonbox: Server, mastodon: Mastodon, body: dict[str, Any]
) -> None:
    api = browser(anonbox)
    creator, _ = with_mastodon(anonbox, mastodon)
    assert patch_link(api, creator, {"crosspost_cw": "kept"}).status_code == 200

    assert_error(patch_link(api, creator, body), 400)

    link = api.get(f"/links/{creator.link_id}", headers=creator.headers).json()["data"]
    assert (link["crosspost"], link["crosspost_cw"]) == ("off", "kept")


def test_an_instance_that_is_down_a_moment_gets_the_post_later(
    anonbox: Server, misskey: MisskeyServer
) -> None:
    api = browser(anonbox)
    creator, person = with_misskey(anonbox, misskey)
    assert patch_link(api, creator, {"crosspost": "public"}).status_code == 200
    misskey.state.unavailable = 2
    message = post_message(api, creator.link_id, "Still there?")

    post_reply(api, creator, message, "Yes, after a retry.")

    [note] = wait_for(lambda: misskey.state.notes_of(person))
    assert "Yes, after a retry." in note["text"]
    assert misskey.state.unavailable == 0
    for token in instance_tokens(anonbox):
        assert token not in anonbox.log()


def test_the_link_settings_form_turns_posting_on_without_javascript(
    anonbox: Server, mastodon: Mastodon
) -> None:
    api = browser(anonbox)
    creator, _ = with_mastodon(anonbox, mastodon)
    page = browser(anonbox, creator.user_id)
    dashboard = page.get(f"/dashboard/links/{creator.link_id}/settings")
    assert 'name="crosspost"' in dashboard.text
    token = csrf_of(dashboard.text)

    saved = page.post(
        f"/dashboard/links/{creator.link_id}/settings",
        data={
            "csrf_token": token,
            "back": f"/dashboard/links/{creator.link_id}/settings",
            "all_settings": "1",
            "prompt": "Ask me anything",
            "pause": "open",
            "muted": "filter",
            "follow_ups": "on",
            "crosspost": "followers",
            "crosspost_cw": "long answers",
        },
    )

    assert saved.status_code == 303, saved.text
    link = api.get(f"/links/{creator.link_id}", headers=creator.headers).json()["data"]
    assert (link["crosspost"], link["crosspost_cw"]) == ("followers", "long answers")
    shown = page.get(f"/dashboard/links/{creator.link_id}/settings").text
    assert '<option value="followers" selected>' in shown


# Last in the module (tests/fediverse/conftest.py moves it there), once per database.
@pytest.mark.usefixtures("backend")
def test_what_misskey_exchanged_is_misskeys_api(misskey: MisskeyServer, tmp_path: Path) -> None:
    """What anonbox sent the Misskey stand-in in this module's tests (linking, the share
    card's drive file, the note), and what the stand-in answered, type-check against
    misskey-js's endpoint types."""
    assert_types_hold(
        misskey.state.exchanges, tmp_path, {MIAUTH_CHECK, "drive/files/create", "notes/create"}
    )
