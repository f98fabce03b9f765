"""A link under a flood stays open to people.

Every anonymous post is counted against its link's rate (``limit_link``) and the
service's (``limit_service``). Within both, nothing more is asked. Past either, the link
is under a flood: a post must then carry a proof of work, and one without it is refused
with ``ProofOfWorkRequired`` (a 429 whose envelope carries the challenge). The proof is
ALTCHA's open protocol (version 1): find the number below ``maxnumber`` whose SHA-256 with
the salt is the challenge. The send page solves it in a Web Worker (``static/pow.js``);
an API client solves it with any ALTCHA solver and sends the solution, base64, in the
``X-Altcha`` header.

A challenge is signed with a key derived from the server secret, names its link, lasts
``CHALLENGE_SECONDS``, and its solution is taken once. Its difficulty follows the flood:
each time the posts refused in the last minute pass another multiple of the rate, the
numbers to search double, up to ``2 ** MAX_DOUBLINGS`` times the least
(``proof_of_work_numbers``). A person waits a fraction of a second; a flood pays for
every message.

The count of refused posts in the last hour is what the creator's dashboard shows. Only
counts are kept, per link, never who sent them.
"""

from __future__ import annotations

import base64
import binascii
import datetime
import hashlib
import hmac
import urllib.parse
from typing import Final

import msgspec
from altcha.v1 import ChallengeOptions, Payload, create_challenge, verify_solution

from anonbox.core.envelope import Challenge
from anonbox.core.errors import AnonboxError
from anonbox.core.ratelimit import Limit, RateLimiter
from anonbox.core.settings import Settings

CHALLENGE_SECONDS = 300
MAX_DOUBLINGS = 4
ALGORITHM: Final = "SHA-256"
_SERVICE = "*"  # the key of the service-wide counts
_MAX_PROOF_CHARACTERS = 2048


class _Solution(msgspec.Struct):
    algorithm: str
    challenge: str
    number: int
    salt: str
    signature: str


class ProofOfWorkRequired(AnonboxError):
    status_code = 429
    code = "proof_of_work_required"

    def __init__(self, challenge: Challenge) -> None:
        super().__init__(
            "This link is receiving a flood of messages: solve the challenge and send the "
            "solution in the X-Altcha header"
        )
        self.challenge = challenge


class FloodGuard:
    """The link's and the service's rates: past either (a "flood"), posts need a proof of work."""

    def __init__(self, settings: Settings, limiter: RateLimiter) -> None:
        self._limiter = limiter
        self._key = hmac.new(
            settings.secret_key.encode(), b"altcha-challenges", hashlib.sha256
        ).hexdigest()
        self._rates = (settings.limit_link, settings.limit_service)
        self._least_numbers = settings.proof_of_work_numbers
        self._spent = Limit("pow_spent", 1, CHALLENGE_SECONDS)
        # Refused posts: in the last minute (for the difficulty, enough to reach its top)
        # and in the last hour (for the creator).
        link, service = self._rates
        self._recent = Limit("flood_recent", link.max_requests << MAX_DOUBLINGS, 60)
        self._recent_service = Limit("flood_recent_all", service.max_requests << MAX_DOUBLINGS, 60)
        self._refused = Limit("flood_refused", 100_000, 3600)

    async def admit(self, link_id: str, proof: str | None) -> None:
        """Count a post against the link's and the service's rates; past either, let it
        through only with a fresh, valid proof of work."""
        link, service = self._rates
        if (await self._limiter.hit([(link, link_id), (service, _SERVICE)])).allowed:
            return
        if proof is not None and await self._solved(link_id, proof):
            return
        for counted in ((self._recent, link_id), (self._refused, link_id)):
            await self._limiter.hit([counted])
        await self._limiter.hit([(self._recent_service, _SERVICE)])
        raise ProofOfWorkRequired(await self.challenge(link_id))

    async def challenge(self, link_id: str) -> Challenge:
        link, service = self._rates
        refused = await self._limiter.count(self._recent, link_id)
        refused_service = await self._limiter.count(self._recent_service, _SERVICE)
        doublings = min(
            MAX_DOUBLINGS,
            max(refused // link.max_requests, refused_service // service.max_requests),
        )
        made = create_challenge(
            ChallengeOptions(
                algorithm=ALGORITHM,
                max_number=self._least_numbers << doublings,
                hmac_key=self._key,
                expires=datetime.datetime.now(datetime.UTC)
                + datetime.timedelta(seconds=CHALLENGE_SECONDS),
                params={"link": link_id},
            )
        )
        return Challenge(
            algorithm=made.algorithm,
            challenge=made.challenge,
            maxnumber=made.max_number,
            salt=made.salt,
            signature=made.signature,
        )

    async def refused_last_hour(self, link_id: str) -> int:
        return await self._limiter.count(self._refused, link_id)

    async def _solved(self, link_id: str, proof: str) -> bool:
        """Whether ``proof`` solves an unexpired challenge of ours for this link, the first
        time it is shown."""
        if len(proof) > _MAX_PROOF_CHARACTERS:
            return False
        try:
            solution = msgspec.json.decode(base64.b64decode(proof, validate=True), type=_Solution)
        except (binascii.Error, ValueError, msgspec.DecodeError):
            return False
        _, _, query = solution.salt.partition("?")
        if solution.algorithm != ALGORITHM or urllib.parse.parse_qs(query).get("link") != [link_id]:
            return False
        payload = Payload(
            ALGORITHM, solution.challenge, solution.number, solution.salt, solution.signature
        )
        valid, _ = verify_solution(payload, self._key, check_expires=True)
        if not valid:
            return False
        return (await self._limiter.hit([(self._spent, solution.challenge)])).allowed
