"""The public pages through the real server: the send page with and without JavaScript's
help (the form post), its errors, the answers listing and the share card."""

from __future__ import annotations

import html
import io
import re
import warnings
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest
from litestar import Litestar
from PIL import Image

from anonbox.account.avatar import AvatarRef, picture
from anonbox.core.ids import LINK_ID_LENGTH
from anonbox.web.cards.draw import render_link_card
from tests.actions import answer_path, assert_error, inbox_items, post_message, post_reply
from tests.conftest import Creator, make_creator_in
from tests.server import Server
from tests.support.http import loopback_client
from tests.support.metrics import scrape, value
from tests.support.servers import own_server

HTML = {"Accept": "text/html,application/xhtml+xml"}
SOME_ULID = "01jabcdefghjkmnpqrstvwxyz0"


def page(api: httpx.Client, link_id: str, **params: str) -> httpx.Response:
    response = api.get(f"/{link_id}", params=params, headers=HTML)
    return response


def csrf(api: httpx.Client, link_id: str) -> str:
    """Open the send page as a browser would; the anonymous form carries no token (its page
    is the same for everyone: issue 43) and sets no cookie, so there is none to return."""
    opened = page(api, link_id)
    assert opened.status_code == 200, opened.text
    assert "csrf_token" not in opened.text
    assert "set-cookie" not in opened.headers
    return ""


def submit(
    api: httpx.Client,
    link_id: str,
    text: str,
    token: str | None = None,
    headers: dict[str, str] | None = None,
) -> httpx.Response:
    """Post the send form as a browser without JavaScript does: with the token of a page
    opened just before unless ``token`` is given ("" leaves the field out)."""
    form = {"message_content": text}
    if token is None:
        token = csrf(api, link_id)
    if token:
        form["csrf_token"] = token
    return api.post(f"/{link_id}", data=form, headers={**HTML, **(headers or {})})


def set_link(api: httpx.Client, creator: Creator, **changes: object) -> None:
    changed = api.patch(f"/links/{creator.link_id}", json=changes, headers=creator.headers)
    assert changed.status_code == 200, changed.text


def stored(api: httpx.Client, creator: Creator) -> list[str]:
    return [item["message_content"] for item in inbox_items(api, creator)]


# --- the send page --------------------------------------------------------------------------


def test_send_page_shows_the_link_and_a_form_with_a_counter(
    api: httpx.Client, creator: Creator
) -> None:
    set_link(api, creator, prompt="Ask me about lighthouses")
    response = page(api, creator.link_id)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    body = response.text
    assert "Ask me about lighthouses" in body
    assert 'id="creator-name"' in body
    assert '<textarea id="message" name="message_content"' in body
    assert '<label for="message">' in body
    assert 'id="counter"' in body
    assert "/ 500" in body
    assert 'id="status"' in body
    assert 'aria-live="polite"' in body
    assert f'action="/{creator.link_id}"' in body
    assert 'method="post"' in body
    assert '<script src="/static/send.js" defer></script>' in body
    # The same page for every visitor (issue 43): no token, no cookie, kept by caches.
    assert "set-cookie" not in response.headers
    assert response.headers["cache-control"] == "public, max-age=60"


def test_pages_carry_a_strict_content_security_policy(api: httpx.Client, creator: Creator) -> None:
    response = page(api, creator.link_id)
    policy = response.headers["content-security-policy"]
    assert "script-src 'self'" in policy
    assert "style-src 'self'" in policy
    assert "unsafe-inline" not in policy
    assert response.headers["x-frame-options"] == "DENY"
    # Nothing inline that the policy would have to allow: no script or style in the page.
    assert "<style" not in response.text
    assert " style=" not in response.text
    assert re.search(r"<script(?![^>]*\bsrc=)", response.text) is None
    assert " onclick=" not in response.text
    assert "javascript:" not in response.text
    script = api.get("/static/send.js")
    assert script.status_code == 200
    assert "fetch(" in script.text


