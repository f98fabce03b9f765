"""The process's federation (its settings and HTTP client), as a route dependency; built
once at start-up (``anonbox.wiring``)."""

from __future__ import annotations

from typing import Annotated

from anonbox.core.access import INJECTED, UNCHECKED, Provided
from anonbox.federation.service import Federation

FederationDep = Annotated[Federation, INJECTED, UNCHECKED, Provided("federation")]
