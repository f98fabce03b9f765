"""A link under a flood stays open to people: past the link's (or the service's) rate a
post needs a proof of work (ALTCHA), instead of every sender being refused.

The flood comes from many addresses through a trusted proxy, each a sender of its own,
so no per-sender limit is what stops it. Each test runs on SQLite and on PostgreSQL.
"""

from __future__ import annotations

import base64
import datetime
import hashlib
import hmac
import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from altcha.v1 import Challenge, ChallengeOptions, create_challenge, solve_challenge

from anonbox.core.settings import DEVELOPMENT_SECRET
from tests.actions import assert_error, inbox_items
from tests.conftest import Creator, ModuleDatabase, make_creator_in
from tests.safety.conftest import new_sender
from tests.server import Server
from tests.support.deployment import TRUST_LOOPBACK
from tests.support.http import loopback_client
from tests.support.racing import race, statuses
from tests.support.servers import own_server
from tests.support.services import REDIS_URL, require_redis

LINK_RATE = 4  # posts a minute before a link is under a flood
LEAST_NUMBERS = 2000  # the least difficulty, small so that tests solve fast
SERVICE_RATE = 6
RACERS = 15  # posts fired at once with one solution


flooded = own_server(
    "flooded",
    {
        **TRUST_LOOPBACK,
        "ANONBOX_LIMIT_LINK": f"{LINK_RATE}/60",
        "ANONBOX_PROOF_OF_WORK_NUMBERS": str(LEAST_NUMBERS),
    },
)
service_flooded = own_server(
    "service_flooded",
    {
        **TRUST_LOOPBACK,
        "ANONBOX_LIMIT_SERVICE": f"{SERVICE_RATE}/60",
        "ANONBOX_PROOF_OF_WORK_NUMBERS": str(LEAST_NUMBERS),
    },
)


@pytest.fixture(scope="module")
def flooded_pair(
    module_database: ModuleDatabase,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[Server, Server]]:
    """Two instances of the flooded configuration sharing one database and one Redis."""
    require_redis()
    env = {
        **TRUST_LOOPBACK,
        "ANONBOX_LIMIT_LINK": f"{LINK_RATE}/60",
        "ANONBOX_PROOF_OF_WORK_NUMBERS": str(LEAST_NUMBERS),
        "ANONBOX_REDIS_URL": REDIS_URL,
        "ANONBOX_RATE_LIMIT_FAIL": "closed",
    }
    shared = module_database.url
    logs = tmp_path_factory.mktemp("flood-pair-logs")
    pair = tuple(
        Server(shared, logs / f"{name}-{module_database.backend}.log", env=env)
        for name in ("a", "b")
    )
    try:
        for server in pair:  # one after the other: the first migrates the shared database
            server.start(60)
        yield pair[0], pair[1]
    finally:
        for server in pair:
            server.stop()


def post(api: httpx.Client, link_id: str, text: str, *, proof: str | None = None) -> httpx.Response:
    headers = {"X-Forwarded-For": new_sender().address}
    if proof is not None:
        headers["X-Altcha"] = proof
    return api.post(f"/message/{link_id}", json={"message_content": text}, headers=headers)


def flood(api: httpx.Client, link_id: str, posts: int) -> None:
    for n in range(posts):
        assert post(api, link_id, f"flood {n}").status_code in {201, 429}


def challenge_of(response: httpx.Response) -> dict[str, Any]:
    sender = response.request.headers["x-forwarded-for"]
    body = assert_error(response, 429, "proof_of_work_required", ip=sender)
    challenge: dict[str, Any] = body["error"]["challenge"]
    assert set(challenge) == {"algorithm", "challenge", "maxnumber", "salt", "signature"}
    assert challenge["algorithm"] == "SHA-256"
    return challenge


def solve(challenge: dict[str, Any]) -> str:
    """What any ALTCHA solver does: search the numbers, and send the solution as base64."""
    solution = solve_challenge(
        Challenge(
            challenge["algorithm"],
            challenge["challenge"],
            challenge["maxnumber"],
            challenge["salt"],
            challenge["signature"],
        )
    )
    assert solution is not None
    payload = {key: challenge[key] for key in ("algorithm", "challenge", "salt", "signature")} | {
        "number": solution.number
    }
    return base64.b64encode(json.dumps(payload).encode()).decode()


