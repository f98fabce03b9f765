"""The home page at ``/``, over HTTP on SQLite and PostgreSQL: what a newcomer sees, and
where a signed-in creator is sent."""

from __future__ import annotations

import uuid

import httpx

from tests.server import Server
from tests.support.signin import signed_in_browser


def test_the_home_page_says_what_anonbox_is_and_leads_to_sign_in(api: httpx.Client) -> None:
    page = api.get("/", headers={"Accept": "text/html"})

    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    assert "default-src 'none'" in page.headers["content-security-policy"]
    assert 'id="get-link" href="/signin"' in page.text
    assert 'href="/docs"' in page.text
    assert "keeps no sender&#39;s address" in page.text or "keeps no sender's address" in page.text


def test_a_signed_in_creator_goes_from_home_and_signin_to_the_dashboard(server: Server) -> None:
    browser = signed_in_browser(server, f"home-{uuid.uuid4().hex[:10]}@example.org")
    try:
        for path in ("/", "/signin"):
            answer = browser.get(path)
            assert answer.status_code == 303, (path, answer.text)
            assert answer.headers["location"] == "/dashboard"
    finally:
        browser.close()


def test_a_stale_session_cookie_on_home_is_the_home_page(api: httpx.Client) -> None:
    api.cookies.set("anonbox_session", "anbs_" + "x" * 40)
    api.cookies.set("anonbox_session_refresh", "anbr_" + "x" * 40)
    assert api.get("/").status_code == 200
