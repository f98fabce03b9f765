"""A browser opening a followable link's addresses still gets its pages (issue 42, item 1):
Chromium's own ``Accept`` ranks HTML first, so the send page, an answer page and the
actor's address (sent on to the send page) are the pages a person reads, each naming its
ActivityPub document in ``<link rel="alternate">``, which a server that asks for the
document gets in place. On both databases."""

from __future__ import annotations

from collections.abc import Callable

from playwright.sync_api import BrowserContext, expect

from tests.actions import answer_path, post_message, post_reply
from tests.browser.conftest import off_the_loop, own_server
from tests.conftest import make_creator_in
from tests.federation.conftest import followable
from tests.server import Server
from tests.support.http import loopback_client

MASTODON = (
    "application/activity+json, "
    'application/ld+json; profile="https://www.w3.org/ns/activitystreams", text/html;q=0.1'
)
ALTERNATE = 'link[rel="alternate"][type="application/activity+json"]'

pasting_site = own_server(
    "pasting_site", {"ANONBOX_FEDERATION_ALLOW_PRIVATE": "true"}, public_url=True
)


def test_a_browser_gets_the_pages_that_name_their_activitypub_documents(
    pasting_site: Server, new_context: Callable[..., BrowserContext]
) -> None:
    site = pasting_site.url
    with loopback_client(base_url=site, timeout=30) as api:
        creator = off_the_loop(make_creator_in, pasting_site.database_url)
        followable(api, creator)
        message_id = post_message(api, creator.link_id, "Tea or coffee?")
        post_reply(api, creator, message_id, "Genmaicha, always")
        answer = answer_path(api, creator.link_id, message_id)
        actor = f"{site}/ap/links/{creator.link_id}"

        page = new_context().new_page()
        for address, landing, heading in (
            (f"{site}/{creator.link_id}", f"{site}/{creator.link_id}", None),
            (actor, f"{site}/{creator.link_id}", None),
            (f"{site}{answer}", f"{site}{answer}", "Tea or coffee?"),
        ):
            shown = page.goto(address)
            assert shown is not None
            assert shown.status == 200
            assert page.url == landing
            assert shown.headers["content-type"].startswith("text/html")
            expect(page.locator("h1")).to_be_visible()
            if heading:
                expect(page.locator("h1")).to_contain_text(heading)
            named = page.locator(ALTERNATE).get_attribute("href")
            assert named is not None
            # What the page names is what a server asking for ActivityPub gets there.
            document = api.get(address, headers={"Accept": MASTODON})
            assert document.headers["content-type"] == "application/activity+json"
            assert document.json()["id"] == named
            assert document.json()["type"] == ("Note" if heading else "Service")
        assert page.locator(ALTERNATE).get_attribute("href") != actor  # the Note's, last