def texts(api: httpx.Client, creator: Creator) -> list[str]:
    return [item["message_content"] for item in inbox_items(api, creator)]


def test_normal_traffic_never_sees_a_challenge_and_a_flood_asks_for_one(
    flooded: Server,
) -> None:
    creator = make_creator_in(flooded.database_url)
    with loopback_client(base_url=flooded.url, timeout=30) as api:
        for n in range(LINK_RATE):
            sent = post(api, creator.link_id, f"person {n}")
            assert sent.status_code == 201, sent.text
            assert "challenge" not in sent.text
        asked = post(api, creator.link_id, "one too many")
        challenge = challenge_of(asked)
        assert challenge["maxnumber"] == LEAST_NUMBERS
        assert "retry-after" not in asked.headers  # prove now, not later
        assert "one too many" not in texts(api, creator)

        proved = post(api, creator.link_id, "a person, proved", proof=solve(challenge))
        assert proved.status_code == 201, proved.text
        assert texts(api, creator)[0] == "a person, proved"
        # Other links are not under this link's flood.
        other = make_creator_in(flooded.database_url)
        assert post(api, other.link_id, "elsewhere").status_code == 201


def test_a_solution_is_taken_once_and_only_by_its_own_link(flooded: Server) -> None:
    first, second = make_creator_in(flooded.database_url), make_creator_in(flooded.database_url)
    with loopback_client(base_url=flooded.url, timeout=30) as api:
        flood(api, first.link_id, LINK_RATE)
        flood(api, second.link_id, LINK_RATE)
        proof = solve(challenge_of(post(api, first.link_id, "asking")))

        challenge_of(post(api, second.link_id, "a stolen proof", proof=proof))
        assert post(api, first.link_id, "proved", proof=proof).status_code == 201
        challenge_of(post(api, first.link_id, "replayed", proof=proof))
        assert "replayed" not in texts(api, first)
        assert "a stolen proof" not in texts(api, second)


def _one_proof_raced(servers: tuple[Server, ...]) -> None:
    """Flood a link, solve its challenge once, then send that one solution with RACERS
    posts at once, from as many senders, spread over ``servers``: one post lands, every
    other is asked for a proof again."""
    creator = make_creator_in(servers[0].database_url)
    clients = [loopback_client(base_url=server.url, timeout=30) for server in servers]
    try:
        api = clients[0]
        flood(api, creator.link_id, LINK_RATE)
        proof = solve(challenge_of(post(api, creator.link_id, "asking")))
        before = texts(api, creator)

        answers = race(
            RACERS,
            lambda i: post(clients[i % len(clients)], creator.link_id, f"proved {i}", proof=proof),
        )

        assert statuses(answers) == {201: 1, 429: RACERS - 1}, [a.text for a in answers]
        for refused in (a for a in answers if a.status_code == 429):
            challenge_of(refused)
        [landed] = [a.json()["data"]["message_content"] for a in answers if a.status_code == 201]
        assert texts(api, creator) == [landed, *before]
    finally:
        for opened in clients:
            opened.close()


@pytest.mark.parametrize("round_", range(3))
def test_one_solution_sent_with_many_posts_at_once_lets_one_in(
    flooded: Server, round_: int
) -> None:
    _one_proof_raced((flooded,))


@pytest.mark.parametrize("round_", range(3))
def test_one_solution_sent_at_once_through_two_instances_lets_one_in(
    flooded_pair: tuple[Server, Server], round_: int
) -> None:
    """The spent solutions are in the shared Redis: the other instance knows at once."""
    _one_proof_raced(flooded_pair)


def _encoded(payload: object) -> str:
    return base64.b64encode(json.dumps(payload).encode()).decode()


