"""The door every anonymous message passes: rate limits, blocks and muted words.

A message from a blocked sender is dropped silently: the sender gets the same 201 with
the same shape, and the drop is written through the same group commit as a stored
message (``messages.repository.DroppedMessage``), so its id answers later requests as a
stored one's does; it answers when a stored one would have (``safety.pace``), and its
sender's post takes every step of the gate that another's does. A message with a muted
word goes to the link's filtered folder (``messages.repository.FilteredMessage``, a
stored row the creator may restore), or is dropped the same way when the link says
``muted: drop``; the gate only tells which (``Admission``), the link's setting decides.
Rate limits apply before that decision, so dropped messages count too and cannot be
used to probe; so does the flood guard (``safety.flood``): past the link's or the
service's rate, a post needs a proof of work, whoever sent it.
"""

from __future__ import annotations

from dataclasses import dataclass

from anonbox.core.database import Database
from anonbox.core.errors import RateLimited
from anonbox.core.ratelimit import Limit, RateLimiter
from anonbox.core.settings import Settings
from anonbox.safety.flood import FloodGuard
from anonbox.safety.schemas import IPAddress, SenderId
from anonbox.safety.senders import SenderKeys
from anonbox.safety.service import is_blocked, muted_of

# How many senders' worth a wider network may send: an IPv4 /24 or an IPv6 /56 as much as
# 4 senders, an IPv6 /48 as much as 10.
NETWORK_FACTORS = {24: 4, 56: 4, 48: 10}


def _scaled(limit: Limit, bits: int) -> Limit:
    return Limit(
        f"{limit.name}_{bits}", limit.max_requests * NETWORK_FACTORS[bits], limit.window_seconds
    )


@dataclass(frozen=True, slots=True)
class Admission:
    """The gate's verdict on one post: its sender, and whether it is blocked or muted."""

    sender: SenderId | None  # None only when the peer address is unknown (not on TCP)
    blocked: bool  # the sender or their network is blocked: dropped, whatever the link
    muted: bool = False  # holds a muted word (the creator's or the site's), blocked or not

    def dropped(self, muted_mode: str) -> bool:
        """Whether the post is dropped on a link whose ``muted`` setting is this."""
        return self.blocked or (self.muted and muted_mode == "drop")

    def filtered(self, muted_mode: str) -> bool:
        """Whether the post goes to the link's filtered folder."""
        return not self.blocked and self.muted and muted_mode != "drop"


class Gate:
    """The admission check every anonymous post passes ("the gate"), decided by ``admit``."""

    def __init__(self, settings: Settings, keys: SenderKeys, limiter: RateLimiter) -> None:
        self.keys = keys
        self._limiter = limiter
        self._per_sender_link: Limit = settings.limit_sender_per_link
        self._per_sender: Limit = settings.limit_sender
        self.flood = FloodGuard(settings, limiter)
        # A sender's wider networks get looser limits, a multiple of the sender's own.
        self._wider: dict[int, tuple[Limit, Limit]] = {
            bits: (_scaled(self._per_sender_link, bits), _scaled(self._per_sender, bits))
            for bits in NETWORK_FACTORS
        }

    async def throttle(
        self,
        db: Database,
        *,
        link_id: str,
        address: IPAddress | None,
        proof: str | None,
        account: str | None = None,
    ) -> SenderId | None:
        """Count an anonymous post against the sender's limits (429 past them), then the
        link's and the service's (past them, a proof of work is needed), and return the
        sender's keyed hash. A signed-in sender (``account``) is limited as their account,
        from whichever network, and their networks as anyone's are."""
        sender = None if address is None else await self.keys.current(db, address, account)
        checks: list[tuple[Limit, str]] = []
        if sender is not None and address is not None:
            checks += [
                (self._per_sender_link, f"{sender.hash}:{link_id}"),
                (self._per_sender, sender.hash),
            ]
            for bits, network in await self.keys.wider(db, address):
                per_link, overall = self._wider[bits]
                checks += [(per_link, f"{network}:{link_id}"), (overall, network)]
        await self._hit(checks)
        await self.flood.admit(link_id, proof)
        return sender

    async def throttle_client(
        self, db: Database, *, address: IPAddress | None, limit: Limit
    ) -> None:
        """Count a request against one per-sender limit, and its wider networks against
        the same limit scaled as for posts (429 past any)."""
        if address is None:
            return
        checks = [(limit, (await self.keys.current(db, address)).hash)]
        for bits, network in await self.keys.wider(db, address):
            checks.append((_scaled(limit, bits), network))
        await self._hit(checks)

    async def _hit(self, checks: list[tuple[Limit, str]]) -> None:
        if not checks:
            return
        decision = await self._limiter.hit(checks)
        if not decision.allowed:
            raise RateLimited(
                f"Too many requests; try again in {decision.retry_after} s",
                retry_after=decision.retry_after,
            )

    async def admit(
        self,
        db: Database,
        *,
        owner_id: str,
        link_id: str,
        address: IPAddress | None,
        text: str,
        proof: str | None = None,
        account: str | None = None,
    ) -> Admission:
        """Admit a post: count it against the limits (a 429, or a proof of work asked),
        then tell whether its sender is blocked and whether it holds a muted word; with
        the link's ``muted`` setting that decides if it is stored, filtered or dropped.
        ``account``: the signed-in sender's user id, on a link for signed-in senders only;
        they are then known (hashed, limited, blocked) by it rather than by their network."""
        sender = await self.throttle(
            db, link_id=link_id, address=address, proof=proof, account=account
        )
        blocked = (
            sender is not None
            and address is not None
            and await is_blocked(
                db, self.keys, owner_id=owner_id, address=address, current=sender, account=account
            )
        )
        # Looked up for a blocked sender too, so that a block takes the same steps.
        muted_words = await muted_of(db, owner_id)
        return Admission(sender=sender, blocked=blocked, muted=muted_words.found_in(text))
