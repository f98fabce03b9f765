"""A link's settings on a page of their own (issue 41): the inbox links to it, it saves
and says so, and it is its creator's alone. Over HTTP, on SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Callable

import httpx

from tests.conftest import Creator
from tests.server import Server
from tests.support.forms import csrf_of
from tests.support.http import loopback_client
from tests.support.signin import signed_in


def settings_of(link_id: str) -> str:
    return f"/dashboard/links/{link_id}/settings"


def test_the_inbox_links_to_the_settings_page_which_holds_the_form(
    server: Server, creator: Creator
) -> None:
    with signed_in(server, creator.user_id) as browser:
        inbox = browser.get(f"/dashboard/links/{creator.link_id}").text
        page = browser.get(settings_of(creator.link_id))

    assert f'href="{settings_of(creator.link_id)}"' in inbox
    # The inbox no longer carries the form: it made the page ~2,800 px long on a phone.
    assert 'name="all_settings"' not in inbox
    assert page.status_code == 200
    assert page.headers["cache-control"] == "no-store"
    assert f'<form method="post" action="{settings_of(creator.link_id)}"' in page.text
    assert 'name="all_settings"' in page.text
    assert f'href="/dashboard/links/{creator.link_id}"' in page.text  # back to the inbox


def test_saving_comes_back_to_the_settings_page_saying_so(
    server: Server, creator: Creator, api: httpx.Client
) -> None:
    path = settings_of(creator.link_id)
    with signed_in(server, creator.user_id) as browser:
        token = csrf_of(browser.get(path).text)
        saved = browser.post(
            path,
            data={
                "csrf_token": token,
                "back": path,
                "all_settings": "1",
                "prompt": "Ask me about boats",
                "pause": "paused",
                "muted": "filter",
                "senders": "anyone",
                "crosspost": "off",
                "hide_dates": "on",
            },
        )
        assert saved.status_code == 303, saved.text
        assert saved.headers["location"] == f"{path}?done=saved"
        shown = browser.get(saved.headers["location"]).text

    assert "Settings saved." in shown
    assert "Ask me about boats</textarea>" in shown
    assert 'id="hide_dates" name="hide_dates" checked' in shown
    link = api.get(f"/links/{creator.link_id}", headers=creator.headers).json()["data"]
    assert (link["prompt"], link["paused"], link["hide_dates"]) == (
        "Ask me about boats",
        True,
        True,
    )


def test_another_creator_is_refused_the_page_and_the_form(
    server: Server, creator: Creator, make_creator: Callable[[], Creator], api: httpx.Client
) -> None:
    stranger = make_creator()
    path = settings_of(creator.link_id)
    api.patch(f"/links/{creator.link_id}", headers=creator.headers, json={"prompt": "Hers alone"})
    with signed_in(server, stranger.user_id) as browser:
        token = csrf_of(browser.get("/dashboard").text)
        seen = browser.get(path)
        sent = browser.post(path, data={"csrf_token": token, "prompt": "mine now"})
        inbox = browser.get(f"/dashboard/links/{creator.link_id}")

    # As for the link's inbox and its other pages.
    assert seen.status_code == inbox.status_code == 403
    assert sent.status_code == 403
    assert "Hers alone" not in seen.text
    link = api.get(f"/links/{creator.link_id}", headers=creator.headers).json()["data"]
    assert link["prompt"] == "Hers alone"
    with loopback_client(base_url=server.url, timeout=30) as anonymous:
        signed_out = anonymous.get(path)
    assert signed_out.status_code == 401  # the sign-in page, never the form
    assert "Hers alone" not in signed_out.text
