"""The creator's public profile (issue 31): ``PATCH /account/profile`` sets a display name
and a bio; until a name is chosen, the send page, the cards and the public link call the
creator by a neutral name, never by anything from their e-mail address. Each test runs on
SQLite and on PostgreSQL."""

from __future__ import annotations

import hashlib
import io
import uuid
from typing import Any

import httpx
import pytest
from PIL import Image

from anonbox.web.cards.draw import SAFE_BOTTOM
from tests.actions import assert_error, post_message, post_reply
from tests.conftest import Creator, make_creator_in
from tests.server import Server

PROFILE = "/account/profile"


def creator_with_email(server: Server, email: str) -> Creator:
    """An account made as a sign-up with ``email`` makes it."""
    return make_creator_in(server.database_url, email)


def hanako(server: Server) -> Creator:
    # The domain varies so that each run may sign up again; the name part is the point.
    return creator_with_email(server, f"hanako.yamada@{uuid.uuid4().hex[:8]}.example.jp")


def patch_profile(api: httpx.Client, creator: Creator, body: Any) -> httpx.Response:
    return api.patch(PROFILE, json=body, headers=creator.headers)


def named_hanako(api: httpx.Client, server: Server) -> Creator:
    """A new creator whose profile already reads "Hanako", bio "hi"."""
    creator = hanako(server)
    assert patch_profile(api, creator, {"display_name": "Hanako", "bio": "hi"}).status_code == 200
    return creator


def profile_of(api: httpx.Client, creator: Creator) -> dict[str, Any]:
    response = api.get(PROFILE, headers=creator.headers)
    assert response.status_code == 200, response.text
    data: dict[str, Any] = response.json()["data"]
    return data


# --- PATCH /account/profile -------------------------------------------------------------


def test_a_creator_chooses_a_name_and_bio_normalised_and_trimmed(
    api: httpx.Client, server: Server
) -> None:
    creator = hanako(server)
    assert profile_of(api, creator) == {"display_name": None, "bio": None}

    # "Cafe" with a combining acute accent: stored as the one composed character (NFC).
    response = patch_profile(
        api, creator, {"display_name": "  Cafe\u0301 花子 ", "bio": " 質問どうぞ "}
    )

    assert response.status_code == 200, response.text
    body = response.json()
    assert set(body) == {"status_code", "message", "data", "metadata"}
    assert body["status_code"] == 200
    assert body["data"] == {"display_name": "Café 花子", "bio": "質問どうぞ"}
    assert profile_of(api, creator) == body["data"]

    # A field left out keeps its value; an empty bio (or null) removes it.
    assert patch_profile(api, creator, {"bio": ""}).json()["data"] == {
        "display_name": "Café 花子",
        "bio": None,
    }
    assert patch_profile(api, creator, {"display_name": "x" * 80}).status_code == 200
    assert patch_profile(api, creator, {"bio": "b" * 160}).json()["data"]["bio"] == "b" * 160
    assert patch_profile(api, creator, {"bio": None}).json()["data"]["bio"] is None


@pytest.mark.parametrize(
    ("body", "field", "problem"),
    [
        ({"display_name": "x" * 81}, "display_name", "too_long"),
        ({"display_name": ""}, "display_name", "too_short"),
        ({"display_name": "   "}, "display_name", "blank"),
        ({"display_name": "Hana\x00ko"}, "display_name", "control_character"),
        ({"display_name": "Hana\u0085ko"}, "display_name", "control_character"),
        ({"bio": "b" * 161}, "bio", "too_long"),
        ({"bio": "line\x07bell"}, "bio", "control_character"),
        ({"display_name": 42}, "display_name", None),
        ({"display_name": None}, "display_name", None),
        ({"bio": ["a"]}, "bio", None),
    ],
)
def test_a_bad_value_is_a_400_with_its_field_and_changes_nothing(
    api: httpx.Client, server: Server, body: dict[str, Any], field: str, problem: str | None
) -> None:
    creator = named_hanako(api, server)

    refused = assert_error(patch_profile(api, creator, body), 400)

    fields = refused["error"].get("fields") or []
    assert [f["field"] for f in fields] == [field], refused
    if problem is not None:
        assert fields[0]["problem"] == problem, refused
    assert profile_of(api, creator) == {"display_name": "Hanako", "bio": "hi"}


