"""What stream mode shows: the overlay's address for its creator, and what is on screen."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Overlay:
    """The creator's overlay: its secret address token, and the id of the question shown."""

    token: str
    message_id: str | None


@dataclass(frozen=True, slots=True)
class OnScreen:
    """What an overlay address shows: the question (None: nothing yet) in its creator's
    language; ``key`` is what the live fan-out publishes when it changes."""

    user_id: str
    language: str | None
    question: str | None

    @property
    def key(self) -> str:
        return live_key(self.user_id)


def live_key(user_id: str) -> str:
    return f"stream:{user_id}"
