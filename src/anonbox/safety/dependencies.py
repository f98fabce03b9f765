"""What safety provides to handlers: the process's gate."""

from __future__ import annotations

from typing import Annotated

from litestar.params import Dependency

from anonbox.safety.gate import Gate

# How handlers ask for the process's gate (the app provides it as ``gate``).
GateDep = Annotated[Gate, Dependency(skip_validation=True)]