@pytest.mark.parametrize("body", [{}, [], "Hanako", {"nickname": "Hanako"}])
def test_a_body_without_either_field_is_a_400(api: httpx.Client, server: Server, body: Any) -> None:
    creator = hanako(server)
    assert_error(patch_profile(api, creator, body), 400)
    assert profile_of(api, creator) == {"display_name": None, "bio": None}


def test_without_a_credential_the_profile_is_a_401(api: httpx.Client) -> None:
    assert_error(api.patch(PROFILE, json={"display_name": "Hanako"}), 401)
    assert_error(api.patch(PROFILE, json={"display_name": "x"}, headers={"X-API-Key": "nope"}), 401)
    assert_error(api.get(PROFILE), 401)


# --- a name that draws nothing (issue 39, item 6) ------------------------------------------

# Each kind of character that draws nothing, alone and mixed: default-ignorable code points
# (zero-width space, word joiner, BOM, joiners, soft hyphen, variation selector, tags), the
# Hangul fillers and the braille blank. With one of these for a name a creator looks nameless.
INVISIBLE_NAMES = {
    "zero-width space": "\u200b",
    "word joiner": "\u2060",
    "BOM": "\ufeff",
    "ZWJ and ZWNJ": "\u200d\u200c",
    "Hangul filler": "\u3164",
    "half-width Hangul filler": "\uffa0",
    "Hangul choseong and jungseong fillers": "\u115f\u1160",
    "braille blank": "\u2800",
    "soft hyphen and variation selector": "\u00ad\ufe0f",
    "tag characters": "\U000e0041\U000e0042",
    "a mix with spaces": " \u200b\u3164 \u2800\ufeff\u2060\u200d\u00a0",
}


@pytest.mark.parametrize("name", list(INVISIBLE_NAMES.values()), ids=list(INVISIBLE_NAMES))
def test_a_display_name_that_draws_nothing_is_refused_as_blank(
    api: httpx.Client, server: Server, name: str
) -> None:
    creator = named_hanako(api, server)

    refused = assert_error(patch_profile(api, creator, {"display_name": name}), 400)

    assert refused["error"]["code"] == "validation_failed"
    assert refused["error"]["fields"] == [{"field": "display_name", "problem": "blank"}]
    assert profile_of(api, creator) == {"display_name": "Hanako", "bio": "hi"}
    # Sent with a bio, it changes nothing either (not even the bio).
    both = assert_error(patch_profile(api, creator, {"display_name": name, "bio": "new"}), 400)
    assert both["error"]["fields"] == [{"field": "display_name", "problem": "blank"}]
    assert profile_of(api, creator) == {"display_name": "Hanako", "bio": "hi"}
    # An account without a name stays without one: public pages keep the neutral name.
    fresh = hanako(server)
    assert_error(patch_profile(api, fresh, {"display_name": name}), 400)
    assert profile_of(api, fresh) == {"display_name": None, "bio": None}


@pytest.mark.parametrize("bio", list(INVISIBLE_NAMES.values()), ids=list(INVISIBLE_NAMES))
def test_a_bio_that_draws_nothing_removes_the_bio(
    api: httpx.Client, server: Server, bio: str
) -> None:
    creator = named_hanako(api, server)

    cleared = patch_profile(api, creator, {"bio": bio})

    assert cleared.status_code == 200, cleared.text
    assert cleared.json()["data"] == {"display_name": "Hanako", "bio": None}
    assert profile_of(api, creator) == {"display_name": "Hanako", "bio": None}


def test_invisible_characters_between_visible_ones_are_a_name(
    api: httpx.Client, server: Server
) -> None:
    creator = hanako(server)
    # A joiner inside an emoji sequence, a filler beside a letter: something shows.
    for name in ("\U0001f469\u200d\U0001f4bb", "\u3164Hana\u200bko", "\u2800\u2801"):
        named = patch_profile(api, creator, {"display_name": name})
        assert named.status_code == 200, named.text
        assert named.json()["data"]["display_name"] == name