def test_forged_expired_and_malformed_proofs_are_refused_never_a_500(flooded: Server) -> None:
    creator = make_creator_in(flooded.database_url)
    with loopback_client(base_url=flooded.url, timeout=30) as api:
        flood(api, creator.link_id, LINK_RATE)
        challenge = challenge_of(post(api, creator.link_id, "asking"))
        good = json.loads(base64.b64decode(solve(challenge)))

        # A challenge signed with the server's key but already expired (the key is the
        # development secret's derivation, which an attacker of a real service lacks).
        key = hmac.new(DEVELOPMENT_SECRET.encode(), b"altcha-challenges", hashlib.sha256)
        expired = create_challenge(
            ChallengeOptions(
                max_number=10,
                hmac_key=key.hexdigest(),
                expires=datetime.datetime.now(datetime.UTC) - datetime.timedelta(seconds=1),
                params={"link": creator.link_id},
            )
        )
        expired_solution = solve_challenge(expired)
        assert expired_solution is not None
        self_made = create_challenge(
            ChallengeOptions(max_number=10, hmac_key="not the server's", params={"link": "x"})
        )
        forged = [
            "",
            "not base64 at all!",
            base64.b64encode(b"not json").decode(),
            _encoded([1, 2, 3]),
            _encoded({**good, "number": good["number"] + 1}),
            _encoded({**good, "number": str(good["number"])}),
            _encoded({**good, "salt": 5}),
            _encoded({**good, "salt": good["salt"] + "link=other&"}),
            _encoded({**good, "algorithm": "SHA-1"}),
            _encoded({**good, "signature": "0" * 64}),
            _encoded({k: v for k, v in good.items() if k != "signature"}),
            _encoded({**good, "number": 10**400}),
            _encoded(
                {
                    "algorithm": "SHA-256",
                    "challenge": expired.challenge,
                    "number": expired_solution.number,
                    "salt": expired.salt,
                    "signature": expired.signature,
                }
            ),
            _encoded(
                {
                    "algorithm": "SHA-256",
                    "challenge": self_made.challenge,
                    "number": solve_challenge(self_made).number,  # type: ignore[union-attr]
                    "salt": self_made.salt,
                    "signature": self_made.signature,
                }
            ),
            "A" * 2048,
        ]
        for proof in forged:
            challenge_of(post(api, creator.link_id, "forged", proof=proof))
        too_long = post(api, creator.link_id, "forged", proof="A" * 2049)
        assert_error(
            too_long, 400, "validation_failed", ip=too_long.request.headers["x-forwarded-for"]
        )
        assert "forged" not in texts(api, creator)
        # The untouched solution still works: none of the above spent it.
        assert post(api, creator.link_id, "real", proof=_encoded(good)).status_code == 201


def test_the_difficulty_rises_with_the_flood_and_stops_at_16_times(flooded: Server) -> None:
    creator = make_creator_in(flooded.database_url)
    with loopback_client(base_url=flooded.url, timeout=30) as api:
        flood(api, creator.link_id, LINK_RATE)
        numbers = [
            challenge_of(post(api, creator.link_id, f"refused {n}"))["maxnumber"]
            for n in range(LINK_RATE * 20)
        ]
    assert numbers == sorted(numbers)
    assert numbers[0] == LEAST_NUMBERS
    assert sorted(set(numbers)) == [LEAST_NUMBERS << d for d in range(5)]
    # Each rate's worth of refused posts in the last minute doubles the work.
    assert numbers[LINK_RATE - 1] == LEAST_NUMBERS << 1
    assert numbers[-1] == LEAST_NUMBERS << 4


def test_a_flood_of_the_whole_service_asks_every_link_for_a_proof(
    service_flooded: Server,
) -> None:
    creators = [make_creator_in(service_flooded.database_url) for _ in range(SERVICE_RATE + 1)]
    with loopback_client(base_url=service_flooded.url, timeout=30) as api:
        for creator in creators[:SERVICE_RATE]:
            assert post(api, creator.link_id, "one each").status_code == 201
        last = creators[-1]
        challenge = challenge_of(post(api, last.link_id, "a fresh link, a busy service"))
        assert post(api, last.link_id, "proved", proof=solve(challenge)).status_code == 201
        assert texts(api, last) == ["proved"]
