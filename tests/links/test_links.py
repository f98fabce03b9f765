"""/links: a creator's several links, their prompt and paused settings, and their public view."""

from __future__ import annotations

import re
import secrets
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from anonbox.links import repository as links_repository
from anonbox.links.prompts import DEFAULT_PROMPT
from tests.actions import assert_error, data_of, first_page, inbox_items, post_message
from tests.conftest import Creator, make_creator_in
from tests.server import Server
from tests.support.db import query

ENVELOPE_KEYS = {"status_code", "message", "data", "metadata"}
# What a creator sets on a link; PATCH /links/{id} also takes pause_for_hours.
LINK_SETTINGS = {
    "prompt",
    "paused",
    "follow_ups",
    "hide_dates",
    "muted",
    "crosspost",
    "crosspost_cw",
    "fediverse",
    "fediverse_discoverable",
    "senders",
    "language",
    "card_theme",
    "federation_visibility",
}
LINK_KEYS = {"id", "created_at", "paused_until", *LINK_SETTINGS}
PUBLIC_KEYS = {
    "id",
    "prompt",
    "paused",
    "creator_name",
    "creator_picture_url",
    "hide_dates",
    "creator_bio",
    "creator_named",
    "creator_avatar_url",
    "senders",
    "language",
    "card_theme",
}
UNKNOWN_LINK = "nosuchlink0"
BAD_KEY = {"X-API-Key": "anb_" + "0" * 40}
MAX_LINKS = 100


def create(api: httpx.Client, creator: Creator, body: Any = None) -> httpx.Response:
    return api.post("/links", json={} if body is None else body, headers=creator.headers)


def new_link(api: httpx.Client, creator: Creator, prompt: str | None = None) -> dict[str, Any]:
    return dict(data_of(create(api, creator, {} if prompt is None else {"prompt": prompt}), 201))


def listed(api: httpx.Client, creator: Creator) -> list[dict[str, Any]]:
    return list(data_of(api.get("/links", headers=creator.headers))["items"])


def shown(api: httpx.Client, creator: Creator, link_id: str) -> dict[str, Any]:
    response = api.get(f"/links/{link_id}", headers=creator.headers)
    assert response.status_code == 200, response.text
    return dict(response.json()["data"])


def change(api: httpx.Client, creator: Creator, link_id: str, body: Any) -> httpx.Response:
    return api.patch(f"/links/{link_id}", json=body, headers=creator.headers)


def profile_link(api: httpx.Client, creator: Creator) -> str | None:
    response = api.get("/user", headers=creator.headers)
    assert response.status_code == 200, response.text
    link_id: str | None = response.json()["data"]["link_id"]
    return link_id


def problems(body: dict[str, Any]) -> list[tuple[str, str]]:
    return [(item["field"], item["problem"]) for item in body["error"]["fields"]]


def utc_instant(value: str) -> datetime:
    moment = datetime.fromisoformat(value)
    assert moment.utcoffset() == timedelta(0), value
    return moment


def rows_left(database_url: str, sql: str, *args: Any) -> int:
    """Count rows straight in the server's database: what the API no longer shows."""
    [row] = query(database_url, sql, *args)
    return int(row["n"])


# --- POST /links ----------------------------------------------------------------------------


def test_created_link_has_the_documented_shape(api: httpx.Client, creator: Creator) -> None:
    before = datetime.now(UTC)
    made = create(api, creator, {"prompt": "Ask me anything!"})
    after = datetime.now(UTC)

    assert made.status_code == 201, made.text
    body = made.json()
    assert set(body) == ENVELOPE_KEYS
    assert body["status_code"] == 201
    assert body["metadata"]["url"] == "/links"
    data = body["data"]
    assert set(data) == LINK_KEYS
    assert re.fullmatch(r"[0-9a-z]{8,}", data["id"]), data["id"]
    assert data["id"] != creator.link_id
    assert data["prompt"] == "Ask me anything!"
    assert data["paused"] is False
    created = utc_instant(data["created_at"])
    assert before - timedelta(seconds=1) <= created <= after + timedelta(seconds=1)
    assert shown(api, creator, data["id"]) == data


def test_prompt_defaults_when_left_out(api: httpx.Client, creator: Creator) -> None:
    assert new_link(api, creator)["prompt"] == DEFAULT_PROMPT


def test_prompt_is_trimmed_and_composed(api: httpx.Client, creator: Creator) -> None:
    made = new_link(api, creator, "  Cafe\u0301 questions?\n")

    assert made["prompt"] == "Caf\u00e9 questions?"
    assert shown(api, creator, made["id"])["prompt"] == "Caf\u00e9 questions?"