def test_user_text_is_escaped(api: httpx.Client, creator: Creator) -> None:
    hostile = "<script>alert(1)</script>"
    set_link(api, creator, prompt=f"Ask {hostile}")
    message_id = post_message(api, creator.link_id, f"Q {hostile}")
    post_reply(api, creator, message_id, f"A {hostile}")
    body = page(api, creator.link_id).text
    assert "<script>alert" not in body
    shown = body.split("<body", 1)[1]
    # the prompt, the message, the reply, and the message as the text its share passes on
    assert shown.count(html.escape(hostile)) == 4
    # and the prompt in the link's preview: og/twitter description and image alt
    assert body.split("<body", 1)[0].count(html.escape(hostile)) == 4


def test_a_form_post_without_javascript_sends_and_redirects(
    api: httpx.Client, creator: Creator
) -> None:
    sent = submit(api, creator.link_id, "What is your\r\nfavourite lighthouse?")
    assert sent.status_code == 303, sent.text
    assert sent.headers["location"] == f"/{creator.link_id}?sent=1"
    after = api.get(sent.headers["location"], headers=HTML)
    assert after.status_code == 200
    assert 'id="sent"' in after.text
    # The browser's CRLF is the one line break the counter showed.
    assert stored(api, creator) == ["What is your\nfavourite lighthouse?"]


def test_500_characters_are_counted_as_code_points_after_nfc(
    api: httpx.Client, creator: Creator
) -> None:
    emoji = "\U0001f642" * 500  # 1000 UTF-16 units, 500 characters
    decomposed = "e\u0301" * 500  # 1000 code points, 500 after NFC
    assert submit(api, creator.link_id, emoji).status_code == 303
    assert submit(api, creator.link_id, decomposed).status_code == 303
    assert len(stored(api, creator)) == 2


def test_too_long_is_400_and_keeps_the_text(api: httpx.Client, creator: Creator) -> None:
    text = "<b>" + "x" * 498
    response = submit(api, creator.link_id, text)
    assert response.status_code == 400
    assert response.headers["content-type"].startswith("text/html")
    assert 'id="error"' in response.text
    assert "longer than 500" in response.text
    assert f">{html.escape(text)}</textarea>" in response.text
    assert 'aria-invalid="true"' in response.text
    assert stored(api, creator) == []


def test_blank_is_400(api: httpx.Client, creator: Creator) -> None:
    response = submit(api, creator.link_id, "   \r\n ")
    assert response.status_code == 400
    assert "Write a message first" in response.text
    assert stored(api, creator) == []


def test_paused_link_is_409_and_keeps_the_text(api: httpx.Client, creator: Creator) -> None:
    token = csrf(api, creator.link_id)
    set_link(api, creator, paused=True)
    response = submit(api, creator.link_id, "still there?", token=token)
    assert response.status_code == 409
    assert "not accepting messages" in response.text
    assert "still there?</textarea>" in response.text
    assert stored(api, creator) == []
    assert 'id="paused"' in page(api, creator.link_id).text  # no form while paused


@pytest.mark.parametrize(
    "headers",
    [
        pytest.param({"Origin": "https://evil.example"}, id="cross-site-origin"),
        pytest.param({"Origin": "null"}, id="sandboxed-origin"),
        pytest.param({"Sec-Fetch-Site": "cross-site"}, id="cross-site-fetch"),
        pytest.param({"Sec-Fetch-Site": "same-site"}, id="same-site-fetch"),
    ],
)
def test_a_form_post_from_another_site_is_403_and_stores_nothing(
    api: httpx.Client, creator: Creator, headers: dict[str, str]
) -> None:
    response = submit(api, creator.link_id, "forged", headers=headers)
    assert response.status_code == 403
    assert response.headers["content-type"].startswith("text/html")
    assert stored(api, creator) == []


