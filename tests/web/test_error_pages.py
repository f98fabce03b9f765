"""A browser that meets an error anywhere (an address that is no route, an API route) gets
the error page, in its language, never stored; an API client gets the envelope exactly as
before. Pages that show a link's state are conditional on its content version (issue 43),
so a sender sees the link as it is now: the tag a browser or a shared cache kept no longer
matches once it changed (a shared cache keeps one at most its max-age, 60 s). Over HTTP
against the real server, as a browser and as a client send."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import httpx
import pytest

from tests.account.conftest import signed_in
from tests.actions import assert_error
from tests.conftest import Creator, make_creator_in
from tests.server import Server, free_port
from tests.support.http import loopback_client

# What Chromium sends when a person opens an address.
BROWSER = {
    "Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,"
    "image/webp,image/apng,*/*;q=0.8"
}


def assert_error_page(response: httpx.Response, status: int, heading: str) -> str:
    """The error page: its status, HTML, its heading, never stored, the pages' headers."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("text/html")
    assert response.headers["cache-control"] == "no-store"
    assert "frame-ancestors 'none'" in response.headers["content-security-policy"]
    assert f'<h1 id="error-title">{heading}</h1>' in response.text
    assert "Traceback" not in response.text
    return response.text


def assert_revalidated(page: httpx.Response, before: httpx.Response | None = None) -> None:
    """A send page a cache may keep a minute, under a tag that moves when the link does."""
    assert page.headers["cache-control"] == "public, max-age=60", dict(page.headers)
    if before is not None:
        assert page.headers["etag"] != before.headers["etag"]


def assert_never_stored(response: httpx.Response) -> None:
    directives = {d.strip() for d in response.headers.get("cache-control", "").split(",")}
    assert "no-store" in directives, dict(response.headers)


# --- no such address ----------------------------------------------------------------------


@pytest.mark.parametrize("path", ["/abc/def", "/message", "/abc/def/ghi", "/static/nope.css"])
def test_a_mistyped_address_is_a_404_page_for_a_browser(api: httpx.Client, path: str) -> None:
    page = assert_error_page(api.get(path, headers=BROWSER), 404, "Not found")
    assert "There is nothing here. Check the address." in page


def test_the_404_page_speaks_the_visitors_language(api: httpx.Client) -> None:
    japanese = api.get("/abc/def", headers={**BROWSER, "Accept-Language": "ja,en;q=0.5"})
    page = assert_error_page(japanese, 404, "見つかりません")
    assert '<html lang="ja"' in page
    assert "アドレスを確認してください" in page


@pytest.mark.parametrize(
    "accept",
    [None, "*/*", "application/json", "application/json, text/html", "text/html;q=0.5, */*"],
)
def test_api_clients_keep_the_envelope(api: httpx.Client, accept: str | None) -> None:
    headers = {"Accept": accept} if accept else {}
    if accept is None:
        api.headers.pop("accept", None)  # httpx sends */* unless told otherwise
    response = api.get("/abc/def", headers=headers)
    body = assert_error(response, 404, "not_found")
    assert body["message"] == "Nothing here: GET /abc/def is not a route of this service"
    assert body["error"] == {"code": "not_found", "fields": []}
    assert response.headers["cache-control"] == "private, no-store"


def test_an_api_route_a_browser_opens_answers_with_the_page(api: httpx.Client) -> None:
    page = assert_error_page(api.get("/message/nosuchlink", headers=BROWSER), 404, "Not found")
    assert "No link with this id" in page  # the service's own sentence, where it has one
    assert_error(api.get("/message/nosuchlink"), 404, "not_found")


def test_refusals_about_credentials_stay_envelopes_even_for_a_browser(api: httpx.Client) -> None:
    """Only an API client can fix a missing key or a malformed value: a page would not help."""
    assert_error(api.get("/user", headers=BROWSER), 401, "unauthorized")
    assert_error(api.get("/message/bad%20id!", headers=BROWSER), 400, "validation_failed")


# --- not that way -------------------------------------------------------------------------


def test_a_wrong_method_is_a_405_page_that_names_the_allowed_ones(
    api: httpx.Client, creator: Creator
) -> None:
    for path in ("/healthz", f"/{creator.link_id}"):
        refused = api.delete(path, headers=BROWSER)
        assert_error_page(refused, 405, "Not allowed")
        assert "GET" in refused.headers["allow"]
    assert_error(api.delete("/healthz"), 405, "method_not_allowed")


# --- gone, and back -----------------------------------------------------------------------


