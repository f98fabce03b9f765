"""Annotated types for values the app injects into handlers as they are.

The framework validates injected values against their annotations; these skip that:
the settings hold types it cannot describe (IP networks), and checking the database
against its Protocol on every request cost a tenth of the CPU of a simple read.
"""

from __future__ import annotations

from typing import Annotated

from anonbox.core.access import INJECTED, UNCHECKED, Provided
from anonbox.core.client import IPAddress
from anonbox.core.database import Database
from anonbox.core.mail import Mailer
from anonbox.core.ratelimit import RateLimiter
from anonbox.core.settings import Settings

AppSettings = Annotated[Settings, INJECTED, UNCHECKED, Provided("settings")]
DB = Annotated[Database, INJECTED, UNCHECKED, Provided("db")]
# The database for reads anyone may make (``core.replicas``): a replica's, when there is
# one up and near, and the request carries no credential; otherwise the same as ``DB``.
PublicDB = Annotated[Database, INJECTED, UNCHECKED, Provided("public_db")]
MailerDep = Annotated[
    Mailer | None, INJECTED, UNCHECKED, Provided("mailer")
]  # None: no mail configured
LimiterDep = Annotated[RateLimiter, INJECTED, UNCHECKED, Provided("limiter")]
# Who is calling, trusted proxies applied (``core.client.ClientAddresses``); None when the
# server was given no peer address.
ClientAddress = Annotated[IPAddress | None, INJECTED, UNCHECKED, Provided("client_address")]
