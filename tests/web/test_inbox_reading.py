"""Reading the inbox (issue 41): a message is read when it is opened on its own page, or
when "Mark all as read" is pressed, never because the list was shown; and the inbox's one
row of search and filter works as a plain GET form. Over HTTP, as a browser without
JavaScript sends it, on SQLite and PostgreSQL."""

from __future__ import annotations

import re
from collections.abc import Callable

import httpx

from tests.actions import post_message
from tests.conftest import Creator
from tests.server import Server
from tests.support.forms import csrf_of
from tests.support.signin import signed_in

ROWS = re.compile(r'<li class="message-row( unread)?" id="m-([0-9a-z]{26})"')


def unread_count(page: str) -> int:
    found = re.search(r'id="unread-count" data-count="(\d+)"', page)
    assert found, page
    return int(found.group(1))


def unread_rows(page: str) -> list[str]:
    return [message_id for unread, message_id in ROWS.findall(page) if unread]


def up_to(page: str) -> str:
    """The newest message the page knows of, as its "Mark all as read" form sends it."""
    found = re.search(r'name="up_to" value="([0-9a-z]{26})"', page)
    assert found, page
    return found.group(1)


def test_showing_the_list_reads_nothing_and_opening_one_reads_it(
    server: Server, api: httpx.Client, creator: Creator
) -> None:
    sent = [post_message(api, creator.link_id, f"question {n}") for n in range(5)]
    inbox = f"/dashboard/links/{creator.link_id}"
    with signed_in(server, creator.user_id) as browser:
        first = browser.get(inbox).text
        again = browser.get("/dashboard").text
        assert unread_count(first) == unread_count(again) == 5
        assert sorted(unread_rows(again)) == sorted(sent)
        assert "<title>(5) Inbox · anonbox</title>" in again

        opened = sent[2]
        assert browser.get(f"{inbox}/messages/{opened}").status_code == 200
        after = browser.get(inbox).text
        only_unread = browser.get(inbox, params={"filter": "unread"}).text
        browser.get(f"{inbox}/messages/{opened}")  # opened twice: still one less
        twice = browser.get(inbox).text

    assert unread_count(after) == unread_count(twice) == 4
    assert "<title>(4) Inbox · anonbox</title>" in after
    assert sorted(unread_rows(after)) == sorted(m for m in sent if m != opened)
    assert opened in [m for _, m in ROWS.findall(after)]  # still listed, as read
    assert sorted(m for _, m in ROWS.findall(only_unread)) == sorted(m for m in sent if m != opened)


def test_mark_all_as_read_reads_what_the_page_showed_and_no_later_message(
    server: Server, api: httpx.Client, creator: Creator
) -> None:
    for n in range(3):
        post_message(api, creator.link_id, f"question {n}")
    inbox = f"/dashboard/links/{creator.link_id}"
    with signed_in(server, creator.user_id) as browser:
        shown = browser.get(inbox).text
        assert 'id="mark-all-read"' in shown
        later = post_message(api, creator.link_id, "arrived after the page was drawn")
        marked = browser.post(
            f"{inbox}/read",
            data={"csrf_token": csrf_of(shown), "back": inbox, "up_to": up_to(shown)},
        )
        assert marked.status_code == 303, marked.text
        assert marked.headers["location"] == f"{inbox}?done=read"
        said = browser.get(marked.headers["location"]).text
        assert "All marked as read." in said
        assert unread_rows(said) == [later]

        marked = browser.post(
            f"{inbox}/read", data={"csrf_token": csrf_of(said), "up_to": up_to(said)}
        )
        assert marked.status_code == 303
        none = browser.get(inbox).text
        assert unread_count(none) == 0
        assert unread_rows(none) == []
        assert (
            '<form method="post" action="'
            + inbox
            + '/read" class="inline" id="mark-all-read" hidden>'
            in none
        )

        # Not a message id: refused, and nothing is marked.
        post_message(api, creator.link_id, "one more")
        token = csrf_of(browser.get(inbox).text)
        for bogus in ("", "not-an-id", "0" * 27):
            refused = browser.post(f"{inbox}/read", data={"csrf_token": token, "up_to": bogus})
            assert refused.status_code == 400, bogus
        assert unread_count(browser.get(inbox).text) == 1


def test_another_creator_cannot_mark_or_open_messages_of_a_link_not_theirs(
    server: Server, api: httpx.Client, creator: Creator, make_creator: Callable[[], Creator]
) -> None:
    message = post_message(api, creator.link_id, "for the owner's eyes")
    inbox = f"/dashboard/links/{creator.link_id}"
    stranger = make_creator()
    with signed_in(server, stranger.user_id) as browser:
        token = csrf_of(browser.get("/dashboard").text)
        marked = browser.post(f"{inbox}/read", data={"csrf_token": token, "up_to": message})
        opened = browser.get(f"{inbox}/messages/{message}")
    assert marked.status_code == opened.status_code == 403
    with signed_in(server, creator.user_id) as owner:
        assert unread_rows(owner.get(inbox).text) == [message]


def test_the_search_box_and_the_filter_work_without_javascript(
    server: Server, api: httpx.Client, creator: Creator
) -> None:
    answered = post_message(api, creator.link_id, "kiwi answered")
    plain = post_message(api, creator.link_id, "kiwi plain")
    reply = api.post(
        f"/message/{creator.link_id}/{answered}",
        json={"message_content": "yes"},
        headers=creator.headers,
    )
    assert reply.status_code == 201, reply.text
    inbox = f"/dashboard/links/{creator.link_id}"
    with signed_in(server, creator.user_id) as browser:
        page = browser.get(inbox).text
        # One GET form: the search box, the filter and a button, in one row.
        form = re.search(
            r'<form method="get" action="([^"]+)" class="inbox-tools".*?</form>', page, re.S
        )
        assert form
        assert form.group(1) == inbox
        assert 'name="q"' in form.group(0)
        assert '<select id="inbox-filter" name="filter">' in form.group(0)

        # No words: the filter, on the inbox itself.
        filtered = browser.get(inbox, params={"q": "", "filter": "unanswered"})
        assert filtered.status_code == 200
        assert [m for _, m in ROWS.findall(filtered.text)] == [plain]
        assert '<option value="unanswered" selected>' in filtered.text

        # Words: the search page, with the filter.
        searched = browser.get(inbox, params={"q": "kiwi", "filter": "answered"})
        assert searched.status_code == 303
        assert searched.headers["location"] == f"{inbox}/search?q=kiwi&filter=answered"
        results = browser.get(searched.headers["location"]).text
        assert re.findall(r'id="m-([0-9a-z]{26})"', results) == [answered]
