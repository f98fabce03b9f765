"""The creator's dashboard over HTTP: signing in through the browser redirect flow against a
real OpenID Connect provider on loopback, every form action checked through the API,
CSRF, ownership, unread counts, live updates and escaping. Each test runs on SQLite and
on PostgreSQL."""

from __future__ import annotations

import contextlib
import html
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import httpx
import pytest

from tests.actions import (
    answer_path,
    inbox_item,
    inbox_items,
    post_message,
    post_reply,
    reply_items,
)
from tests.auth.conftest import (
    Provider,
    backend,  # noqa: F401 - fixture
    consent,
    cookie_attributes,
    cookie_header_client,
    http_client,
    provider,  # noqa: F401 - fixture
    running_servers,
    set_cookies,
    signin_env,
)
from tests.conftest import Creator
from tests.server import Server
from tests.support.forms import csrf_of
from tests.support.pages import article, row

SESSION_COOKIE = "anonbox_session"
SESSION_REFRESH_COOKIE = "anonbox_session_refresh"
CSRF_COOKIE = "anonbox_csrf"


@pytest.fixture(scope="module")
def servers(
    backend: str,  # noqa: F811
    provider: Provider,  # noqa: F811
    database_url_factory: Callable[[str], str],
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[dict[str, Server]]:
    envs = {
        "development": signin_env(provider.url),
        "production": signin_env(
            provider.url, ANONBOX_ENV="production", ANONBOX_SECRET_KEY="s" * 48
        ),
    }
    log_dir = tmp_path_factory.mktemp("web-logs")
    with running_servers(database_url_factory, log_dir, backend, envs) as running:
        yield running


@dataclass
class Browser:
    """A signed-in browser: its cookie jar, its creator's link and access token."""

    client: httpx.Client
    link_id: str

    @property
    def access_token(self) -> str:
        return str(self.client.cookies[SESSION_COOKIE])

    @property
    def creator(self) -> Creator:
        return Creator(user_id="", link_id=self.link_id, api_key=self.access_token)

    def csrf(self, path: str = "/dashboard") -> str:
        page = self.client.get(path)
        assert page.status_code == 200, page.text
        return csrf_of(page.text)

    def submit(self, action: str, fields: dict[str, str] | None = None) -> httpx.Response:
        return self.client.post(action, data={"csrf_token": self.csrf(), **(fields or {})})


def sign_in_browser(
    base_url: str, idp: Provider, client: httpx.Client | None = None, sub: str | None = None
) -> tuple[httpx.Client, httpx.Response]:
    """Click "Sign in with Google" (in ``client``, else a new browser), consent at the
    provider (as ``sub``, else a new person), follow it back."""
    client = client or http_client(base_url)
    started = client.get("/signin/google")
    assert started.status_code == 303, started.text
    assert started.headers["location"].startswith(idp.url)
    code, state = consent(started.headers["location"], sub or idp.new_user().sub)
    # Sent by hand: a cookie jar keeps a Secure cookie off plain HTTP, as a browser would.
    binding = cookie_attributes(set_cookies(started, "anonbox_signin")[0])["value"]
    finished = client.get(
        "/auth/google/callback",
        params={"code": code, "state": state},
        headers={"Cookie": f"anonbox_signin={binding}"},
    )
    return client, finished


@pytest.fixture
def make_browser(
    servers: dict[str, Server],
    provider: Provider,  # noqa: F811
) -> Iterator[Callable[[], Browser]]:
    clients: list[httpx.Client] = []

    def make() -> Browser:
        client, finished = sign_in_browser(servers["development"].url, provider)
        clients.append(client)
        assert finished.status_code == 303, finished.text
        page = client.get("/dashboard")
        assert page.status_code == 200, page.text
        found = re.search(r'data-link-id="([^"]+)"', page.text)
        assert found
        return Browser(client, found.group(1))

    yield make
    for client in clients:
        client.close()


@pytest.fixture
def browser(make_browser: Callable[[], Browser]) -> Browser:
    return make_browser()


@pytest.fixture
def api(servers: dict[str, Server]) -> Iterator[httpx.Client]:
    with http_client(servers["development"].url) as client:
        yield client


ROW_IDS = r'<li class="message-row[^"]*" id="m-[0-9a-z]{26}" data-message-id="([0-9a-z]{26})"'


def unread_count(page: str) -> int:
    found = re.search(r'id="unread-count"[^>]*>(\d+)<', page)
    assert found, page
    return int(found.group(1))


# --- signing in and out -----------------------------------------------------------------


@pytest.mark.parametrize("environment", ["development", "production"])
def test_signing_in_through_the_browser_ends_on_the_dashboard(
    servers: dict[str, Server],
    provider: Provider,  # noqa: F811
    environment: str,
) -> None:
    client, finished = sign_in_browser(servers[environment].url, provider)
    client.close()
    assert finished.status_code == 303, finished.text
    assert finished.headers["location"] == "/dashboard"
    # Secure cookies are __Host- cookies; plain HTTP in development cannot carry those.
    prefix = "__Host-" if environment == "production" else ""
    for name in (SESSION_COOKIE, SESSION_REFRESH_COOKIE):
        [cookie] = set_cookies(finished, prefix + name)
        attributes = cookie_attributes(cookie)
        assert "httponly" in attributes
        assert attributes["samesite"].lower() == "lax"
        assert attributes["path"] == "/"
        assert "domain" not in attributes
        assert ("secure" in attributes) == (environment == "production")
    [gone] = set_cookies(finished, "anonbox_signin")
    assert "max-age=0" in gone.lower() or "expires=" in gone.lower()

    token = cookie_attributes(set_cookies(finished, prefix + SESSION_COOKIE)[0])["value"]
    with cookie_header_client(servers[environment].url, {prefix + SESSION_COOKIE: token}) as fresh:
        dashboard = fresh.get("/dashboard")
    assert dashboard.status_code == 200, dashboard.text
    assert 'id="inbox"' in dashboard.text
    assert "script-src 'self'" in dashboard.headers["content-security-policy"]
    assert "<script>" not in dashboard.text  # no inline script


def test_the_dashboard_asks_a_stranger_to_sign_in(api: httpx.Client) -> None:
    page = api.get("/dashboard")
    assert page.status_code == 401
    assert "text/html" in page.headers["content-type"]
    assert 'href="/signin/google"' in page.text
    assert "Sign in with Google" in page.text


@pytest.mark.parametrize(
    "params",
    [
        {"error": "access_denied", "state": "whatever"},
        {"error": "server_error"},
        {"code": "made-up", "state": "made-up"},
        {"code": "only-a-code"},
        {},
    ],
)
def test_a_refused_callback_is_a_page_never_a_500(
    api: httpx.Client, params: dict[str, str]
) -> None:
    answer = api.get("/auth/google/callback", params=params)
    assert answer.status_code == 400, answer.text
    assert "text/html" in answer.headers["content-type"]
    assert set_cookies(answer, SESSION_COOKIE) == []


def test_a_callback_replayed_in_another_browser_signs_nobody_in(
    servers: dict[str, Server],
    provider: Provider,  # noqa: F811
) -> None:
    with (
        http_client(servers["development"].url) as victim,
        http_client(servers["development"].url) as attacker,
    ):
        started = victim.get("/signin/google")
        code, state = consent(started.headers["location"], provider.new_user().sub)
        stolen = attacker.get("/auth/google/callback", params={"code": code, "state": state})
        assert stolen.status_code == 400
        assert set_cookies(stolen, SESSION_COOKIE) == []


def test_signing_out_ends_the_session(browser: Browser, api: httpx.Client) -> None:
    token = browser.access_token
    assert api.get("/user", headers={"X-API-Key": token}).status_code == 200

    out = browser.submit("/signout")

    assert out.status_code == 303
    assert api.get("/user", headers={"X-API-Key": token}).status_code == 401
    assert browser.client.get("/dashboard").status_code == 401


def test_an_expired_access_cookie_is_renewed_with_the_refresh_cookie(
    browser: Browser, api: httpx.Client
) -> None:
    old = browser.access_token
    browser.client.cookies.set(SESSION_COOKIE, "anbs_expired", domain="127.0.0.1", path="/")

    page = browser.client.get("/dashboard")

    assert page.status_code == 200, page.text
    assert browser.access_token != old
    assert api.get("/user", headers={"X-API-Key": browser.access_token}).status_code == 200


# --- the inbox and its actions ------------------------------------------------------------


def test_the_inbox_lists_messages_and_each_opens_a_page_that_answers_it(
    browser: Browser, api: httpx.Client
) -> None:
    message_id = post_message(api, browser.link_id, "What are you reading?")
    page_url = f"/dashboard/links/{browser.link_id}/messages/{message_id}"
    entry = row(browser.client.get("/dashboard").text, message_id)
    assert "What are you reading?" in entry
    assert f'href="{page_url}"' in entry  # a tap opens it
    assert "<form" not in entry
    assert "<button" not in entry

    opened = browser.client.get(page_url)
    assert opened.status_code == 200
    assert opened.headers["cache-control"] == "no-store"
    entry = article(opened.text, message_id)
    assert "What are you reading?" in entry
    assert f'for="reply-{message_id}"' in entry
    assert 'id="share"' not in entry  # nothing to share before an answer

    answered = browser.submit(
        f"{page_url}/reply", {"message_content": "A book about lighthouses.", "back": page_url}
    )

    assert answered.status_code == 303, answered.text
    # Back on the message's page, saying so, at Share: offered as soon as it is answered.
    assert answered.headers["location"] == f"{page_url}?done=replied#share"
    [reply] = reply_items(api, browser.creator, message_id)
    assert reply["message_content"] == "A book about lighthouses."
    after = browser.client.get(f"{page_url}?done=replied").text
    assert "A book about lighthouses." in article(after, message_id)
    assert "Reply sent. Share your answer below." in after
    share = re.search(r'<section class="answer-share" id="share".*?</section>', after, re.S)
    assert share, after
    # The answer's own card and page, by its answer id (a message id tells its send time).
    public = answer_path(api, browser.link_id, message_id)
    assert f'href="{public}/card.png" download' in share.group(0)
    assert re.search(rf'data-share-url="http://[^"/]+{public}"', share.group(0))
    assert "data-focus" in share.group(0)
    assert 'class="message-row' in row(browser.client.get("/dashboard").text, message_id)
    assert "Answered" in row(browser.client.get("/dashboard").text, message_id)


def test_a_message_of_another_link_or_creator_has_no_page(
    make_browser: Callable[[], Browser], api: httpx.Client
) -> None:
    browser, other_browser = make_browser(), make_browser()
    theirs = post_message(api, other_browser.link_id, "not yours")
    mine = post_message(api, browser.link_id, "yours")

    assert browser.client.get(
        f"/dashboard/links/{other_browser.link_id}/messages/{theirs}"
    ).status_code in {403, 404}
    # Their message under my link's address: no such message here.
    assert (
        browser.client.get(f"/dashboard/links/{browser.link_id}/messages/{theirs}").status_code
        == 404
    )
    page = browser.client.get(f"/dashboard/links/{browser.link_id}/messages/{mine}")
    assert page.status_code == 200
    assert "not yours" not in page.text


def test_deleting_asks_first_without_scripts_and_says_what_was_done(
    browser: Browser, api: httpx.Client
) -> None:
    message_id = post_message(api, browser.link_id, "think twice")
    reply_id = post_reply(api, browser.creator, message_id, "my answer")
    page_url = f"/dashboard/links/{browser.link_id}/messages/{message_id}"
    opened = browser.client.get(page_url).text
    # "Delete…" is a link to a page that asks; a script undoes instead (data-undo-action).
    assert f'href="{page_url}/delete"' in opened
    assert f'href="{page_url}/replies/{reply_id}/delete"' in opened

    asked = browser.client.get(f"{page_url}/replies/{reply_id}/delete")
    assert asked.status_code == 200
    assert "Delete this reply?" in asked.text
    assert "my answer" in asked.text
    assert reply_items(api, browser.creator, message_id) != []  # asking deleted nothing
    gone = browser.submit(f"{page_url}/replies/{reply_id}/delete", {"back": page_url})
    assert gone.headers["location"] == f"{page_url}?done=reply-deleted"
    assert reply_items(api, browser.creator, message_id) == []

    asked = browser.client.get(f"{page_url}/delete")
    assert asked.status_code == 200
    assert "Delete this message?" in asked.text
    assert "think twice" in asked.text
    back = re.search(r'name="back" value="([^"]*)"', asked.text)
    assert back
    assert back.group(1) == f"/dashboard/links/{browser.link_id}"
    assert [m["id"] for m in inbox_items(api, browser.creator)] == [message_id]

    deleted = browser.submit(f"{page_url}/delete", {"back": page_url})
    # Its own page is gone: back to the inbox, which says so.
    assert deleted.headers["location"] == f"/dashboard/links/{browser.link_id}?done=deleted"
    assert inbox_items(api, browser.creator) == []
    said = browser.client.get(deleted.headers["location"]).text
    assert "Message deleted." in said
    assert browser.client.get(page_url).status_code == 404
    assert browser.client.get(f"{page_url}/delete").status_code == 404


def test_each_action_says_what_it_did(browser: Browser, api: httpx.Client) -> None:
    message_id = post_message(api, browser.link_id, "like me")
    page_url = f"/dashboard/links/{browser.link_id}/messages/{message_id}"

    liked = browser.submit(f"{page_url}/like", {"back": page_url})
    unliked = browser.submit(f"{page_url}/like", {"back": page_url})
    saved = browser.submit(
        f"/dashboard/links/{browser.link_id}/settings",
        {"prompt": "Ask me", "back": f"/dashboard/links/{browser.link_id}"},
    )

    assert liked.headers["location"] == f"{page_url}?done=liked"
    assert unliked.headers["location"] == f"{page_url}?done=unliked"
    assert saved.headers["location"] == f"/dashboard/links/{browser.link_id}?done=saved"
    assert "Like taken back." in browser.client.get(unliked.headers["location"]).text
    assert "Settings saved." in browser.client.get(saved.headers["location"]).text
    # An unknown ?done= says nothing (and cannot make the page say anything else).
    bogus = browser.client.get(f"{page_url}?done=%3Cb%3Ehi").text
    assert '<p id="done" class="notice done empty" tabindex="-1"></p>' in bogus


def test_like_delete_reply_delete_message_and_block_through_forms(
    browser: Browser, api: httpx.Client
) -> None:
    creator = browser.creator
    base = f"/dashboard/links/{browser.link_id}/messages"
    kept = post_message(api, browser.link_id, "keep me")
    doomed = post_message(api, browser.link_id, "delete me")
    reply_id = post_reply(api, creator, kept, "first answer")

    assert browser.submit(f"{base}/{kept}/like").status_code == 303
    assert inbox_item(api, creator, kept)["like_by_creator"] is True
    assert browser.submit(f"{base}/{kept}/like").status_code == 303
    assert inbox_item(api, creator, kept)["like_by_creator"] is False

    assert browser.submit(f"{base}/{kept}/replies/{reply_id}/delete").status_code == 303
    assert reply_items(api, creator, kept) == []

    assert browser.submit(f"{base}/{doomed}/delete").status_code == 303
    assert [m["id"] for m in inbox_items(api, creator)] == [kept]

    # Two more from the same sender (this test, from 127.0.0.1), waiting.
    same_sender = [post_message(api, browser.link_id, f"again {n}") for n in range(2)]
    before = inbox_items(api, creator)
    assert [m["id"] for m in before] == [*same_sender[::-1], kept]
    assert browser.submit(f"{base}/{kept}/block").status_code == 303
    blocked = api.get("/blocks", headers=creator.headers).json()["data"]["items"]
    assert [b["message_excerpt"] for b in blocked] == ["keep me"]
    # Nothing already sent moves: not the blocked message, not the sender's other ones.
    assert inbox_items(api, creator) == before
    folder = api.get(f"/message/{browser.link_id}/filtered", headers=creator.headers)
    assert folder.json()["data"]["items"] == []
    # The blocked sender is dropped silently from now on.
    post_message(api, browser.link_id, "after the block")
    assert inbox_items(api, creator) == before
    folder = api.get(f"/message/{browser.link_id}/filtered", headers=creator.headers)
    assert folder.json()["data"]["items"] == []


def test_filters_show_what_they_say(browser: Browser, api: httpx.Client) -> None:
    creator = browser.creator
    plain = post_message(api, browser.link_id, "plain")
    answered = post_message(api, browser.link_id, "answered")
    liked = post_message(api, browser.link_id, "liked")
    post_reply(api, creator, answered)
    api.put(f"/message/{browser.link_id}/{liked}/like", headers=creator.headers)

    def shown(which: str) -> set[str]:
        page = browser.client.get(f"/dashboard/links/{browser.link_id}", params={"filter": which})
        assert page.status_code == 200, page.text
        return set(re.findall(ROW_IDS, page.text))

    assert shown("all") == {plain, answered, liked}
    assert shown("answered") == {answered}
    assert shown("unanswered") == {plain, liked}
    assert shown("liked") == {liked}
    assert browser.client.get("/dashboard?filter=bogus").status_code == 400


def test_the_unread_count_goes_down_as_messages_are_opened(
    browser: Browser, api: httpx.Client
) -> None:
    sent = [post_message(api, browser.link_id, f"unread {n}") for n in range(3)]
    inbox = f"/dashboard/links/{browser.link_id}"

    first = browser.client.get(inbox)
    assert unread_count(first.text) == 3
    assert len(re.findall(r'class="message-row unread" id="m-[0-9a-z]{26}"', first.text)) == 3

    # Shown is not read (issue 41): opened is.
    assert unread_count(browser.client.get(inbox).text) == 3
    assert browser.client.get(f"{inbox}/messages/{sent[0]}").status_code == 200
    assert unread_count(browser.client.get(inbox).text) == 2
    unread_page = browser.client.get(inbox, params={"filter": "unread"}).text
    assert re.findall(ROW_IDS, unread_page) == sent[:0:-1]

    post_message(api, browser.link_id, "one more")
    assert unread_count(browser.client.get(inbox).text) == 3


def test_link_settings_muted_words_and_api_keys(browser: Browser, api: httpx.Client) -> None:
    creator = browser.creator
    saved = browser.submit(
        f"/dashboard/links/{browser.link_id}/settings",
        {"prompt": "Ask me about boats", "paused": "on"},
    )
    assert saved.status_code == 303, saved.text
    link = api.get(f"/links/{browser.link_id}", headers=creator.headers).json()["data"]
    assert (link["prompt"], link["paused"]) == ("Ask me about boats", True)
    browser.submit(f"/dashboard/links/{browser.link_id}/settings", {"prompt": "Ask me"})
    assert api.get(f"/links/{browser.link_id}", headers=creator.headers).json()["data"] == {
        **link,
        "prompt": "Ask me",
        "paused": False,
    }

    assert browser.submit("/dashboard/muted-words", {"word": "spoiler"}).status_code == 303
    [word] = api.get("/muted-words", headers=creator.headers).json()["data"]["items"]
    assert word["word"] == "spoiler"
    assert browser.submit(f"/dashboard/muted-words/{word['id']}/delete").status_code == 303
    assert api.get("/muted-words", headers=creator.headers).json()["data"]["items"] == []

    created = browser.submit("/dashboard/api-keys", {"name": "my bot"})
    assert created.status_code == 201, created.text
    found = re.search(r'id="new-api-key">(anb_[0-9A-Za-z]+)<', created.text)
    assert found, created.text
    key = found.group(1)
    assert api.get("/user", headers={"X-API-Key": key}).status_code == 200
    account = browser.client.get("/dashboard/account")
    assert key not in account.text  # shown once
    [listed] = [
        k
        for k in api.get("/auth/api-keys", headers=creator.headers).json()["data"]["items"]
        if k["name"] == "my bot"
    ]
    assert browser.submit(f"/dashboard/api-keys/{listed['id']}/revoke").status_code == 303
    assert api.get("/user", headers={"X-API-Key": key}).status_code == 401


# --- security ---------------------------------------------------------------------------------


@pytest.mark.parametrize("token", [None, "wrong-token-of-a-decent-length-0123456789"])
def test_a_form_without_the_right_csrf_token_is_refused(
    browser: Browser, api: httpx.Client, token: str | None
) -> None:
    message_id = post_message(api, browser.link_id, "untouched")
    browser.csrf()  # the browser holds a CSRF cookie, the forged form does not match it
    base = f"/dashboard/links/{browser.link_id}/messages/{message_id}"
    fields = {} if token is None else {"csrf_token": token}

    for action, extra in [
        ("/reply", {"message_content": "forged"}),
        ("/like", {}),
        ("/delete", {}),
    ]:
        refused = browser.client.post(base + action, data={**fields, **extra})
        assert refused.status_code == 403, refused.text
        assert "text/html" in refused.headers["content-type"]
    assert browser.client.post("/signout", data=fields).status_code == 403

    item = inbox_item(api, browser.creator, message_id)
    assert (item["reply_count"], item["like_by_creator"]) == (0, False)
    assert api.get("/user", headers={"X-API-Key": browser.access_token}).status_code == 200


def test_an_api_key_in_the_session_cookie_opens_no_page_and_mints_no_key(
    servers: dict[str, Server], browser: Browser, api: httpx.Client
) -> None:
    """A leaked script key must not reach key management through the pages."""
    owner = {"X-API-Key": browser.access_token}
    made = api.post("/auth/api-keys", json={"name": "bot"}, headers=owner)
    assert made.status_code == 201, made.text
    leaked, leaked_id = made.json()["data"]["api_key"], made.json()["data"]["id"]
    csrf = "c" * 32
    cookies = {SESSION_COOKIE: leaked, CSRF_COOKIE: csrf}

    with cookie_header_client(servers["development"].url, cookies) as thief:
        pages = [thief.get("/dashboard"), thief.get("/dashboard/account")]
        minted = thief.post("/dashboard/api-keys", data={"csrf_token": csrf, "name": "mine"})
        revoke = thief.post(f"/dashboard/api-keys/{leaked_id}/revoke", data={"csrf_token": csrf})
        thief.post("/signout", data={"csrf_token": csrf})

    assert [page.status_code for page in pages] == [401, 401]
    assert (minted.status_code, revoke.status_code) == (401, 401)
    keys = api.get("/auth/api-keys", headers=owner).json()["data"]["items"]
    assert [(k["name"], k["revoked_at"]) for k in keys] == [("bot", None)]
    assert api.get("/user", headers={"X-API-Key": leaked}).status_code == 200
    assert api.get("/user", headers=owner).status_code == 200  # the owner is still signed in


def test_a_form_posted_with_origin_null_is_refused(browser: Browser, api: httpx.Client) -> None:
    """A sandboxed frame or a local file sends ``Origin: null``: never one of our pages."""
    message_id = post_message(api, browser.link_id, "untouched")
    action = f"/dashboard/links/{browser.link_id}/messages/{message_id}/like"

    refused = browser.client.post(
        action, data={"csrf_token": browser.csrf()}, headers={"Origin": "null"}
    )

    assert refused.status_code == 403
    assert inbox_item(api, browser.creator, message_id)["like_by_creator"] is False


def link_of(page: httpx.Response) -> str:
    found = re.search(r'data-link-id="([^"]+)"', page.text)
    assert found, page.text
    return found.group(1)


def test_a_csrf_token_from_another_creators_session_is_refused(
    make_browser: Callable[[], Browser], api: httpx.Client
) -> None:
    """Even with the cookie that goes with it (planted, say, from a neighbouring
    subdomain): a token is good only in the sign-in session it was shown to."""
    victim, attacker = make_browser(), make_browser()
    message_id = post_message(api, victim.link_id, "untouched")
    stolen = attacker.csrf()
    nonce = str(attacker.client.cookies[CSRF_COOKIE])
    victim.client.cookies.set(CSRF_COOKIE, nonce, domain="127.0.0.1", path="/")
    forged = {"csrf_token": stolen}
    base = f"/dashboard/links/{victim.link_id}/messages/{message_id}"

    for action, extra in [
        (base + "/reply", {"message_content": "forged"}),
        (base + "/like", {}),
        (base + "/delete", {}),
        ("/dashboard/api-keys", {"name": "forged"}),
        ("/signout", {}),
    ]:
        refused = victim.client.post(action, data={**forged, **extra})
        assert refused.status_code == 403, (action, refused.text)

    item = inbox_item(api, victim.creator, message_id)
    assert (item["reply_count"], item["like_by_creator"]) == (0, False)
    keys = api.get("/auth/api-keys", headers=victim.creator.headers).json()["data"]["items"]
    assert "forged" not in [k["name"] for k in keys]
    # Still signed in, and the victim's own page gives a token that works.
    assert victim.submit(base + "/like").status_code == 303
    assert inbox_item(api, victim.creator, message_id)["like_by_creator"] is True


def test_a_csrf_token_from_before_sign_in_or_from_an_earlier_session_is_refused(
    servers: dict[str, Server],
    provider: Provider,  # noqa: F811
    api: httpx.Client,
) -> None:
    server = servers["development"]
    person = provider.new_user()
    with http_client(server.url) as client:
        before = csrf_of(client.get("/signin").text)
        assert sign_in_browser(server.url, provider, client, person.sub)[1].status_code == 303
        page = client.get("/dashboard")
        first_session = csrf_of(page.text)
        link_id = link_of(page)
        message_id = post_message(api, link_id, "untouched")
        like = f"/dashboard/links/{link_id}/messages/{message_id}/like"

        assert client.post(like, data={"csrf_token": before}).status_code == 403
        assert client.post("/signout", data={"csrf_token": first_session}).status_code == 303
        assert sign_in_browser(server.url, provider, client, person.sub)[1].status_code == 303
        assert client.post(like, data={"csrf_token": first_session}).status_code == 403

        creator = Creator("", link_id, str(client.cookies[SESSION_COOKIE]))
        assert inbox_item(api, creator, message_id)["like_by_creator"] is False
        fresh = csrf_of(client.get("/dashboard").text)
        assert client.post(like, data={"csrf_token": fresh}).status_code == 303
        assert inbox_item(api, creator, message_id)["like_by_creator"] is True


def test_with_secure_cookies_the_csrf_cookie_is_a_host_cookie_and_a_plain_one_is_ignored(
    servers: dict[str, Server],
    provider: Provider,  # noqa: F811
) -> None:
    """``__Host-`` cookies come only from this host, over HTTPS, for path ``/``: nothing
    set for a parent domain or another path can stand in for them."""
    server = servers["production"]
    with http_client(server.url) as anonymous:
        signin = anonymous.get("/signin")
    [cookie] = set_cookies(signin, "__Host-" + CSRF_COOKIE)
    attributes = cookie_attributes(cookie)
    assert {"secure", "httponly"} <= attributes.keys()
    assert (attributes["path"], attributes["samesite"].lower()) == ("/", "strict")
    assert "domain" not in attributes
    assert set_cookies(signin, CSRF_COOKIE) == []

    client, finished = sign_in_browser(server.url, provider)
    with contextlib.closing(client), http_client(server.url) as api:
        # Sent by hand: a cookie jar keeps Secure cookies off plain HTTP, as a browser would.
        session = (
            f"__Host-{SESSION_COOKIE}="
            + cookie_attributes(set_cookies(finished, "__Host-" + SESSION_COOKIE)[0])["value"]
        )
        page = client.get("/dashboard", headers={"Cookie": session})
        assert page.status_code == 200, page.text
        nonce = cookie_attributes(set_cookies(page, "__Host-" + CSRF_COOKIE)[0])["value"]
        token, link_id = csrf_of(page.text), link_of(page)
        message_id = post_message(api, link_id, "untouched")
        like = f"/dashboard/links/{link_id}/messages/{message_id}/like"

        planted = client.post(
            like,
            data={"csrf_token": token},
            headers={"Cookie": f"{session}; {CSRF_COOKIE}={nonce}"},
        )
        assert planted.status_code == 403, planted.text
        liked = client.post(
            like,
            data={"csrf_token": token},
            headers={"Cookie": f"{session}; __Host-{CSRF_COOKIE}={nonce}"},
        )
        assert liked.status_code == 303, liked.text
        out = client.post(
            "/signout",
            data={"csrf_token": token},
            headers={"Cookie": f"{session}; __Host-{CSRF_COOKIE}={nonce}"},
        )
    assert out.status_code == 303, out.text
    # Deleted with the attributes it was set with, or a browser would keep it.
    [gone] = set_cookies(out, "__Host-" + SESSION_COOKIE)
    assert {"secure", "max-age"} <= cookie_attributes(gone).keys()
    assert cookie_attributes(gone)["max-age"] == "0"


def test_an_error_page_hands_back_the_session_it_renewed(browser: Browser) -> None:
    """A renewal spends the refresh token: an answer that dropped the new pair would leave
    the browser presenting the spent one, which signs the whole session out as reuse."""
    for failing in [
        lambda: browser.client.get("/dashboard/links/no-such-link"),
        lambda: browser.client.post("/dashboard/muted-words", data={"csrf_token": "forged"}),
    ]:
        browser.client.cookies.set(SESSION_COOKIE, "anbs_expired", domain="127.0.0.1", path="/")
        assert failing().status_code in {403, 404}
        assert browser.client.get("/dashboard").status_code == 200


def test_the_live_stream_ends_when_its_session_is_signed_out(
    browser: Browser, api: httpx.Client
) -> None:
    events = f"/dashboard/links/{browser.link_id}/events"
    with browser.client.stream("GET", events, timeout=10) as stream:
        lines = stream.iter_lines()
        assert next(lines) == ": connected"
        assert browser.submit("/signout").status_code == 303
        after = post_message(api, browser.link_id, "after signing out")

        rest = list(lines)  # ends well before the 10 s read timeout and the 15 s keep-alive

    assert after not in "\n".join(rest)


def test_a_live_inbox_gets_every_message_a_wake_follows_not_only_the_first_page(
    browser: Browser, api: httpx.Client
) -> None:
    """More posts than one read holds (a flood between two looks) all go out at once: none
    waits for the next post, which may never come."""
    first = post_message(api, browser.link_id, "the one the browser has")
    posted = [post_message(api, browser.link_id, f"flood {n}") for n in range(120)]
    events = f"/dashboard/links/{browser.link_id}/events"
    received: list[str] = []
    headers = {"Last-Event-ID": first}
    with browser.client.stream("GET", events, headers=headers, timeout=5) as stream:
        for line in stream.iter_lines():
            if line.startswith("id: "):
                received.append(line.removeprefix("id: "))
            if len(received) == len(posted):
                break
    assert received == posted


def test_one_session_may_hold_five_live_streams_not_hundreds(browser: Browser) -> None:
    events = f"/dashboard/links/{browser.link_id}/events"
    readers = []  # kept: dropping a line iterator closes its connection
    with contextlib.ExitStack() as open_streams:
        for _ in range(5):
            stream = open_streams.enter_context(browser.client.stream("GET", events))
            assert stream.status_code == 200
            readers.append(stream.iter_lines())
            assert next(readers[-1]) == ": connected"
        refused = browser.client.get(events, timeout=5)  # a stream would time out here
        assert refused.status_code == 429
        assert int(refused.headers["retry-after"]) > 0
    # Closed ones count no more, once the server has noticed them go.
    deadline = time.monotonic() + 10
    while True:
        with browser.client.stream("GET", events) as again:
            if again.status_code == 200:
                break
        assert time.monotonic() < deadline, "closed streams still counted"
        time.sleep(0.5)


def test_a_file_in_place_of_the_csrf_token_is_refused_not_a_500(
    browser: Browser, api: httpx.Client
) -> None:
    message_id = post_message(api, browser.link_id, "untouched")
    token = browser.csrf()
    action = f"/dashboard/links/{browser.link_id}/messages/{message_id}/like"

    refused = browser.client.post(
        action, files={"csrf_token": ("token.txt", token.encode(), "text/plain")}
    )

    assert refused.status_code == 403, refused.text
    assert inbox_item(api, browser.creator, message_id)["like_by_creator"] is False


def test_another_creators_link_is_refused_and_shows_nothing(
    make_browser: Callable[[], Browser], api: httpx.Client
) -> None:
    owner, other = make_browser(), make_browser()
    secret = "a secret only the owner may read"
    message_id = post_message(api, owner.link_id, secret)

    page = other.client.get(f"/dashboard/links/{owner.link_id}")
    assert page.status_code in {403, 404}
    assert secret not in page.text
    with other.client.stream("GET", f"/dashboard/links/{owner.link_id}/events") as events:
        assert events.status_code in {403, 404}

    replied = other.submit(
        f"/dashboard/links/{owner.link_id}/messages/{message_id}/reply",
        {"message_content": "not mine"},
    )
    assert replied.status_code in {403, 404}
    deleted = other.submit(f"/dashboard/links/{owner.link_id}/messages/{message_id}/delete")
    assert deleted.status_code in {403, 404}
    assert inbox_item(api, owner.creator, message_id)["reply_count"] == 0


def test_a_script_in_a_message_is_shown_as_text(browser: Browser, api: httpx.Client) -> None:
    hostile = '<script>alert("x")</script><img src=x onerror=alert(1)>'
    message_id = post_message(api, browser.link_id, hostile)

    inbox = browser.client.get("/dashboard").text
    page = browser.client.get(f"/dashboard/links/{browser.link_id}/messages/{message_id}").text

    assert "<script>alert" not in inbox
    assert "<img src=x" not in inbox
    entry = article(page, message_id)
    assert "<script>alert" not in page
    assert "<img src=x" not in page
    shown = re.search(r'<p class="message-content"[^>]*>(.*?)</p>', entry, re.S)
    assert shown
    assert "<" not in shown.group(1)
    assert html.unescape(shown.group(1)) == hostile


def test_a_message_posted_after_the_stream_opened_arrives_live(
    browser: Browser, api: httpx.Client
) -> None:
    path = f"/dashboard/links/{browser.link_id}/events"
    with browser.client.stream("GET", path, timeout=httpx.Timeout(10.0, read=5.0)) as events:
        assert events.status_code == 200
        assert events.headers["content-type"].startswith("text/event-stream")
        message_id = post_message(api, browser.link_id, "<b>live</b> hello")
        deadline = time.monotonic() + 10
        received: list[str] = []
        for line in events.iter_lines():
            received.append(line)
            if line.startswith("data:") and message_id in line:
                break
            assert time.monotonic() < deadline, received
    data = received[-1]
    assert '"message_content":"<b>live</b> hello"' in data  # JSON; the page adds it as text
    assert f"id: {message_id}" in received or f"id:{message_id}" in received


def test_a_message_stored_while_an_empty_inbox_is_drawn_still_arrives_live(
    browser: Browser, api: httpx.Client
) -> None:
    """The page says where its stream starts (``data-after``); the script opens the stream
    a moment after the page is drawn. A message stored in that moment is not on the page,
    so the stream must bring it, even when the inbox was empty."""
    page = browser.client.get("/dashboard")
    assert page.status_code == 200
    assert page.text.count("data-message-id=") == 1  # the live template only: empty
    found = re.search(r'data-after="([^"]*)"', page.text)
    assert found
    message_id = post_message(api, browser.link_id, "between the page and its stream")
    path = f"/dashboard/links/{browser.link_id}/events"
    params = {"after": found.group(1)} if found.group(1) else {}  # as static/dashboard.js
    with browser.client.stream(
        "GET", path, params=params, timeout=httpx.Timeout(10.0, read=5.0)
    ) as events:
        assert events.status_code == 200
        deadline = time.monotonic() + 10
        for line in events.iter_lines():
            if line.startswith("data:") and message_id in line:
                break
            assert time.monotonic() < deadline
