"""What a request handler is given of the outbox: its process's live fan-out hub."""

from __future__ import annotations

from typing import Annotated

from litestar.datastructures import State
from litestar.params import Dependency

from anonbox.notifications.outbox.fanout import Hub


def provide_hub(state: State) -> Hub:
    hub: Hub = state.hub
    return hub


HubDep = Annotated[Hub, Dependency(skip_validation=True)]
