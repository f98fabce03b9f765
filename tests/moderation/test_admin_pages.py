"""The admin pages over HTTP, as a signed-in browser uses them: the report queue with each
message's context, resolving from it, the site's muted phrases and the audit log. A creator
who is not an admin gets a 403 page for every one of them and changes nothing."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from contextlib import closing
from typing import Any

import httpx
import pytest

from tests.actions import inbox_ids, post_message, post_reply
from tests.conftest import Creator, make_creator_in
from tests.moderation.conftest import report, report_by_id
from tests.server import Server
from tests.support.admin import (
    Admin,
    audit_entries,
    make_account,
    mute_phrase,
    muted_phrases,
    unique_phrase,
    unmute_phrase,
)
from tests.support.forms import csrf_of
from tests.support.http import loopback_client
from tests.support.signin import signed_in_browser

PAGES = ["/admin", "/admin/phrases", "/admin/log"]
SPAMMER = {"X-Forwarded-For": "203.0.113.99"}
BYSTANDER = {"X-Forwarded-For": "198.51.100.99"}


@pytest.fixture(scope="module")
def site_admin(server: Server) -> Admin:
    return make_account(server.database_url, admin=True)


@pytest.fixture
def admin_browser(server: Server, site_admin: Admin) -> Iterator[httpx.Client]:
    browser = signed_in_browser(server, site_admin.email)
    yield browser
    browser.close()


def page(browser: httpx.Client, path: str, status: int = 200) -> str:
    answer = browser.get(path)
    assert answer.status_code == status, answer.text
    assert answer.headers["content-type"].startswith("text/html")
    return answer.text


def submit(
    browser: httpx.Client,
    action: str,
    fields: dict[str, str] | None = None,
    csrf_from: str = "/dashboard",
) -> httpx.Response:
    token = csrf_of(page(browser, csrf_from))
    return browser.post(action, data={"csrf_token": token, **(fields or {})})


def report_article(text: str, report_id: str) -> str:
    found = re.search(rf'<article[^>]*data-report-id="{report_id}".*?</article>', text, re.S)
    assert found, f"report {report_id} is not in the queue"
    return found.group(0)


# --- who may ------------------------------------------------------------------------------


def test_a_creator_who_is_not_an_admin_gets_403_pages_and_changes_nothing(
    server: Server, api: httpx.Client, site_admin: Admin
) -> None:
    outsider = make_account(server.database_url, admin=False)
    message = post_message(api, outsider.creator.link_id, "reported, not by an admin")
    reported = report(api, outsider.creator, message)
    phrase = mute_phrase(api, site_admin, unique_phrase())
    audit_before = audit_entries(api, site_admin)
    try:
        with closing(signed_in_browser(server, outsider.email)) as browser:
            dashboard = page(browser, "/dashboard")
            assert 'href="/admin"' not in dashboard
            for path in PAGES:
                refused = page(browser, path, 403)
                assert "Only an admin" in refused
                assert reported not in refused
                assert phrase["phrase"] not in refused
            posts: list[tuple[str, dict[str, str]]] = [
                (f"/admin/queue/{reported}", {"action": "dismiss"}),
                (f"/admin/queue/{reported}", {"action": "delete_message", "confirm": "yes"}),
                (f"/admin/queue/{reported}", {"action": "block_sender", "confirm": "yes"}),
                ("/admin/phrases", {"phrase": unique_phrase()}),
                (f"/admin/phrases/{phrase['id']}/delete", {}),
            ]
            for action, fields in posts:
                answer = submit(browser, action, fields)  # with a valid CSRF token
                assert answer.status_code == 403, (action, answer.text)
                assert answer.headers["content-type"].startswith("text/html")
        assert report_by_id(api, site_admin, reported)["status"] == "open"
        assert message in inbox_ids(api, outsider.creator)
        assert phrase in muted_phrases(api, site_admin)
        assert audit_entries(api, site_admin) == audit_before
    finally:
        unmute_phrase(api, site_admin, phrase["id"])


def test_a_browser_not_signed_in_gets_the_signin_page(api: httpx.Client) -> None:
    for path in PAGES:
        answer = api.get(path)
        assert answer.status_code == 401
        assert 'action="/signin' in answer.text or 'href="/signin' in answer.text


def test_an_admin_sees_the_admin_link_and_needs_the_csrf_token(
    admin_browser: httpx.Client, api: httpx.Client, site_admin: Admin
) -> None:
    assert '<a href="/admin" id="nav-admin">Admin</a>' in page(admin_browser, "/dashboard")
    before = muted_phrases(api, site_admin)
    forged = admin_browser.post("/admin/phrases", data={"phrase": unique_phrase()})
    assert forged.status_code == 403
    wrong = admin_browser.post(
        "/admin/phrases", data={"phrase": unique_phrase(), "csrf_token": "x" * 40}
    )
    assert wrong.status_code == 403
    assert muted_phrases(api, site_admin) == before


# --- the queue -------------------------------------------------------------------------------


def test_the_queue_shows_a_report_with_its_message_context_and_link(
    admin_browser: httpx.Client, api: httpx.Client, creator: Creator
) -> None:
    message = post_message(api, creator.link_id, "<b>rude</b> & reported")
    answers = [post_reply(api, creator, message, f"answer {n}") for n in range(7)]
    reported = report(api, creator, message, "a <i>reason</i>")

    article = report_article(page(admin_browser, "/admin"), reported)
    assert html.escape("<b>rude</b> & reported", quote=False) in article
    assert "<b>rude</b>" not in article
    assert html.escape("a <i>reason</i>", quote=False) in article
    assert f'href="/{creator.link_id}"' in article
    assert message in article
    shown = re.findall(r'data-reply-id="([0-9a-z]{26})"', article)
    assert shown == answers[::-1][:5]  # the newest five, newest first
    for action in ("dismiss", "delete_message", "block_sender"):
        assert f'name="action" value="{action}"' in article
    assert article.count('name="confirm" value="yes"') == 2  # delete and block ask first


def test_a_report_whose_message_is_gone_shows_its_excerpt_and_only_dismissal(
    admin_browser: httpx.Client, api: httpx.Client, creator: Creator, site_admin: Admin
) -> None:
    message = post_message(api, creator.link_id, "said, then taken back")
    reported = report(api, creator, message)
    deleted = api.delete(f"/message/{creator.link_id}/{message}", headers=creator.headers)
    assert deleted.status_code == 200, deleted.text

    listed = report_by_id(api, site_admin, reported)
    assert listed["status"] == "open"
    assert "message_id" not in listed
    assert "link_id" not in listed
    article = report_article(page(admin_browser, "/admin"), reported)
    assert "said, then taken back" in article
    assert "The message has been deleted; only this excerpt is left." in article
    assert message not in article
    assert f'href="/{creator.link_id}"' not in article
    assert 'name="action" value="dismiss"' in article
    assert ">Resolve</button>" in article  # nothing is left to keep
    assert "keep the message" not in article
    assert 'value="delete_message"' not in article
    assert 'value="block_sender"' not in article


def test_resolving_and_deleting_from_the_queue(
    admin_browser: httpx.Client, api: httpx.Client, creator: Creator, site_admin: Admin
) -> None:
    kept = post_message(api, creator.link_id, "fine after all")
    dismissed = report(api, creator, kept)
    answer = submit(admin_browser, f"/admin/queue/{dismissed}", {"action": "dismiss"}, "/admin")
    assert answer.status_code == 303, answer.text
    assert answer.headers["location"] == "/admin"
    assert report_by_id(api, site_admin, dismissed)["resolution"] == "dismiss"
    assert kept in inbox_ids(api, creator)
    assert f'data-report-id="{dismissed}"' not in page(admin_browser, "/admin")

    doomed = post_message(api, creator.link_id, "goes")
    reported = report(api, creator, doomed)
    unconfirmed = submit(admin_browser, f"/admin/queue/{reported}", {"action": "delete_message"})
    assert unconfirmed.status_code == 400
    assert "Confirm first" in unconfirmed.text
    assert doomed in inbox_ids(api, creator)
    assert report_by_id(api, site_admin, reported)["status"] == "open"
    bad = submit(admin_browser, f"/admin/queue/{reported}", {"action": "ban", "confirm": "yes"})
    assert bad.status_code == 400

    confirmed = submit(
        admin_browser,
        f"/admin/queue/{reported}",
        {"action": "delete_message", "confirm": "yes"},
    )
    assert confirmed.status_code == 303, confirmed.text
    assert doomed not in inbox_ids(api, creator)
    assert report_by_id(api, site_admin, reported)["resolution"] == "delete_message"
    twice = submit(admin_browser, f"/admin/queue/{reported}", {"action": "dismiss"})
    assert twice.status_code == 409
    assert twice.headers["content-type"].startswith("text/html")

    [newest, older] = audit_entries(api, site_admin)[:2]
    assert (newest["action"], newest["target_id"], newest["admin_id"]) == (
        "report.resolve",
        reported,
        site_admin.user_id,
    )
    assert (older["action"], older["target_id"]) == ("report.resolve", dismissed)


@pytest.mark.slow
def test_blocking_the_sender_from_the_queue_blocks_them_on_every_link(
    lone_server: Server,
) -> None:
    admin = make_account(lone_server.database_url, admin=True)
    victim, elsewhere = (make_creator_in(lone_server.database_url) for _ in range(2))
    with (
        loopback_client(base_url=lone_server.url, timeout=30) as api,
        closing(signed_in_browser(lone_server, admin.email)) as browser,
    ):

        def send(sender: dict[str, str], creator: Creator, text: str) -> str:
            sent = api.post(
                f"/message/{creator.link_id}", json={"message_content": text}, headers=sender
            )
            assert sent.status_code == 201, sent.text
            return str(sent.json()["data"]["id"])

        message = send(SPAMMER, victim, "awful")
        reported = report(api, victim, message)
        blocked = submit(
            browser, f"/admin/queue/{reported}", {"action": "block_sender", "confirm": "yes"}
        )
        assert blocked.status_code == 303, blocked.text
        assert message not in inbox_ids(api, victim)
        for creator in (victim, elsewhere):
            dropped = send(SPAMMER, creator, "again")
            landed = send(BYSTANDER, creator, "hello")
            assert dropped not in inbox_ids(api, creator)
            assert landed in inbox_ids(api, creator)
        [entry] = audit_entries(api, admin)
        assert (entry["action"], entry["target_id"]) == ("report.resolve", reported)
        assert entry["detail"].startswith("block_sender; site-wide block ")


# --- muted phrases and the audit log ----------------------------------------------------------


def test_an_admin_mutes_and_unmutes_a_phrase_from_the_page(
    admin_browser: httpx.Client, api: httpx.Client, creator: Creator, site_admin: Admin
) -> None:
    text = unique_phrase()
    added = submit(admin_browser, "/admin/phrases", {"phrase": text}, "/admin/phrases")
    assert added.status_code == 303, added.text
    assert added.headers["location"] == "/admin/phrases"
    [phrase] = [p for p in muted_phrases(api, site_admin) if p["phrase"] == text]
    try:
        listed = page(admin_browser, "/admin/phrases")
        assert f'data-muted-phrase-id="{phrase["id"]}"' in listed
        post_message(api, creator.link_id, f"say {text}")
        assert inbox_ids(api, creator) == []

        again = submit(admin_browser, "/admin/phrases", {"phrase": text.upper()})
        assert again.status_code == 409
        assert 'id="phrase-problem"' in again.text
        assert f'value="{text.upper()}"' in again.text  # kept in the form
        blank = submit(admin_browser, "/admin/phrases", {"phrase": "   "})
        assert blank.status_code == 400
        assert 'id="phrase-problem"' in blank.text

        removed = submit(admin_browser, f"/admin/phrases/{phrase['id']}/delete")
        assert removed.status_code == 303, removed.text
        assert phrase not in muted_phrases(api, site_admin)
        assert f'data-muted-phrase-id="{phrase["id"]}"' not in page(admin_browser, "/admin/phrases")
        missing = submit(admin_browser, f"/admin/phrases/{phrase['id']}/delete")
        assert missing.status_code == 404
    finally:
        api.delete(f"/admin/muted-phrases/{phrase['id']}", headers=site_admin.headers)
    [removal, addition] = audit_entries(api, site_admin)[:2]
    assert (removal["action"], removal["target_id"]) == ("muted_phrase.remove", phrase["id"])
    assert (addition["action"], addition["target_id"]) == ("muted_phrase.add", phrase["id"])


def test_the_audit_page_lists_entries_newest_first_with_paging(
    admin_browser: httpx.Client, api: httpx.Client, site_admin: Admin
) -> None:
    first = mute_phrase(api, site_admin, unique_phrase())
    unmute_phrase(api, site_admin, first["id"])
    entries: list[dict[str, Any]] = audit_entries(api, site_admin)
    log = page(admin_browser, "/admin/log")
    rows = re.findall(r'data-audit-id="([0-9a-z]{26})"', log)
    assert rows == [e["id"] for e in entries][: len(rows)]
    assert rows[:2] == [entries[0]["id"], entries[1]["id"]]
    assert f"<code>{site_admin.user_id}</code> (you)" in log
    assert html.escape(first["phrase"]) in log

    older = page(admin_browser, f"/admin/log?cursor={entries[0]['id']}")
    assert re.findall(r'data-audit-id="([0-9a-z]{26})"', older)[:1] == [entries[1]["id"]]
    assert page(admin_browser, "/admin/log?cursor=nope", 400)
