"""A 201 is a durable commit: SIGKILL the server mid-traffic and no acknowledged message is lost."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.actions import Poster, whole_inbox
from tests.conftest import make_creator_in
from tests.outbox.test_outbox import handed_over
from tests.server import Server
from tests.support.http import loopback_client

MESSAGES = 50
WRITERS = 5
BACKGROUND_WRITERS = 3
ACKS_BEFORE_KILL = 30  # background acknowledgements seen before the kill lands


def post_many(base_url: str, link_id: str, texts: list[str]) -> dict[str, str]:
    """Post each text; return {message id: text} for every 201."""
    acknowledged: dict[str, str] = {}
    with loopback_client(base_url=base_url, timeout=30) as client:
        for text in texts:
            response = client.post(f"/message/{link_id}", json={"message_content": text})
            if response.status_code == 201:
                acknowledged[response.json()["data"]["id"]] = text
    return acknowledged


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_no_acknowledged_message_is_lost_when_the_server_is_killed(
    backend: str, database_url_factory: Callable[[str], str], tmp_path: Path
) -> None:
    url = database_url_factory(backend)
    log = tmp_path / "server.log"
    first = Server(url, log).start()
    try:
        creator = make_creator_in(url)
        texts = [f"steady #{i}" for i in range(MESSAGES)]
        batches = [texts[i::WRITERS] for i in range(WRITERS)]
        with ThreadPoolExecutor(WRITERS) as pool:
            results = pool.map(lambda batch: post_many(first.url, creator.link_id, batch), batches)
        acknowledged: dict[str, str] = {}
        for result in results:
            acknowledged.update(result)
        assert len(acknowledged) == MESSAGES, f"only {len(acknowledged)} of {MESSAGES} got 201"

        progress = threading.Semaphore(0)
        posters = [
            Poster(first.url, creator.link_id, f"background {n}", progress)
            for n in range(BACKGROUND_WRITERS)
        ]
        for poster in posters:
            poster.start()
        for _ in range(ACKS_BEFORE_KILL):
            assert progress.acquire(timeout=30), "background posting stalled before the kill"
        first.kill()
        for poster in posters:
            poster.join(timeout=60)
            assert not poster.is_alive()
            assert poster.unexpected == [], poster.unexpected
            assert poster.ended_by, f"{poster.label} was not posting when the server died"
            acknowledged.update(poster.acknowledged)
    finally:
        first.stop()

    second = Server(url, log).start()
    try:
        inbox = whole_inbox(second.url, creator)
        # Every stored message was committed with its event, which the restarted relay
        # hands over (tests/outbox/test_outbox.py).
        events = handed_over(url, creator.link_id, len(inbox))
    finally:
        second.stop()
    assert sorted(e["message_id"] for e in events) == sorted(inbox)
    lost = sorted(set(acknowledged) - set(inbox))
    assert lost == [], f"{len(lost)} of {len(acknowledged)} acknowledged messages lost: {lost[:5]}"
    assert {i: inbox[i] for i in acknowledged} == acknowledged
