"""E-mail addresses no other test has used, so that tests sharing a server never meet an
account they did not make."""

from __future__ import annotations

import uuid


def fresh_email(prefix: str = "cli") -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}@example.com"
