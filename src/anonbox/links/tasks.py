"""links' background work: resuming the pauses that have ended."""

from __future__ import annotations

from anonbox.core.chores import Chore, Needs, NoDeliveries, Tasks
from anonbox.links import service


def _chores(needs: Needs) -> list[Chore]:
    return [Chore("resuming ended pauses", service.RESUME_SECONDS, service.resume_ended)]


TASKS: Tasks[NoDeliveries] = Tasks(chores=_chores)
