"""Issue 41's smaller items over HTTP, as a person reads the pages: the Notifications page
names events in words, never ``message.created``; the push opt-in is a button; the home
page offers the ways in this server has (Google only when configured); the fediverse
switch of a link's settings says what it needs when the server cannot offer it."""

from __future__ import annotations

import html
import re

import httpx
import pytest

from anonbox.notifications.webhooks.schemas import EVENT_KINDS, TEST_EVENT
from tests.conftest import Creator, make_creator_in
from tests.server import Server
from tests.support.forms import csrf_of
from tests.support.http import loopback_client
from tests.support.servers import own_server
from tests.support.signin import signed_in

PRODUCTION = {"ANONBOX_ENV": "production", "ANONBOX_SECRET_KEY": "p" * 48}
GOOGLE = {"ANONBOX_GOOGLE_CLIENT_ID": "client-id", "ANONBOX_GOOGLE_CLIENT_SECRET": "secret"}

hooked = own_server("hooked", {"ANONBOX_WEBHOOK_ALLOW_PRIVATE": "true"})
with_google = own_server("with_google", GOOGLE, backends=("sqlite",))
google_only = own_server("google_only", {**PRODUCTION, **GOOGLE}, backends=("sqlite",))
closed = own_server("closed", PRODUCTION, backends=("sqlite",))
federating = own_server("federating", public_url=True, backends=("sqlite",))
federation_off = own_server(
    "federation_off", {"ANONBOX_FEDERATION_OFF": "true"}, public_url=True, backends=("sqlite",)
)


def visible(page: str) -> str:
    """What a person reads: the text outside tags, scripts and attributes."""
    body = re.sub(r"<script.*?</script>", "", page, flags=re.S)
    return html.unescape(re.sub(r"<[^>]+>", " ", body))


def choose_language(browser: httpx.Client, language: str) -> None:
    page = browser.get("/dashboard/account")
    saved = browser.post(
        "/dashboard/account/preferences",
        data={"csrf_token": csrf_of(page.text), "language": language, "time_zone": "UTC"},
    )
    assert saved.status_code == 303, saved.text


# --- b. events in words --------------------------------------------------------------


@pytest.mark.parametrize(
    ("language", "words"),
    [
        ("en", ["New message", "Your reply", "Message deleted", "Message reported", "Test event"]),
        ("ja", ["新しいメッセージ", "テストイベント"]),
        ("ko", ["새 메시지", "테스트 이벤트"]),
    ],
)
def test_the_notifications_page_names_events_in_words_never_their_wire_names(
    hooked: Server, language: str, words: list[str]
) -> None:
    creator = make_creator_in(hooked.database_url)
    with signed_in(hooked, creator.user_id) as browser:
        if language != "en":
            choose_language(browser, language)
        page = browser.get("/dashboard/notifications")
        # A webhook to a port nobody listens on: its deliveries stay in the table.
        added = browser.post(
            "/dashboard/webhooks",
            data={
                "csrf_token": csrf_of(page.text),
                "url": "http://127.0.0.1:9/hook",
                "events": list(EVENT_KINDS),
            },
        )
        assert added.status_code == 201, added.text
        hook = re.search(r'data-webhook-id="([^"]+)"', added.text)
        assert hook, added.text
        tested = browser.post(
            f"/dashboard/webhooks/{hook.group(1)}/test", data={"csrf_token": csrf_of(added.text)}
        )
        assert tested.status_code == 303, tested.text
        shown = browser.get("/dashboard/notifications").text

    read = visible(shown)
    for name in (*EVENT_KINDS, TEST_EVENT, "pending"):
        assert name not in read, f"{name!r} shown on the page"
    for word in words:
        assert word in read, word
    # The form still sends the names the API takes.
    for kind in EVENT_KINDS:
        assert f'name="events" value="{kind}"' in shown
    assert re.search(r'<tr data-delivery-id="[^"]+"><td>[^<.]+</td>', shown), shown


# --- c. a button for push ------------------------------------------------------------


def test_the_push_opt_in_is_a_button(server: Server, creator: Creator) -> None:
    with signed_in(server, creator.user_id) as browser:
        page = browser.get("/dashboard/notifications").text
    assert '<a class="button push-open" id="push-open" href="/dashboard/push">' in page


# --- f. the ways in the home page offers ---------------------------------------------


def how_to_sign_in(server: Server) -> str:
    with loopback_client(base_url=server.url, timeout=30) as client:
        page = client.get("/", headers={"Accept-Language": "en"}).text
    found = re.search(r'<li id="how-signin">(.*?)</li>', page, re.S)
    assert found, page
    return " ".join(visible(found.group(1)).split())


def test_the_home_page_offers_google_only_where_it_is_configured(
    server: Server, with_google: Server, google_only: Server, closed: Server
) -> None:
    link = "you get a link like"
    assert how_to_sign_in(server).startswith(
        f"Sign in with your e-mail, or a Mastodon or Misskey account: {link}"
    )
    assert how_to_sign_in(with_google).startswith(
        f"Sign in with your e-mail, Google, or a Mastodon or Misskey account: {link}"
    )
    assert how_to_sign_in(google_only).startswith(
        f"Sign in with Google, or a Mastodon or Misskey account: {link}"
    )
    assert how_to_sign_in(closed).startswith(f"Sign in with a Mastodon or Misskey account: {link}")
    # What the home page offers, the sign-in page offers.
    for offered, google in ((server, False), (with_google, True), (closed, False)):
        with loopback_client(base_url=offered.url, timeout=30) as client:
            signin = client.get("/signin").text
        assert ('id="signin-google"' in signin) is google


# --- g. the fediverse switch says what it needs ----------------------------------------


def settings_page(server: Server, creator: Creator, language: str = "en") -> str:
    with signed_in(server, creator.user_id) as browser:
        if language != "en":
            choose_language(browser, language)
        page = browser.get(f"/dashboard/links/{creator.link_id}/settings")
    assert page.status_code == 200, page.text
    return page.text


def switch(page: str) -> str:
    found = re.search(r'<input type="checkbox" id="fediverse"[^>]*>', page)
    assert found, "no fediverse switch on the page"
    return found.group(0)


def hint(page: str) -> str:
    found = re.search(r'<p id="fediverse-hint"[^>]*>(.*?)</p>', page, re.S)
    assert found, page
    return " ".join(html.unescape(re.sub(r"<[^>]+>", "", found.group(1))).split())


def test_without_a_public_address_the_switch_is_shown_off_and_says_what_it_needs(
    server: Server, creator: Creator
) -> None:
    page = settings_page(server, creator)
    assert " disabled" in switch(page)
    assert 'name="fediverse"' not in switch(page)  # nothing a save could change
    assert hint(page) == (
        "Not available yet: following needs the server's public address, which its operator"
        " sets as ANONBOX_PUBLIC_URL."
    )
    for language in ("ja", "ko"):
        said = hint(settings_page(server, creator, language))
        assert "ANONBOX_PUBLIC_URL" in said
        assert "Not available yet" not in said  # in the creator's language


def test_a_federating_server_offers_the_switch_and_one_turned_off_says_so(
    federating: Server, federation_off: Server
) -> None:
    on = settings_page(federating, make_creator_in(federating.database_url))
    assert "disabled" not in switch(on)
    assert 'name="fediverse"' in switch(on)
    assert "Search for @" in hint(on)

    off = settings_page(federation_off, make_creator_in(federation_off.database_url))
    assert " disabled" in switch(off)
    assert hint(off) == (
        "Not on this server: its operator has turned following from the fediverse off."
    )
