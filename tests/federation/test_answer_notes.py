"""An answer's Note points at the answer's own page (issue 41, item 1): its ``url`` is
``/{link_id}/a/{answer_id}`` and its card goes by the answer id (a message id tells its
send time), in what a follower's server receives and in what the outbox shows. On both
databases (the ``federating`` server)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.actions import answer_path, post_message, post_reply
from tests.conftest import Creator
from tests.federation.conftest import AP, open_to_follows, wait_for
from tests.federation.standin import Remote, follow_of, post, serving, signed
from tests.server import Server


@pytest.fixture(scope="module")
def remote() -> Iterator[Remote]:
    with serving() as state:
        yield state


def test_a_note_links_the_answer_page_and_its_card_by_answer_id(
    federating: Server, fed_api: httpx.Client, fed_creator: Creator, remote: Remote
) -> None:
    api, creator = fed_api, fed_creator
    actor_url, path = open_to_follows(federating, api, creator)
    follow = follow_of(remote, actor_url)
    headers = signed(federating, path, follow, key=remote.key, key_id=remote.key_id)
    assert post(api, path, follow, headers).status_code == 202
    message_id = post_message(api, creator.link_id, "Tea or coffee?")
    post_reply(api, creator, message_id, "Genmaicha, always")
    page = answer_path(api, creator.link_id, message_id)
    site = actor_url.removesuffix(f"/ap/links/{creator.link_id}")

    def delivered() -> list[dict[str, Any]]:
        mine = actor_url.encode()
        return [
            json.loads(body)
            for _, body in remote.received
            if b"Genmaicha, always" in body and b'"Create"' in body and mine in body
        ]

    wait_for(delivered)
    outbox = api.get(f"{actor_url}/outbox", headers=AP).json()
    [listed] = api.get(outbox["first"], headers=AP).json()["orderedItems"]  # its newest page
    for create in (delivered()[0], listed):
        note = create["object"]
        assert note["url"] == f"{site}{page}"
        [card] = note["attachment"]
        assert card["url"] == f"{site}{page}/card.png"
        assert message_id not in json.dumps(note)
        # The card it names is there.
        assert api.get(f"{page}/card.png").status_code == 200