def test_a_deleted_link_is_a_410_page_wherever_a_browser_opens_it(
    api: httpx.Client, creator: Creator
) -> None:
    made = api.post("/links", json={}, headers=creator.headers)
    link_id = made.json()["data"]["id"]
    assert api.delete(f"/links/{link_id}", headers=creator.headers).status_code == 200
    for path in (f"/{link_id}", f"/message/{link_id}"):
        page = assert_error_page(api.get(path, headers=BROWSER), 410, "No longer available")
        assert "no longer available" in page
    assert_error(api.get(f"/message/{link_id}"), 404, "link_gone")


def test_the_send_page_and_its_paused_page_are_told_apart_at_once(
    api: httpx.Client, creator: Creator
) -> None:
    open_page = api.get(f"/{creator.link_id}", headers=BROWSER)
    assert open_page.status_code == 200
    assert_revalidated(open_page)
    paused = api.patch(
        f"/links/{creator.link_id}", json={"pause_for_hours": 2}, headers=creator.headers
    )
    assert paused.status_code == 200, paused.text
    paused_page = api.get(f"/{creator.link_id}", headers=BROWSER)
    assert paused_page.status_code == 200
    assert "not accepting messages" in paused_page.text
    assert_revalidated(paused_page, open_page)


def test_a_sender_sees_the_link_again_once_its_creator_cancels_the_deletion(
    server: Server, api: httpx.Client
) -> None:
    """Opened during the account's grace period the link is gone; the creator cancels; the
    same address shows the send page at once, nothing kept from the first visit."""
    creator = make_creator_in(server.database_url)
    asked = api.post("/account/deletion", headers=signed_in(server.database_url, creator.user_id))
    assert asked.status_code == 201, asked.text
    assert_error_page(api.get(f"/{creator.link_id}", headers=BROWSER), 410, "No longer available")

    back = signed_in(server.database_url, creator.user_id)  # signing in again
    assert api.delete("/account/deletion", headers=back).status_code == 200

    again = api.get(f"/{creator.link_id}", headers=BROWSER)
    assert again.status_code == 200
    assert 'name="message_content"' in again.text
    assert_revalidated(again)


# --- too often, and broken ------------------------------------------------------------------


@pytest.fixture(scope="module")
def limited(
    database_url_factory: Callable[[str], str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    """One post per sender and link a minute. The pages do not depend on the database:
    SQLite alone."""
    logs = tmp_path_factory.mktemp("error-pages")
    env = {"ANONBOX_LIMIT_SENDER_LINK": "1/60"}
    running = Server(database_url_factory("sqlite"), logs / "limited.log", env=env).start()
    yield running
    running.stop()


@pytest.fixture(scope="module")
def redis_down(
    database_url_factory: Callable[[str], str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    """Its rate limits live in a Redis that does not answer, and fail closed: every post
    is a 503."""
    logs = tmp_path_factory.mktemp("error-pages")
    env = {
        "ANONBOX_REDIS_URL": f"redis://127.0.0.1:{free_port()}/0",
        "ANONBOX_RATE_LIMIT_FAIL": "closed",
    }
    running = Server(database_url_factory("sqlite"), logs / "redis-down.log", env=env).start()
    yield running
    running.stop()


def new_link_path(server: Server) -> str:
    """Where a sender posts to a new creator's link on ``server``."""
    return f"/message/{make_creator_in(server.database_url).link_id}"


def test_too_many_posts_are_a_429_page_for_a_browser_and_the_envelope_for_a_client(
    limited: Server,
) -> None:
    post = new_link_path(limited)
    with loopback_client(base_url=limited.url, timeout=30) as api:
        assert api.post(post, json={"message_content": "one"}).status_code == 201
        refused = api.post(post, json={"message_content": "two"}, headers=BROWSER)
        assert_error_page(refused, 429, "Slow down")
        assert 1 <= int(refused.headers["retry-after"]) <= 60
        again = api.post(post, json={"message_content": "two"})
        assert_error(again, 429, "rate_limited")
        assert 1 <= int(again.headers["retry-after"]) <= 60


def test_an_unavailable_service_is_a_503_page_for_a_browser_and_the_envelope_for_a_client(
    redis_down: Server,
) -> None:
    post = new_link_path(redis_down)
    with loopback_client(base_url=redis_down.url, timeout=30) as api:
        refused = api.post(post, json={"message_content": "hello"}, headers=BROWSER)
        assert_error_page(refused, 503, "Unavailable")
        assert int(refused.headers["retry-after"]) > 0
        assert_error(api.post(post, json={"message_content": "hello"}), 503, "service_unavailable")
