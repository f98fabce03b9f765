"""account's background work: erasing the accounts whose deletion is due."""

from __future__ import annotations

from anonbox.account.service import erase_due, erase_every
from anonbox.core.chores import Chore, Needs, NoDeliveries, Tasks


def _chores(needs: Needs) -> list[Chore]:
    return [Chore("account erasure", erase_every(needs.settings), erase_due)]


TASKS: Tasks[NoDeliveries] = Tasks(chores=_chores)
