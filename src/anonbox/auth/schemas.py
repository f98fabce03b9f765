"""Request and response bodies of the sign-in, session, profile and API-key endpoints."""

from __future__ import annotations

from typing import Annotated

import msgspec
from litestar.params import KwargDefinition

from anonbox.core.envelope import Timestamp
from anonbox.core.text import TEXT_PATTERN
from anonbox.identity.credentials import MAX_CREDENTIAL_LENGTH

ProviderValue = Annotated[str, msgspec.Meta(min_length=1, max_length=150)]


class SignInURL(msgspec.Struct):
    url: str


class CallbackIn(msgspec.Struct):
    code: ProviderValue
    state: ProviderValue


class AccessToken(msgspec.Struct):
    access_token: str


class RefreshIn(msgspec.Struct):
    refresh_token: Annotated[str, msgspec.Meta(max_length=MAX_CREDENTIAL_LENGTH)] | None = None


class RefreshedTokens(msgspec.Struct):
    access_token: str
    refresh_token: str
    expires_in: int


class Profile(msgspec.Struct):
    user_id: str
    name: str
    email: str
    link_id: str | None
    profile_url: Annotated[str | None, KwargDefinition(description="Picture from the provider")]
    created_at: Timestamp


MAX_KEY_NAME_CHARACTERS = 100


class ApiKeyIn(msgspec.Struct):
    # Documented here, checked in the service (``create_api_key``) with its own codes.
    name: Annotated[
        str,
        KwargDefinition(min_length=1, max_length=MAX_KEY_NAME_CHARACTERS, pattern=TEXT_PATTERN),
    ]


class NewApiKey(msgspec.Struct):
    id: str
    name: str
    api_key: Annotated[str, KwargDefinition(description="Shown only in this response")]
    last_chars: str
    created_at: Timestamp


class ApiKeyInfo(msgspec.Struct):
    id: str
    name: str
    last_chars: str
    created_at: Timestamp
    last_used_at: Timestamp | None
    revoked_at: Timestamp | None


class ApiKeyList(msgspec.Struct):
    items: list[ApiKeyInfo]
