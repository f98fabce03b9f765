"""What a request handler is given of the outbox: its process's live fan-out hub
(built at start-up: ``anonbox.wiring``)."""

from __future__ import annotations

from typing import Annotated

from anonbox.core.access import INJECTED, UNCHECKED, Provided
from anonbox.outbox.fanout import Hub

HubDep = Annotated[Hub, INJECTED, UNCHECKED, Provided("hub")]
