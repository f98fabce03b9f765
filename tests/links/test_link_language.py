"""A link's language and card theme (issue 41, item 2): set through PATCH /links/{id}, an
unknown value refused in the envelope with nothing changed; a new link speaks the
language of the client that made it (Accept-Language), else its creator's. On SQLite and
PostgreSQL."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from anonbox.core.i18n import LANGUAGES
from anonbox.links.schemas import CARD_THEMES
from tests.actions import assert_error, data_of
from tests.conftest import Creator
from tests.links.test_links import change, shown
from tests.server import Server
from tests.support.forms import csrf_of
from tests.support.signin import signed_in


def public(api: httpx.Client, link_id: str) -> dict[str, Any]:
    return dict(data_of(api.get(f"/links/{link_id}/public")))


def test_a_new_link_speaks_english_in_violet_until_told_otherwise(
    api: httpx.Client, creator: Creator
) -> None:
    link = shown(api, creator, creator.link_id)
    assert (link["language"], link["card_theme"]) == ("en", "violet")
    assert (
        public(api, creator.link_id)["language"],
        public(api, creator.link_id)["card_theme"],
    ) == (
        "en",
        "violet",
    )


@pytest.mark.parametrize("language", sorted(LANGUAGES))
def test_each_language_can_be_chosen(api: httpx.Client, creator: Creator, language: str) -> None:
    changed = data_of(change(api, creator, creator.link_id, {"language": language}))
    assert changed["language"] == language
    assert shown(api, creator, creator.link_id) == changed
    assert public(api, creator.link_id)["language"] == language


@pytest.mark.parametrize("theme", CARD_THEMES)
def test_each_theme_can_be_chosen(api: httpx.Client, creator: Creator, theme: str) -> None:
    changed = data_of(change(api, creator, creator.link_id, {"card_theme": theme}))
    assert changed["card_theme"] == theme
    assert shown(api, creator, creator.link_id) == changed
    assert public(api, creator.link_id)["card_theme"] == theme


def test_the_documented_choices_are_the_ones_taken(api: httpx.Client) -> None:
    doc = api.get("/openapi.json").json()
    patch = doc["components"]["schemas"]["LinkPatch"]["properties"]
    documented = {
        name: {value for option in patch[name]["oneOf"] for value in option.get("enum", [])}
        for name in ("language", "card_theme")
    }
    assert documented == {"language": set(LANGUAGES), "card_theme": set(CARD_THEMES)}
    assert patch["language"]["description"]


@pytest.mark.parametrize(
    "body",
    [
        {"language": "fr"},
        {"language": "JA"},
        {"language": "ja-JP"},
        {"language": ""},
        {"language": None},
        {"language": 1},
        {"card_theme": "purple"},
        {"card_theme": "Violet"},
        {"card_theme": ""},
        {"card_theme": None},
        {"language": "ko", "card_theme": "rainbow"},
        {"language": "xx", "card_theme": "night", "prompt": "changed?"},
    ],
)
def test_an_unknown_language_or_theme_is_refused_and_changes_nothing(
    api: httpx.Client, creator: Creator, body: dict[str, object]
) -> None:
    change(api, creator, creator.link_id, {"language": "es", "card_theme": "mint"})
    before = shown(api, creator, creator.link_id)
    assert_error(change(api, creator, creator.link_id, body), 400, "validation_failed")
    assert shown(api, creator, creator.link_id) == before


def created(api: httpx.Client, creator: Creator, **headers: str) -> dict[str, Any]:
    return dict(data_of(api.post("/links", json={}, headers={**creator.headers, **headers}), 201))


def test_a_new_link_speaks_the_language_of_the_client_that_made_it(
    api: httpx.Client, creator: Creator, server: Server
) -> None:
    made = created(api, creator, **{"Accept-Language": "xx, ko-KR;q=0.9, en;q=0.5"})
    assert made["language"] == "ko"
    assert shown(api, creator, made["id"])["language"] == "ko"
    # A client that asks for nothing anonbox speaks: English, as the pages it would get.
    assert created(api, creator, **{"Accept-Language": "fr"})["language"] == "en"

    # No Accept-Language: the creator's language, as it is now and later.
    silent = created(api, creator)
    assert silent["language"] == "en"
    with signed_in(server, creator.user_id) as browser:
        assert browser.get("/dashboard", headers={"Accept-Language": "id"}).status_code == 200
    assert shown(api, creator, silent["id"])["language"] == "id"
    assert shown(api, creator, made["id"])["language"] == "ko"  # its own, kept


def test_a_link_made_on_the_links_page_speaks_the_browsers_language(
    api: httpx.Client, creator: Creator, server: Server
) -> None:
    with signed_in(server, creator.user_id, headers={"Accept-Language": "ja"}) as browser:
        page = browser.get("/dashboard/links")
        assert page.status_code == 200, page.text
        made = browser.post(
            "/dashboard/links", data={"csrf_token": csrf_of(page.text), "prompt": "何でも"}
        )
        assert made.status_code == 303, made.text
    links = data_of(api.get("/links", headers=creator.headers))["items"]
    [new] = [link for link in links if link["id"] != creator.link_id]
    assert new["language"] == "ja"


@pytest.mark.parametrize("field", ["language", "card_theme"])
def test_the_settings_form_refuses_an_unknown_choice_and_changes_nothing(
    api: httpx.Client, creator: Creator, server: Server, field: str
) -> None:
    """The settings page posts past the API's schema, straight to the links service: it
    holds the same rules."""
    settings_page = f"/dashboard/links/{creator.link_id}/settings"
    with signed_in(server, creator.user_id) as browser:
        page = browser.get(settings_page)
        assert page.status_code == 200, page.text
        form = {
            "csrf_token": csrf_of(page.text),
            "prompt": "Ask me anything",
            "all_settings": "1",
            "pause": "open",
            "muted": "filter",
            "crosspost": "off",
            "senders": "anyone",
            "language": "ko",
            "card_theme": "ocean",
        }
        saved = browser.post(settings_page, data=form, headers={"Accept": "text/html"})
        assert saved.status_code == 303, saved.text
        before = shown(api, creator, creator.link_id)
        assert (before["language"], before["card_theme"]) == ("ko", "ocean")
        assert '<option value="ko" lang="ko" selected>' in browser.get(settings_page).text

        refused = browser.post(
            settings_page,
            data={**form, "prompt": "changed?", field: "unknown"},
            headers={"Accept": "text/html"},
        )
        assert refused.status_code == 400, refused.text
    assert shown(api, creator, creator.link_id) == before