def test_the_anonymous_form_is_sent_without_a_cookie_or_a_token_from_our_own_page(
    server: Server, api: httpx.Client, creator: Creator
) -> None:
    """The anonymous form carries nothing per visitor: a browser that kept no cookie (or
    says nothing of where the post comes from, as before 2020) still sends it."""
    host = urlsplit(server.url).netloc
    with loopback_client(base_url=server.url, timeout=30) as stranger:
        own = submit(
            stranger,
            creator.link_id,
            "from our own page",
            headers={"Origin": f"http://{host}", "Sec-Fetch-Site": "same-origin"},
        )
        silent = submit(stranger, creator.link_id, "from an old browser")
    assert own.status_code == 303, own.text
    assert silent.status_code == 303, silent.text
    # The receipt's cookie after the post stays: an answer to a POST, never cached.
    assert own.headers["cache-control"] == "private, no-store"
    assert stored(api, creator) == ["from an old browser", "from our own page"]


# A server that lets one sender post 2 messages a minute to a link.
limited_server = own_server("limited_server", {"ANONBOX_LIMIT_SENDER_LINK": "2/60"})


def test_rate_limited_is_429_with_retry_after(limited_server: Server) -> None:
    creator = make_creator_in(limited_server.database_url)
    with loopback_client(base_url=limited_server.url, timeout=30) as browser:
        assert submit(browser, creator.link_id, "one").status_code == 303
        assert submit(browser, creator.link_id, "two").status_code == 303
        refused = submit(browser, creator.link_id, "three")
        assert refused.status_code == 429
        assert 1 <= int(refused.headers["retry-after"]) <= 60
        assert "too fast" in refused.text
        assert "three</textarea>" in refused.text
        assert stored(browser, creator) == ["two", "one"]


# --- unknown links and reserved paths -----------------------------------------------------


def test_unknown_link_is_an_html_404_for_browsers_and_the_envelope_for_clients(
    api: httpx.Client,
) -> None:
    for_browser = api.get("/nolinkhere", headers=HTML)
    assert for_browser.status_code == 404
    assert for_browser.headers["content-type"].startswith("text/html")
    assert "<h1" in for_browser.text
    assert_error(api.get("/nolinkhere"), 404, "not_found")
    assert_error(api.post("/nolinkhere", json={"message_content": "x"}), 404, "not_found")
    assert_error(api.get("/no.such.thing"), 404, "not_found")


def test_no_fixed_first_path_segment_can_be_a_link_id() -> None:
    """``/{link_id}`` sits beside the API's own paths; fixed paths win in the router, so a
    link whose id equalled one would be unreachable. New link ids are 11 of [0-9a-z]; those
    made before issue 31 are 10, and must stay reachable too."""
    # Built here only to read its routes; importing it warns of Litestar deprecations.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from anonbox.main import create_app

        app = create_app().app
    assert isinstance(app, Litestar)
    link_id = re.compile(rf"[0-9a-z]{{10,{LINK_ID_LENGTH}}}")
    firsts = {route.path.strip("/").split("/")[0] for route in app.routes}
    fixed = {segment for segment in firsts if segment and not segment.startswith("{")}
    assert {"message", "links", "static", "healthz"} <= fixed
    assert [segment for segment in fixed if link_id.fullmatch(segment)] == []


# --- answers --------------------------------------------------------------------------------


def answer_ids(api: httpx.Client, link_id: str, body: str) -> list[str]:
    """The messages the page lists as answers, in order, by their answer ids (the page
    shows no message id: it tells the send time)."""
    listed = api.get(f"/message/{link_id}", params={"limit": 100}).json()["data"]["items"]
    by_answer = {item["answer_id"]: item["id"] for item in listed}
    return [by_answer[a] for a in re.findall(r'id="answer-([A-Za-z0-9_-]{12})"', body)]


def test_answers_show_only_answered_messages_newest_first_with_their_replies(
    api: httpx.Client, creator: Creator
) -> None:
    older = post_message(api, creator.link_id, "older question")
    unanswered = post_message(api, creator.link_id, "private question")
    newer = post_message(api, creator.link_id, "newer question")
    post_reply(api, creator, older, "first answer")
    post_reply(api, creator, older, "second answer")
    post_reply(api, creator, newer, "newer answer")
    body = page(api, creator.link_id).text
    assert answer_ids(api, creator.link_id, body) == [newer, older]
    assert unanswered not in body
    assert "private question" not in body
    assert body.index("second answer") < body.index("first answer")  # replies newest first
    assert 'id="answers"' in body
    newer_answer = answer_path(api, creator.link_id, newer)
    assert f'href="{newer_answer}/card.png"' in body


