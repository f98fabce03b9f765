"""The filtered folder's background work: purging the messages kept there too long."""

from __future__ import annotations

from anonbox.core.chores import Chore, Needs, NoDeliveries, Tasks
from anonbox.messages.filtered import service


def _chores(needs: Needs) -> list[Chore]:
    return [
        Chore("purging old filtered messages", service.PURGE_EVERY_SECONDS, service.purge_expired)
    ]


TASKS: Tasks[NoDeliveries] = Tasks(chores=_chores)
