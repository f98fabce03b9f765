"""Annotated types for values the app injects into handlers as they are.

The framework validates injected values against their annotations; these skip that,
because the settings hold types it cannot describe (IP networks) and need no checking.
"""

from __future__ import annotations

from typing import Annotated

from litestar.params import Dependency

from anonbox.core.settings import Settings

AppSettings = Annotated[Settings, Dependency(skip_validation=True)]
