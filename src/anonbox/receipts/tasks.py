"""receipts' background work: purging expired receipts."""

from __future__ import annotations

from anonbox.core.chores import Chore, Needs, NoDeliveries, Tasks
from anonbox.receipts import service


def _chores(needs: Needs) -> list[Chore]:
    return [Chore("purging expired receipts", service.PURGE_EVERY_SECONDS, service.purge_expired)]


TASKS: Tasks[NoDeliveries] = Tasks(chores=_chores)