@pytest.mark.parametrize(
    "prompt",
    [
        pytest.param("x", id="1-char"),
        pytest.param("y" * 300, id="300-chars"),
        pytest.param("\U0001f600" * 300, id="300-emoji"),
        pytest.param(" " * 5 + "z" * 300 + "\t", id="300-after-trim"),
        pytest.param("e\u0301" * 300, id="300-after-nfc"),
        pytest.param('<b>Ask</b> & "tell"', id="html-kept-verbatim"),
    ],
)
def test_prompt_within_bounds_is_accepted(api: httpx.Client, creator: Creator, prompt: str) -> None:
    made = create(api, creator, {"prompt": prompt})

    assert made.status_code == 201, made.text
    assert 1 <= len(made.json()["data"]["prompt"]) <= 300


BAD_PROMPTS = [
    pytest.param("", "too_short", id="empty"),
    pytest.param("x" * 301, "too_long", id="301-chars"),
    pytest.param("e\u0301" * 301, "too_long", id="301-after-nfc"),
    pytest.param("   ", "blank", id="spaces"),
    pytest.param(" \t\n\u3000 ", "blank", id="mixed-whitespace"),
    pytest.param("ask\x00me", "control_character", id="nul"),
]


@pytest.mark.parametrize(("prompt", "problem"), BAD_PROMPTS)
def test_prompt_out_of_bounds_is_refused(
    api: httpx.Client, creator: Creator, prompt: str, problem: str
) -> None:
    body = assert_error(create(api, creator, {"prompt": prompt}), 400, "validation_failed")

    assert problems(body) == [("prompt", problem)]
    assert [link["id"] for link in listed(api, creator)] == [creator.link_id]


@pytest.mark.parametrize(
    "prompt",
    [
        pytest.param(42, id="number"),
        pytest.param(None, id="null"),
        pytest.param(["ask"], id="list"),
        pytest.param({"text": "ask"}, id="object"),
        pytest.param(True, id="bool"),
    ],
)
def test_prompt_of_the_wrong_type_is_refused(
    api: httpx.Client, creator: Creator, prompt: Any
) -> None:
    body = assert_error(create(api, creator, {"prompt": prompt}), 400, "validation_failed")

    assert problems(body) == [("prompt", "wrong_type")]
    assert len(listed(api, creator)) == 1


@pytest.mark.parametrize(
    ("raw", "content_type", "status"),
    [
        pytest.param(b"", "application/json", 400, id="missing-body"),
        pytest.param(b'["ask"]', "application/json", 400, id="list-body"),
        pytest.param(b'{"prompt": "ask"', "application/json", 400, id="malformed"),
        pytest.param(b'{"prompt": "ask"}', "text/plain", 415, id="not-json"),
    ],
)
def test_body_that_is_not_a_json_object_is_refused(
    api: httpx.Client, creator: Creator, raw: bytes, content_type: str, status: int
) -> None:
    response = api.post(
        "/links", content=raw, headers={"Content-Type": content_type, **creator.headers}
    )

    body = assert_error(response, status)
    if status == 400:
        assert body["error"]["fields"], "a validation error names what is at fault"
    assert len(listed(api, creator)) == 1


def test_creating_needs_a_valid_credential(api: httpx.Client, creator: Creator) -> None:
    assert_error(api.post("/links", json={"prompt": "hi"}), 401, "unauthorized")
    assert_error(api.post("/links", json={"prompt": "hi"}, headers=BAD_KEY), 401, "unauthorized")
    assert len(listed(api, creator)) == 1


def test_a_creator_owns_at_most_a_hundred_links(api: httpx.Client, creator: Creator) -> None:
    for number in range(2, MAX_LINKS + 1):
        new_link(api, creator, f"link {number}")

    assert_error(create(api, creator, {"prompt": "one too many"}), 409, "too_many_links")
    assert len(listed(api, creator)) == MAX_LINKS

    deleted = api.delete(f"/links/{creator.link_id}", headers=creator.headers)
    assert deleted.status_code == 200, deleted.text
    new_link(api, creator, "room again")


# Lower-case letters and digits, none of 0 o 1 l i (a person types ids back from a story).
NEW_LINK_ID = re.compile(r"[2-9a-hjkmnp-z]{11}")