def test_answers_are_paged_with_the_cursor(api: httpx.Client, creator: Creator) -> None:
    ids = [post_message(api, creator.link_id, f"question {n}") for n in range(12)]
    for message_id in ids:
        post_reply(api, creator, message_id, "yes")
    first = page(api, creator.link_id).text
    assert answer_ids(api, creator.link_id, first) == ids[::-1][:10]
    older = re.search(r'id="older" rel="next" href="([^"]+)"', first)
    assert older, first
    second = api.get(html.unescape(older.group(1)), headers=HTML)
    assert second.status_code == 200
    assert answer_ids(api, creator.link_id, second.text) == ids[::-1][10:]
    assert 'id="older"' not in second.text


def test_a_bad_cursor_is_400(api: httpx.Client, creator: Creator) -> None:
    assert page(api, creator.link_id, cursor="nope").status_code == 400


# --- share cards ---------------------------------------------------------------------------


def test_an_answered_message_downloads_as_a_story_sized_png(
    api: httpx.Client, creator: Creator, artifacts_dir: Path
) -> None:
    message_id = post_message(api, creator.link_id, "word " * 100)
    post_reply(api, creator, message_id, "x" * 500)
    response = api.get(f"/{creator.link_id}/{message_id}/card.png")
    assert response.status_code == 200
    assert response.headers["content-type"] == "image/png"
    assert response.headers["content-disposition"].startswith("attachment")
    assert "max-age" in response.headers["cache-control"]
    image = Image.open(io.BytesIO(response.content))
    assert image.format == "PNG"
    assert image.size == (1080, 1920)
    (artifacts_dir / "share-card.png").write_bytes(response.content)
    again = api.get(
        f"/{creator.link_id}/{message_id}/card.png",
        headers={"If-None-Match": response.headers["etag"]},
    )
    assert again.status_code == 304


def cards_drawn(api: httpx.Client) -> float:
    return value(scrape(api), "anonbox_cards_drawn")


def test_a_card_is_drawn_once_per_version_however_often_it_is_asked_for(
    api: httpx.Client, creator: Creator, server: Server
) -> None:
    """Drawing a card costs ~0.15 s of CPU: drawn afresh for every request, a handful of
    requests a second filled the machine."""
    message_id = post_message(api, creator.link_id, "a question worth a card")
    post_reply(api, creator, message_id, "the first answer")
    card = f"/{creator.link_id}/{message_id}/card.png"
    before = cards_drawn(api)

    def fetch(_: int) -> bytes:
        with loopback_client(base_url=server.url, timeout=30) as other:
            answer = other.get(card)
            assert answer.status_code == 200
            return answer.content

    with ThreadPoolExecutor(8) as pool:
        pngs = set(pool.map(fetch, range(16)))  # at once, and again one by one
    pngs |= {fetch(n) for n in range(4)}

    assert len(pngs) == 1
    assert cards_drawn(api) == before + 1
    post_reply(api, creator, message_id, "a second answer, so a new card")
    assert fetch(0) not in pngs
    assert cards_drawn(api) == before + 2


# Three cards a minute per client, behind a trusted proxy.
card_limited_server = own_server(
    "card_limited_server",
    {"ANONBOX_LIMIT_CARD": "3/60", "ANONBOX_TRUSTED_PROXIES": "127.0.0.1/32"},
)


def test_cards_are_limited_per_client(card_limited_server: Server) -> None:
    creator = make_creator_in(card_limited_server.database_url)
    with loopback_client(base_url=card_limited_server.url, timeout=30) as api:
        message_id = post_message(api, creator.link_id, "card me")
        post_reply(api, creator, message_id, "carded")
        card = f"/{creator.link_id}/{message_id}/card.png"
        greedy = {"X-Forwarded-For": "203.0.113.40"}
        assert [api.get(card, headers=greedy).status_code for _ in range(3)] == [200] * 3
        refused = api.get(card, headers=greedy)
        assert refused.status_code == 429
        assert int(refused.headers["retry-after"]) > 0
        assert api.get(card, headers={"X-Forwarded-For": "198.51.100.40"}).status_code == 200
        # The link's own card counts against the same allowance.
        assert api.get(f"/{creator.link_id}/card.png", headers=greedy).status_code == 429
        link_card = api.get(
            f"/{creator.link_id}/card.png", headers={"X-Forwarded-For": "198.51.100.41"}
        )
        assert link_card.status_code == 200


