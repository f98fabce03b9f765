"""No shared cache may keep an answer for someone else: every JSON envelope names its
caller's address (metadata.ip), and a creator's answers hold their inbox."""

from __future__ import annotations

import httpx

from tests.actions import post_message
from tests.conftest import Creator


def assert_private(response: httpx.Response) -> None:
    directives = {d.strip() for d in response.headers.get("cache-control", "").split(",")}
    assert {"private", "no-store"} <= directives, dict(response.headers)
    vary = {v.strip().lower() for v in response.headers.get("vary", "").split(",")}
    assert {"authorization", "x-api-key", "cookie"} <= vary, dict(response.headers)


def test_a_creators_inbox_is_private_and_never_stored(api: httpx.Client, creator: Creator) -> None:
    post_message(api, creator.link_id, "for your eyes only")
    for auth in (creator.headers, {"Authorization": f"Bearer {creator.api_key}"}):
        inbox = api.get(f"/message/{creator.link_id}", headers=auth)
        assert inbox.status_code == 200
        assert_private(inbox)


def test_anonymous_answers_and_errors_are_private_too(api: httpx.Client, creator: Creator) -> None:
    posted = api.post(f"/message/{creator.link_id}", json={"message_content": "hi"})
    assert posted.status_code == 201
    assert_private(posted)  # it names the sender's address
    missing = api.get("/message/no-such-link")
    assert missing.status_code == 404
    assert_private(missing)
    refused = api.get("/user")  # no credential: a 401 envelope
    assert refused.status_code == 401
    assert_private(refused)
