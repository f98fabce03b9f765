"""What a creator's like costs the database, counted by the server itself
(``anonbox_db_queries``: every statement or transaction it asks for).

Once the credential is known (``identity.credential_cache``), a like is one query: the
statement checks the link's owner itself. Before, it also looked the credential and the
link up: three. The server's own timers (chores, the SQLite outbox tail) query now and
then meanwhile, hence some slack. (A reply is one query too, but its event wakes the
outbox relay, whose queries would count here as well.)
"""

from __future__ import annotations

import httpx

from tests.actions import post_message
from tests.conftest import Creator
from tests.support.metrics import scrape, value

ROUNDS = 30
SLACK = 20  # the server's own timers, and a credential looked up again when it expires


def queries(api: httpx.Client) -> float:
    return value(scrape(api), "anonbox_db_queries")


def test_a_like_costs_one_query(api: httpx.Client, creator: Creator) -> None:
    message_id = post_message(api, creator.link_id)
    path = f"/message/{creator.link_id}/{message_id}/like"
    assert api.put(path, headers=creator.headers).status_code == 200  # the credential, proven
    before = queries(api)

    for _ in range(ROUNDS):
        assert api.put(path, headers=creator.headers).status_code == 200

    assert queries(api) - before <= ROUNDS + SLACK