@pytest.mark.parametrize("which", ["unanswered", "unknown-message", "bad-id", "other-link"])
def test_no_card_for_what_is_not_public(
    api: httpx.Client, make_creator: Callable[[], Creator], which: str
) -> None:
    creator, other = make_creator(), make_creator()
    unanswered = post_message(api, creator.link_id, "private")
    answered_elsewhere = post_message(api, other.link_id, "answered elsewhere")
    post_reply(api, other, answered_elsewhere, "yes")
    message_id = {
        "unanswered": unanswered,
        "unknown-message": SOME_ULID,
        "bad-id": "not-a-ulid",
        "other-link": answered_elsewhere,
    }[which]
    path = f"/{creator.link_id}/{message_id}/card.png"
    assert_error(api.get(path), 404, "not_found")
    assert api.get(path, headers=HTML).status_code == 404


def test_no_card_under_an_unknown_link(api: httpx.Client) -> None:
    assert_error(api.get(f"/nolinkhere/{SOME_ULID}/card.png"), 404, "not_found")
    assert_error(api.get("/nolinkhere/card.png"), 404, "not_found")


def test_a_link_has_a_card_of_its_own(
    api: httpx.Client, creator: Creator, server: Server, artifacts_dir: Path
) -> None:
    """ "Send me anonymous messages", the creator's picture and name, the prompt, the QR
    code and the address: the card a creator posts to a story so people come and ask."""
    made = api.post("/links", json={"prompt": "匿名で質問してね 💌"}, headers=creator.headers)
    assert made.status_code == 201, made.text
    link_id = made.json()["data"]["id"]
    public = api.get(f"/links/{link_id}/public").json()["data"]
    response = api.get(f"/{link_id}/card.png")
    assert response.status_code == 200
    assert response.headers["content-type"] == "image/png"
    assert "max-age" in response.headers["cache-control"]
    image = Image.open(io.BytesIO(response.content))
    assert (image.format, image.size) == ("PNG", (1080, 1920))
    (artifacts_dir / "link-card.png").write_bytes(response.content)
    # Exactly the card drawn for this name, picture (none chosen: the neutral one), prompt
    # and this server's address, typed and as a QR code.
    assert public["creator_avatar_url"] == "/avatars/neutral.svg"
    assert response.content == render_link_card(
        name=public["creator_name"].strip() or "The creator",
        prompt="匿名で質問してね 💌",
        url=f"{urlsplit(server.url).netloc}/{link_id}",
        qr=f"{server.url}/{link_id}",
        avatar=picture(AvatarRef("neutral")),
    )
    again = api.get(f"/{link_id}/card.png", headers={"If-None-Match": response.headers["etag"]})
    assert again.status_code == 304
    changed = api.patch(
        f"/links/{link_id}", json={"prompt": "Ask me anything"}, headers=creator.headers
    )
    assert changed.status_code == 200, changed.text
    redrawn = api.get(f"/{link_id}/card.png", headers={"If-None-Match": response.headers["etag"]})
    assert redrawn.status_code == 200
    assert redrawn.content != response.content


def test_a_deleted_link_has_no_card(api: httpx.Client, creator: Creator) -> None:
    made = api.post("/links", json={}, headers=creator.headers)
    link_id = made.json()["data"]["id"]
    assert api.get(f"/{link_id}/card.png").status_code == 200
    assert api.delete(f"/links/{link_id}", headers=creator.headers).status_code == 200
    assert_error(api.get(f"/{link_id}/card.png"), 404, "link_gone")  # a page says 410
    assert api.get(f"/{link_id}/card.png", headers=HTML).status_code == 410
