"""What safety provides to handlers: the process's gate (built at start-up:
``anonbox.wiring``), and the move of waiting messages a new muted word catches (messages'
filtered folder, bound in ``anonbox.wiring``: safety builds below messages)."""

from __future__ import annotations

from typing import Annotated

from anonbox.core.access import INJECTED, UNCHECKED, Provided
from anonbox.safety.gate import Gate
from anonbox.safety.service import MoveMuted

GateDep = Annotated[Gate, INJECTED, UNCHECKED, Provided("gate")]
MoveMutedDep = Annotated[MoveMuted, INJECTED, UNCHECKED, Provided("move_muted")]