@pytest.mark.parametrize("prompt", list(INVISIBLE_NAMES.values()), ids=list(INVISIBLE_NAMES))
def test_a_prompt_that_draws_nothing_is_refused_as_blank(
    api: httpx.Client, creator: Creator, prompt: str
) -> None:
    # The prompt is the send page's heading and the link's ActivityPub summary: a link
    # asking nothing visible looks as nameless as a blank name.
    before = api.get(f"/links/{creator.link_id}", headers=creator.headers).json()["data"]
    changed = api.patch(
        f"/links/{creator.link_id}", json={"prompt": prompt}, headers=creator.headers
    )
    body = assert_error(changed, 400, "validation_failed")
    assert body["error"]["fields"] == [{"field": "prompt", "problem": "blank"}]
    made = api.post("/links", json={"prompt": prompt}, headers=creator.headers)
    body = assert_error(made, 400, "validation_failed")
    assert body["error"]["fields"] == [{"field": "prompt", "problem": "blank"}]
    after = api.get(f"/links/{creator.link_id}", headers=creator.headers).json()["data"]
    assert after["prompt"] == before["prompt"]


# --- never the e-mail's name in public ------------------------------------------------------


def answered(api: httpx.Client, creator: Creator) -> str:
    message_id = post_message(api, creator.link_id, "Who are you?")
    post_reply(api, creator, message_id, "Someone who likes lighthouses.")
    return message_id


def public_texts(api: httpx.Client, creator: Creator) -> str:
    page = api.get(f"/{creator.link_id}", headers={"Accept": "text/html"})
    assert page.status_code == 200, page.text
    link = api.get(f"/links/{creator.link_id}/public")
    assert link.status_code == 200, link.text
    messages = api.get(f"/message/{creator.link_id}")
    assert messages.status_code == 200, messages.text
    return (page.text + link.text + messages.text).lower()


def card(api: httpx.Client, creator: Creator, message_id: str) -> bytes:
    response = api.get(f"/{creator.link_id}/{message_id}/card.png")
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "image/png"
    return response.content


def above_the_address(png: bytes) -> str:
    """A digest of a card's pixels above its footer (the link's address and the brand, at
    the foot of the story's safe zone): a digest, so that a difference reads in one line."""
    image = Image.open(io.BytesIO(png)).convert("RGB")
    footer_top = SAFE_BOTTOM - 200
    return hashlib.sha256(image.crop((0, 0, image.width, footer_top)).tobytes()).hexdigest()


def test_hanako_yamada_is_shown_by_no_part_of_her_address_before_or_after_choosing_a_name(
    api: httpx.Client, server: Server
) -> None:
    creator = hanako(server)
    # Someone else, with another address, the same prompt, message and reply: an answer
    # card draws the prompt, the texts and the name, nothing else.
    other = creator_with_email(server, f"kenji.sato@{uuid.uuid4().hex[:8]}.example.jp")
    message_id, other_message = answered(api, creator), answered(api, other)

    before = public_texts(api, creator)
    assert "hanako" not in before
    assert "yamada" not in before
    assert "the creator" in before
    link_card = api.get(f"/{creator.link_id}/card.png")
    assert link_card.status_code == 200, link_card.text
    # The two cards are the same picture but for the link's address at the foot (each its
    # own link): neither draws anything of its creator's e-mail address.
    hers = card(api, creator, message_id)
    assert above_the_address(hers) == above_the_address(card(api, other, other_message))

    named = patch_profile(api, creator, {"display_name": "はなこ", "bio": "Lighthouse fan"})
    assert named.status_code == 200, named.text

    after = public_texts(api, creator)
    assert "hanako" not in after
    assert "yamada" not in after
    assert "はなこ" in after
    assert "lighthouse fan" in after
    link = api.get(f"/links/{creator.link_id}/public").json()["data"]
    assert (link["creator_name"], link["creator_named"], link["creator_bio"]) == (
        "はなこ",
        True,
        "Lighthouse fan",
    )
    # The answer card now draws her chosen name: another picture than the neutral one.
    assert card(api, creator, message_id) != hers
    assert api.get(f"/{creator.link_id}/card.png").status_code == 200
