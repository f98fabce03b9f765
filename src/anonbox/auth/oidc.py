"""A small OpenID Connect relying party: discovery, the authorization URL, the code
exchange and every check on the ID token, done here rather than trusted to a library
default (Authlib, for one, does not check ``aud`` unless asked)."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlencode

import httpx
import jwt

from anonbox.core.errors import BadGateway, BadRequest
from anonbox.core.settings import GOOGLE_ISSUER, Settings

# Google publishes RS256 keys; the others are here for providers configured in its place.
_ALGORITHMS = ("RS256", "RS384", "RS512", "ES256", "ES384", "PS256")
_METADATA_TTL_SECONDS = 3600
_JWKS_REFETCH_INTERVAL_SECONDS = 30  # an unknown kid may not force a fetch more often
_CLOCK_SKEW_SECONDS = 60


class SignInFailed(BadRequest):
    code = "signin_failed"


class ProviderUnavailable(BadGateway):
    code = "provider_unavailable"


@dataclass(frozen=True, slots=True)
class ProviderMetadata:
    issuer: str
    authorization_endpoint: str
    token_endpoint: str
    jwks_uri: str


@dataclass(frozen=True, slots=True)
class Identity:
    """What the provider vouches for about the person signing in."""

    subject: str
    email: str
    name: str
    picture_url: str | None


class OIDCClient:
    def __init__(self, settings: Settings, http: httpx.AsyncClient) -> None:
        self.client_id = settings.google_client_id or ""
        self.client_secret = settings.google_client_secret or ""
        self.redirect_uri = settings.google_redirect_uri
        self.issuer = settings.google_issuer
        # Google's ID tokens name their issuer with or without the scheme.
        self.accepted_issuers = {self.issuer}
        if self.issuer == GOOGLE_ISSUER:
            self.accepted_issuers.add("accounts.google.com")
        self._http = http
        self._metadata: ProviderMetadata | None = None
        self._metadata_fetched = 0.0
        self._keys: dict[str | None, jwt.PyJWK] = {}
        self._keys_fetched = 0.0
        self._lock = asyncio.Lock()

    async def _get_json(self, url: str) -> dict[str, Any]:
        try:
            response = await self._http.get(url)
        except httpx.HTTPError as exc:
            raise ProviderUnavailable("The sign-in provider could not be reached") from exc
        if response.status_code != 200:
            raise ProviderUnavailable(f"The sign-in provider answered {response.status_code}")
        try:
            body = response.json()
        except ValueError as exc:
            raise ProviderUnavailable(
                "The sign-in provider sent something that is not JSON"
            ) from exc
        if not isinstance(body, dict):
            raise ProviderUnavailable("The sign-in provider sent an unexpected document")
        return body

    async def metadata(self) -> ProviderMetadata:
        async with self._lock:
            return await self._current_metadata()

    async def _current_metadata(self) -> ProviderMetadata:
        """Discovery, cached for an hour; the caller holds ``self._lock``."""
        if self._metadata and time.monotonic() - self._metadata_fetched < _METADATA_TTL_SECONDS:
            return self._metadata
        document = await self._get_json(f"{self.issuer}/.well-known/openid-configuration")
        try:
            metadata = ProviderMetadata(
                issuer=str(document["issuer"]),
                authorization_endpoint=str(document["authorization_endpoint"]),
                token_endpoint=str(document["token_endpoint"]),
                jwks_uri=str(document["jwks_uri"]),
            )
        except KeyError as exc:
            raise ProviderUnavailable(f"The provider's discovery lacks {exc}") from exc
        # OpenID Connect Discovery 1.0 §4.3: the document must name the issuer we asked.
        if metadata.issuer.rstrip("/") != self.issuer:
            raise ProviderUnavailable("The provider's discovery names another issuer")
        self._metadata, self._metadata_fetched = metadata, time.monotonic()
        return metadata

    async def authorization_url(self, *, state: str, code_challenge: str, nonce: str) -> str:
        metadata = await self.metadata()
        query = urlencode(
            {
                "response_type": "code",
                "client_id": self.client_id,
                "redirect_uri": self.redirect_uri,
                "scope": "openid email profile",
                "state": state,
                "nonce": nonce,
                "code_challenge": code_challenge,
                "code_challenge_method": "S256",
            }
        )
        separator = "&" if "?" in metadata.authorization_endpoint else "?"
        return f"{metadata.authorization_endpoint}{separator}{query}"

    async def exchange_code(self, *, code: str, code_verifier: str) -> str:
        """Trade the authorization code for the ID token (RFC 6749 §4.1.3, RFC 7636 §4.5)."""
        metadata = await self.metadata()
        try:
            response = await self._http.post(
                metadata.token_endpoint,
                data={
                    "grant_type": "authorization_code",
                    "code": code,
                    "redirect_uri": self.redirect_uri,
                    "code_verifier": code_verifier,
                },
                # RFC 6749 §2.3.1: form-encode the credentials before Basic encodes them.
                auth=(quote(self.client_id, safe=""), quote(self.client_secret, safe="")),
                headers={"Accept": "application/json"},
            )
        except httpx.HTTPError as exc:
            raise ProviderUnavailable("The sign-in provider could not be reached") from exc
        if 400 <= response.status_code < 500:
            raise SignInFailed("The sign-in provider did not accept this code; sign in again")
        if response.status_code != 200:
            raise ProviderUnavailable(f"The sign-in provider answered {response.status_code}")
        try:
            id_token = response.json().get("id_token")
        except (ValueError, AttributeError) as exc:
            raise ProviderUnavailable("The sign-in provider sent an unexpected answer") from exc
        if not isinstance(id_token, str):
            raise ProviderUnavailable("The sign-in provider sent no ID token")
        return id_token

    async def _signing_key(self, kid: str | None) -> jwt.PyJWK:
        async with self._lock:
            known = self._lookup(kid)
            if (
                known is None
                and time.monotonic() - self._keys_fetched > _JWKS_REFETCH_INTERVAL_SECONDS
            ):
                await self._fetch_keys()
                known = self._lookup(kid)
        if known is None:
            raise SignInFailed("The ID token was not signed by a key of the provider")
        return known

    def _lookup(self, kid: str | None) -> jwt.PyJWK | None:
        if kid is not None:
            return self._keys.get(kid)
        # A token without a key id can only be checked when there is one key to choose.
        return next(iter(self._keys.values())) if len(self._keys) == 1 else None

    async def _fetch_keys(self) -> None:
        document = await self._get_json((await self._current_metadata()).jwks_uri)
        keys: dict[str | None, jwt.PyJWK] = {}
        for entry in document.get("keys", []):
            if not isinstance(entry, dict) or entry.get("use", "sig") != "sig":
                continue
            try:
                keys[entry.get("kid")] = jwt.PyJWK(entry)
            except jwt.PyJWTError:
                continue  # a key type or algorithm we do not use
        self._keys, self._keys_fetched = keys, time.monotonic()

    async def verify_id_token(self, id_token: str, *, nonce: str) -> Identity:
        """Check signature, iss, aud, exp, iat and nonce; then that the e-mail is verified."""
        try:
            header = jwt.get_unverified_header(id_token)
        except jwt.PyJWTError as exc:
            raise SignInFailed("The provider's ID token is malformed") from exc
        algorithm = header.get("alg")
        if algorithm not in _ALGORITHMS:
            raise SignInFailed("The provider's ID token uses an algorithm we do not accept")
        key = await self._signing_key(header.get("kid"))
        try:
            claims: dict[str, Any] = jwt.decode(
                id_token,
                key=key.key,
                algorithms=[algorithm],
                audience=self.client_id,
                options={"require": ["iss", "sub", "aud", "exp", "iat"], "verify_iss": False},
                leeway=_CLOCK_SKEW_SECONDS,
            )
        except jwt.ExpiredSignatureError as exc:
            raise SignInFailed("The provider's ID token has expired; sign in again") from exc
        except jwt.InvalidAudienceError as exc:
            raise SignInFailed("The provider's ID token was issued to another application") from exc
        except jwt.PyJWTError as exc:
            raise SignInFailed("The provider's ID token failed verification") from exc
        self._check_claims(claims, nonce)
        return Identity(
            subject=str(claims["sub"]),
            email=str(claims["email"]).strip().lower(),
            name=str(claims.get("name") or str(claims["email"]).split("@")[0])[:200],
            picture_url=str(claims["picture"])[:2000] if claims.get("picture") else None,
        )

    def _check_claims(self, claims: dict[str, Any], nonce: str) -> None:
        if claims["iss"] not in self.accepted_issuers:
            raise SignInFailed("The ID token comes from another issuer")
        # Explicitly, whatever the library did: we must be the (authorised) audience.
        audience = claims["aud"]
        audiences = audience if isinstance(audience, list) else [audience]
        if self.client_id not in audiences or (
            len(audiences) > 1 and claims.get("azp") != self.client_id
        ):
            raise SignInFailed("The provider's ID token was issued to another application")
        if claims.get("nonce") != nonce:
            raise SignInFailed("The ID token does not belong to this sign-in")
        if not claims.get("sub"):
            raise SignInFailed("The ID token names no account")
        if not claims.get("email") or claims.get("email_verified") not in (True, "true"):
            raise SignInFailed("Sign in with an account whose e-mail address is verified")
