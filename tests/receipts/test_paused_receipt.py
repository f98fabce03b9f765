"""The receipt page of a paused link (issue 41): it says the link is paused, and until when
for a timed pause, instead of that follow-ups "aren't accepted here"; resumed, the form is
back. Over HTTP, on SQLite and PostgreSQL."""

from __future__ import annotations

import html
import re
from datetime import UTC, datetime, timedelta

import httpx

from tests.conftest import Creator


def receipt_page(api: httpx.Client, creator: Creator, text: str) -> str:
    """Send ``text`` with a receipt; the receipt page's path."""
    sent = api.post(
        f"/message/{creator.link_id}", params={"receipt": "true"}, json={"message_content": text}
    )
    assert sent.status_code == 201, sent.text
    return f"/r/{sent.json()['data']['receipt']['token']}"


def follow_up_section(page: str) -> str:
    found = re.search(r'<section[^>]*aria-labelledby="follow-up-title".*?</section>', page, re.S)
    assert found, page
    return html.unescape(re.sub(r"<[^>]+>", "", found.group(0)))


def set_pause(api: httpx.Client, creator: Creator, body: dict[str, object]) -> None:
    changed = api.patch(f"/links/{creator.link_id}", json=body, headers=creator.headers)
    assert changed.status_code == 200, changed.text


def test_a_timed_pause_says_until_when(api: httpx.Client, creator: Creator) -> None:
    path = receipt_page(api, creator, "before the pause")
    set_pause(api, creator, {"pause_for_hours": 24})
    page = api.get(path)
    assert page.status_code == 200
    said = follow_up_section(page.text)

    assert "has paused their link until" in said
    assert "nothing can be sent to it until then" in said
    assert "does not take follow-ups" not in said
    assert 'id="follow-up-form"' not in page.text
    # The moment itself, in the page, about a day from now.
    at = re.search(r'id="follow-up-paused">.*?<time datetime="([^"]+)"', page.text, re.S)
    assert at, page.text
    until = datetime.fromisoformat(at.group(1).replace("Z", "+00:00"))
    assert timedelta(hours=23) < until - datetime.now(UTC) <= timedelta(hours=24)


def test_an_open_pause_says_paused_and_resuming_brings_the_form_back(
    api: httpx.Client, creator: Creator
) -> None:
    path = receipt_page(api, creator, "before the pause")
    set_pause(api, creator, {"paused": True})
    said = follow_up_section(api.get(path).text)
    assert "has paused their link: nothing can be sent to it for now." in said
    assert "until" not in said
    assert "does not take follow-ups" not in said

    set_pause(api, creator, {"paused": False})
    page = api.get(path).text
    assert 'id="follow-up-form"' in page
    assert 'id="follow-up-paused"' not in page


def test_follow_ups_turned_off_still_say_so(api: httpx.Client, creator: Creator) -> None:
    path = receipt_page(api, creator, "no follow-ups here")
    set_pause(api, creator, {"follow_ups": False})
    page = api.get(path).text
    assert 'id="no-follow-up"' in page
    assert 'id="follow-up-paused"' not in page


def test_a_paused_receipt_speaks_japanese_and_korean(api: httpx.Client, creator: Creator) -> None:
    path = receipt_page(api, creator, "before the pause")
    set_pause(api, creator, {"pause_for_hours": 3})
    for lang in ("ja", "ko"):
        page = api.get(path, headers={"Accept-Language": lang})
        assert f'<html lang="{lang}"' in page.text
        said = follow_up_section(page.text)
        assert "paused" not in said  # translated, not English
        assert 'id="follow-up-paused"' in page.text
