"""What safety provides to handlers: the process's gate (built at start-up:
``anonbox.wiring``)."""

from __future__ import annotations

from typing import Annotated

from anonbox.core.access import INJECTED, UNCHECKED
from anonbox.safety.gate import Gate

GateDep = Annotated[Gate, INJECTED, UNCHECKED]
