"""What fediverse handlers take: the process's client for instances (``fediverse``)."""

from __future__ import annotations

from typing import Annotated

from anonbox.auth.fediverse.client import InstanceClient
from anonbox.core.access import INJECTED, UNCHECKED, Provided

# Built once in ``wiring.started``; provided as ``fediverse``.
FediverseDep = Annotated[InstanceClient, INJECTED, UNCHECKED, Provided("fediverse")]