def test_new_link_ids_have_no_look_alike_characters(api: httpx.Client, creator: Creator) -> None:
    # 20 ids of 11 characters: an alphabet that still held the five look-alikes would put
    # none of them in 220 characters with a chance of (31/36)**220, about 1 in 10**14.
    ids = [new_link(api, creator)["id"] for _ in range(20)]
    assert [link_id for link_id in ids if not NEW_LINK_ID.fullmatch(link_id)] == []
    assert len(set(ids)) == len(ids)


def test_a_link_id_made_before_look_alikes_were_left_out_keeps_working(
    server: Server, api: httpx.Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Links made earlier have 10 characters of [0-9a-z], look-alikes included."""
    old_id = "o0l1i" + "".join(
        secrets.choice("0123456789abcdefghijklmnopqrstuvwxyz") for _ in "12345"
    )
    monkeypatch.setattr(links_repository, "new_link_id", lambda: old_id)
    creator = make_creator_in(server.database_url)
    assert creator.link_id == old_id

    message_id = post_message(api, old_id, "still here?")
    assert [item["id"] for item in inbox_items(api, creator)] == [message_id]
    public = api.get(f"/links/{old_id}/public")
    assert public.status_code == 200, public.text
    assert public.json()["data"]["id"] == old_id
    page = api.get(f"/{old_id}", headers={"Accept": "text/html"})
    assert page.status_code == 200
    assert 'name="message_content"' in page.text


# --- GET /links and GET /links/{link_id} -------------------------------------------------------


def test_listing_holds_the_callers_links_oldest_first(
    api: httpx.Client, make_creator: Callable[[], Creator]
) -> None:
    mine, theirs = make_creator(), make_creator()
    second = new_link(api, mine, "second")
    third = new_link(api, mine, "third")
    new_link(api, theirs, "not mine")

    response = api.get("/links", headers=mine.headers)

    assert response.status_code == 200, response.text
    assert set(response.json()["data"]) == {"items"}
    items = response.json()["data"]["items"]
    assert [item["id"] for item in items] == [mine.link_id, second["id"], third["id"]]
    assert items[0] == {**items[0], "prompt": DEFAULT_PROMPT, "paused": False}
    assert items[1:] == [second, third]
    assert all(set(item) == LINK_KEYS for item in items)


def test_listing_needs_a_valid_credential(api: httpx.Client) -> None:
    assert_error(api.get("/links"), 401, "unauthorized")
    assert_error(api.get("/links", headers=BAD_KEY), 401, "unauthorized")


def test_the_creator_sees_one_link(api: httpx.Client, creator: Creator) -> None:
    response = api.get(f"/links/{creator.link_id}", headers=creator.headers)

    assert response.status_code == 200, response.text
    data = response.json()["data"]
    assert set(data) == LINK_KEYS
    assert data["id"] == creator.link_id
    assert data["prompt"] == DEFAULT_PROMPT
    assert data["paused"] is False
    utc_instant(data["created_at"])


# --- who may act on a link ------------------------------------------------------------------

CREATOR_OPERATIONS: dict[str, Callable[[httpx.Client, str, dict[str, str]], httpx.Response]] = {
    "get": lambda api, link_id, h: api.get(f"/links/{link_id}", headers=h),
    "patch": lambda api, link_id, h: api.patch(
        f"/links/{link_id}", json={"paused": True}, headers=h
    ),
    "delete": lambda api, link_id, h: api.delete(f"/links/{link_id}", headers=h),
}


@pytest.mark.parametrize("operation", CREATOR_OPERATIONS)
def test_another_creators_link_is_forbidden(
    api: httpx.Client, make_creator: Callable[[], Creator], operation: str
) -> None:
    owner, stranger = make_creator(), make_creator()
    before = shown(api, owner, owner.link_id)

    assert_error(
        CREATOR_OPERATIONS[operation](api, owner.link_id, stranger.headers), 403, "forbidden"
    )

    assert shown(api, owner, owner.link_id) == before


@pytest.mark.parametrize("operation", CREATOR_OPERATIONS)
def test_an_unknown_link_is_not_found(api: httpx.Client, creator: Creator, operation: str) -> None:
    assert_error(CREATOR_OPERATIONS[operation](api, UNKNOWN_LINK, creator.headers), 404)


@pytest.mark.parametrize("operation", CREATOR_OPERATIONS)
@pytest.mark.parametrize(
    "headers", [pytest.param({}, id="no-key"), pytest.param(BAD_KEY, id="bad-key")]
)
def test_acting_on_a_link_needs_a_valid_credential(
    api: httpx.Client, creator: Creator, operation: str, headers: dict[str, str]
) -> None:
    before = shown(api, creator, creator.link_id)

    assert_error(CREATOR_OPERATIONS[operation](api, creator.link_id, headers), 401, "unauthorized")

    assert shown(api, creator, creator.link_id) == before


@pytest.mark.parametrize("operation", CREATOR_OPERATIONS)
def test_a_malformed_link_id_is_a_bad_request(
    api: httpx.Client, creator: Creator, operation: str
) -> None:
    body = assert_error(CREATOR_OPERATIONS[operation](api, "bad!id", creator.headers), 400)

    assert [field for field, _ in problems(body)] == ["link_id"]


# --- GET /links/{link_id}/public --------------------------------------------------------------


def test_public_view_shows_the_prompt_and_creator_but_no_email(
    api: httpx.Client, creator: Creator
) -> None:
    profile = api.get("/user", headers=creator.headers).json()["data"]
    link = new_link(api, creator, "Tell me a secret")

    response = api.get(f"/links/{link['id']}/public")

    assert response.status_code == 200, response.text
    body = response.json()
    assert set(body) == ENVELOPE_KEYS
    data = body["data"]
    assert set(data) == PUBLIC_KEYS
    assert data == {
        "id": link["id"],
        "prompt": "Tell me a secret",
        "paused": False,
        # Issue 31: a neutral name until the creator chooses one, never the e-mail's name.
        "creator_name": "The creator",
        "creator_picture_url": profile["profile_url"],
        "hide_dates": False,
        "creator_bio": None,
        "creator_named": False,
        "creator_avatar_url": "/avatars/neutral.svg",  # the same for every unnamed creator
        "senders": "anyone",
        "language": "en",  # the creator's: neither the link nor the account chose one
        "card_theme": "violet",
    }
    assert profile["email"] not in response.text
    assert creator.user_id not in response.text


def test_public_view_answers_anyone_alike(
    api: httpx.Client, make_creator: Callable[[], Creator]
) -> None:
    owner, stranger = make_creator(), make_creator()
    path = f"/links/{owner.link_id}/public"

    views = [api.get(path, headers=h).json()["data"] for h in ({}, owner.headers, stranger.headers)]

    assert views[0] == views[1] == views[2]


def test_public_view_of_an_unknown_link_is_not_found(api: httpx.Client) -> None:
    assert_error(api.get(f"/links/{UNKNOWN_LINK}/public"), 404, "not_found")
    body = assert_error(api.get("/links/bad!id/public"), 400)
    assert [field for field, _ in problems(body)] == ["link_id"]


# --- PATCH /links/{link_id} ------------------------------------------------------------------


def test_pausing_is_visible_everywhere_and_refuses_messages(
    api: httpx.Client, creator: Creator
) -> None:
    paused = change(api, creator, creator.link_id, {"paused": True})

    assert paused.status_code == 200, paused.text
    data = paused.json()["data"]
    assert set(data) == LINK_KEYS
    assert data["paused"] is True
    assert data["prompt"] == DEFAULT_PROMPT
    assert shown(api, creator, creator.link_id) == data
    assert listed(api, creator) == [data]
    assert api.get(f"/links/{creator.link_id}/public").json()["data"]["paused"] is True

    refused = api.post(f"/message/{creator.link_id}", json={"message_content": "hello?"})
    assert 400 <= refused.status_code < 500, refused.text
    assert refused.status_code != 404, "a paused link is not an unknown one"
    assert_error(refused, refused.status_code)
    assert first_page(api, f"/message/{creator.link_id}", creator.headers) == []

    resumed = change(api, creator, creator.link_id, {"paused": False})
    assert resumed.status_code == 200, resumed.text
    assert resumed.json()["data"] == {**data, "paused": False}
    post_message(api, creator.link_id, "welcome back")


def test_patching_one_setting_keeps_the_other(api: httpx.Client, creator: Creator) -> None:
    link = new_link(api, creator, "first prompt")

    paused = change(api, creator, link["id"], {"paused": True}).json()["data"]
    assert paused == {**link, "paused": True}

    renamed = change(api, creator, link["id"], {"prompt": "  second prompt "})
    assert renamed.status_code == 200, renamed.text
    assert renamed.json()["data"] == {**link, "prompt": "second prompt", "paused": True}

    both = change(api, creator, link["id"], {"prompt": "third", "paused": False})
    assert both.json()["data"] == {**link, "prompt": "third", "paused": False}
    assert shown(api, creator, link["id"]) == both.json()["data"]


def test_patch_ignores_unknown_fields(api: httpx.Client, creator: Creator) -> None:
    response = change(api, creator, creator.link_id, {"paused": True, "colour": "red"})

    assert response.status_code == 200, response.text
    assert set(response.json()["data"]) == LINK_KEYS
    assert response.json()["data"]["paused"] is True


@pytest.mark.parametrize(
    ("payload", "fields"),
    [
        pytest.param({}, [("body", "missing")], id="nothing-to-change"),
        pytest.param({"colour": "red"}, [("body", "missing")], id="only-unknown-fields"),
        pytest.param({"prompt": None}, [("prompt", "wrong_type")], id="null-prompt"),
        pytest.param({"prompt": 42}, [("prompt", "wrong_type")], id="number-prompt"),
        pytest.param({"paused": None}, [("paused", "wrong_type")], id="null-paused"),
        pytest.param({"paused": "yes"}, [("paused", "wrong_type")], id="word-paused"),
        pytest.param({"paused": [True]}, [("paused", "wrong_type")], id="list-paused"),
        pytest.param({"paused": True, "prompt": ""}, [("prompt", "too_short")], id="empty"),
        pytest.param({"prompt": "x" * 301}, [("prompt", "too_long")], id="301-chars"),
        pytest.param({"prompt": " \n "}, [("prompt", "blank")], id="whitespace"),
    ],
)
def test_invalid_patch_is_refused_and_changes_nothing(
    api: httpx.Client, creator: Creator, payload: dict[str, Any], fields: list[tuple[str, str]]
) -> None:
    before = shown(api, creator, creator.link_id)

    body = assert_error(change(api, creator, creator.link_id, payload), 400, "validation_failed")

    assert problems(body) == fields
    assert shown(api, creator, creator.link_id) == before


@pytest.mark.parametrize(
    ("raw", "content_type", "status"),
    [
        pytest.param(b"", "application/json", 400, id="missing-body"),
        pytest.param(b"true", "application/json", 400, id="not-an-object"),
        pytest.param(b'{"paused": tru}', "application/json", 400, id="malformed"),
        pytest.param(b'{"paused": true}', "text/plain", 415, id="not-json"),
    ],
)
def test_patch_body_that_is_not_a_json_object_is_refused(
    api: httpx.Client, creator: Creator, raw: bytes, content_type: str, status: int
) -> None:
    before = shown(api, creator, creator.link_id)

    response = api.patch(
        f"/links/{creator.link_id}",
        content=raw,
        headers={"Content-Type": content_type, **creator.headers},
    )

    body = assert_error(response, status)
    if status == 400:
        assert body["error"]["fields"], "a validation error names what is at fault"
    assert shown(api, creator, creator.link_id) == before


# --- several links, each with its own messages ----------------------------------------------------


def test_each_link_receives_its_own_messages(api: httpx.Client, creator: Creator) -> None:
    second = new_link(api, creator, "second")["id"]
    to_first = post_message(api, creator.link_id, "to the first")
    to_second = post_message(api, second, "to the second")

    first_inbox = first_page(api, f"/message/{creator.link_id}", creator.headers)
    second_inbox = first_page(api, f"/message/{second}", creator.headers)

    assert [m["id"] for m in first_inbox] == [to_first]
    assert [m["id"] for m in second_inbox] == [to_second]
    replied = api.post(
        f"/message/{second}/{to_second}", json={"message_content": "hi"}, headers=creator.headers
    )
    assert replied.status_code == 201, replied.text
    crossed = api.post(
        f"/message/{second}/{to_first}", json={"message_content": "hi"}, headers=creator.headers
    )
    assert_error(crossed, 404)


def test_pausing_one_link_leaves_the_others_open(api: httpx.Client, creator: Creator) -> None:
    second = new_link(api, creator, "second")["id"]

    assert change(api, creator, second, {"paused": True}).status_code == 200

    post_message(api, creator.link_id, "still open")
    refused = api.post(f"/message/{second}", json={"message_content": "closed"})
    assert 400 <= refused.status_code < 500, refused.text


# --- DELETE /links/{link_id} -----------------------------------------------------------------


def test_deleting_a_link_removes_it_and_everything_under_it(
    api: httpx.Client, server: Server, creator: Creator
) -> None:
    doomed = new_link(api, creator, "doomed")["id"]
    kept_message = post_message(api, creator.link_id, "kept")
    doomed_messages = [post_message(api, doomed, f"doomed {n}") for n in range(3)]
    for message_id in doomed_messages[:2]:
        replied = api.post(
            f"/message/{doomed}/{message_id}",
            json={"message_content": "answer"},
            headers=creator.headers,
        )
        assert replied.status_code == 201, replied.text

    deleted = api.delete(f"/links/{doomed}", headers=creator.headers)

    assert deleted.status_code == 200, deleted.text
    assert set(deleted.json()) == ENVELOPE_KEYS
    assert deleted.json()["data"] is None
    # The id is tombstoned: never handed out again, and "no longer available" to everyone.
    assert_error(api.get(f"/links/{doomed}", headers=creator.headers), 404, "link_gone")
    assert_error(api.get(f"/links/{doomed}/public"), 404, "link_gone")
    assert_error(api.get(f"/message/{doomed}", headers=creator.headers), 404, "link_gone")
    assert_error(
        api.get(f"/message/{doomed}/{doomed_messages[0]}", headers=creator.headers),
        404,
        "link_gone",
    )
    assert_error(api.post(f"/message/{doomed}", json={"message_content": "anyone?"}), 404)
    assert_error(api.delete(f"/links/{doomed}", headers=creator.headers), 404, "link_gone")
    page = api.get(f"/{doomed}", headers={"Accept": "text/html"})
    assert page.status_code == 410  # the send page says so too
    assert [link["id"] for link in listed(api, creator)] == [creator.link_id]
    assert [m["id"] for m in first_page(api, f"/message/{creator.link_id}", creator.headers)] == [
        kept_message
    ]
    # The cascade itself: no orphan rows are left behind in the database.
    count = "SELECT COUNT(*) AS n FROM {} WHERE {} = $1"
    assert rows_left(server.database_url, count.format("messages", "link_id"), doomed) == 0
    for message_id in doomed_messages:
        assert (
            rows_left(server.database_url, count.format("replies", "message_id"), message_id) == 0
        )


def test_deleting_the_default_link_makes_the_next_oldest_the_default(
    api: httpx.Client, creator: Creator
) -> None:
    second = new_link(api, creator, "second")["id"]
    third = new_link(api, creator, "third")["id"]
    assert profile_link(api, creator) == creator.link_id

    assert api.delete(f"/links/{creator.link_id}", headers=creator.headers).status_code == 200
    assert profile_link(api, creator) == second
    assert [link["id"] for link in listed(api, creator)] == [second, third]

    assert api.delete(f"/links/{second}", headers=creator.headers).status_code == 200
    assert api.delete(f"/links/{third}", headers=creator.headers).status_code == 200
    assert profile_link(api, creator) is None
    assert listed(api, creator) == []

    fresh = new_link(api, creator, "fresh start")["id"]
    assert profile_link(api, creator) == fresh


def test_deleting_leaves_other_creators_alone(
    api: httpx.Client, make_creator: Callable[[], Creator]
) -> None:
    mine, theirs = make_creator(), make_creator()
    their_message = post_message(api, theirs.link_id, "for them")

    assert api.delete(f"/links/{mine.link_id}", headers=mine.headers).status_code == 200

    assert [link["id"] for link in listed(api, theirs)] == [theirs.link_id]
    inbox = first_page(api, f"/message/{theirs.link_id}", theirs.headers)
    assert [m["id"] for m in inbox] == [their_message]


# --- the OpenAPI document ---------------------------------------------------------------------


def test_openapi_documents_the_link_operations(api: httpx.Client) -> None:
    doc = api.get("/openapi.json").json()
    paths = doc["paths"]

    assert {"get", "post"} <= set(paths["/links"])
    assert {"get", "patch", "delete"} <= set(paths["/links/{link_id}"])
    assert "get" in set(paths["/links/{link_id}/public"])
    for path, method in [
        ("/links", "post"),
        ("/links", "get"),
        ("/links/{link_id}", "get"),
        ("/links/{link_id}", "patch"),
        ("/links/{link_id}", "delete"),
    ]:
        security = paths[path][method].get("security")
        assert security, f"{method.upper()} {path} documents no credential"
        assert {} not in security, f"{method.upper()} {path} documents the credential as optional"
    assert not paths["/links/{link_id}/public"]["get"].get("security")
    assert "201" in paths["/links"]["post"]["responses"]
    for status in ("401", "403", "404"):
        assert status in paths["/links/{link_id}"]["patch"]["responses"]
