"""Names people can see (issue 39, item 6), where no element can isolate them: the tab title,
the link preview's meta tags and the picture's alt text. A right-to-left override in a
creator's name or prompt is closed, inside an FSI … PDI isolate, before the site's own
words, so "· anonbox" and "an anonymous message" still read left to right. Over HTTP as a
browser and a link-preview crawler get the send page, on SQLite and PostgreSQL."""

from __future__ import annotations

import html
import re

import httpx

from tests.conftest import Creator

HTML = {"Accept": "text/html,application/xhtml+xml"}
RLO, PDF, FSI, PDI = "\u202e", "\u202c", "\u2068", "\u2069"


def send_page(api: httpx.Client, creator: Creator) -> str:
    response = api.get(f"/{creator.link_id}", headers=HTML)
    assert response.status_code == 200, response.text
    return response.text


def title_of(page: str) -> str:
    found = re.search(r"<title>(.*?)</title>", page, re.S)
    assert found, page
    return html.unescape(found.group(1))


def meta(page: str, key: str) -> str:
    """The content of the meta tag whose ``property`` or ``name`` is ``key``."""
    found = re.search(rf'<meta (?:property|name)="{re.escape(key)}" content="([^"]*)">', page)
    assert found, key
    return html.unescape(found.group(1))


def set_name(api: httpx.Client, creator: Creator, name: str) -> None:
    made = api.patch("/account/profile", json={"display_name": name}, headers=creator.headers)
    assert made.status_code == 200, made.text
    assert made.json()["data"]["display_name"] == name  # stored as typed


def set_prompt(api: httpx.Client, creator: Creator, prompt: str) -> None:
    made = api.patch(f"/links/{creator.link_id}", json={"prompt": prompt}, headers=creator.headers)
    assert made.status_code == 200, made.text


def test_an_override_in_the_name_is_closed_before_the_sites_words_in_title_and_previews(
    api: httpx.Client, creator: Creator
) -> None:
    set_name(api, creator, f"{RLO}Mallory")
    set_prompt(api, creator, "Ask me anything")
    page = send_page(api, creator)

    shown = f"{FSI}{RLO}Mallory{PDF}{PDI}"
    assert title_of(page) == f"{shown} · anonbox"
    assert meta(page, "og:title") == f"Send {shown} an anonymous message"
    assert meta(page, "twitter:title") == f"Send {shown} an anonymous message"
    assert meta(page, "og:image:alt") == f"{shown} asks: Ask me anything"
    assert meta(page, "twitter:image:alt") == f"{shown} asks: Ask me anything"
    assert f'alt="Picture of {shown}"' in page
    # The body isolates the name with markup, as before: there it is as typed.
    assert f'<p class="creator-name" id="creator-name" dir="auto">{RLO}Mallory</p>' in page


def test_an_override_in_the_prompt_is_closed_in_the_previews(
    api: httpx.Client, creator: Creator
) -> None:
    set_name(api, creator, "Hanako")
    set_prompt(api, creator, f"Ask {RLO}me")
    page = send_page(api, creator)

    assert title_of(page) == "Hanako · anonbox"  # nothing directional: left as it is
    assert meta(page, "og:title") == "Send Hanako an anonymous message"
    assert meta(page, "og:description") == f"{FSI}Ask {RLO}me{PDF}{PDI}"
    assert meta(page, "og:image:alt") == f"Hanako asks: {FSI}Ask {RLO}me{PDF}{PDI}"


def test_a_closer_in_the_name_cannot_end_the_isolate_early(
    api: httpx.Client, creator: Creator
) -> None:
    # A PDI or PDF with nothing of the name's to close would close our FSI (or nothing)
    # and leave the override after it open: such closers are dropped.
    set_name(api, creator, f"{PDI}{PDF}{RLO}Mallory")
    page = send_page(api, creator)
    assert title_of(page) == f"{FSI}{RLO}Mallory{PDF}{PDI} · anonbox"

    # The name's own balanced pairs are kept as they are.
    set_name(api, creator, f"\u2067{RLO}Mal{PDF}{PDI}lory")
    page = send_page(api, creator)
    assert title_of(page) == f"{FSI}\u2067{RLO}Mal{PDF}{PDI}lory{PDI} · anonbox"


def test_a_right_to_left_name_is_isolated_so_the_title_keeps_its_order(
    api: httpx.Client, creator: Creator
) -> None:
    set_name(api, creator, "مريم")
    page = send_page(api, creator)
    assert title_of(page) == f"{FSI}مريم{PDI} · anonbox"
    assert meta(page, "og:title") == f"Send {FSI}مريم{PDI} an anonymous message"
