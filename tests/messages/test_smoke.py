from __future__ import annotations

import httpx

from tests.conftest import Creator


def test_post_then_creator_sees_it(api: httpx.Client, creator: Creator) -> None:
    sent = api.post(f"/message/{creator.link_id}", json={"message_content": "hi"})
    assert sent.status_code == 201, sent.text
    inbox = api.get(f"/message/{creator.link_id}", headers=creator.headers).json()
    assert [m["id"] for m in inbox["data"]["items"]] == [sent.json()["data"]["id"]]
