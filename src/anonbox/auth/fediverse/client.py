"""Talking to a Mastodon or Misskey instance for sign-in, with httpx.

Every request goes to the address the instance's host resolves to now, checked by the
notifications' one destination check (``core.egress``: no private,
loopback or link-local address unless ``ANONBOX_FEDERATION_ALLOW_PRIVATE``), with the
host as ``Host``. Which software an instance runs is read from its NodeInfo; Mastodon
and the servers that speak its client API sign in by OAuth 2.0 (authorization code,
PKCE where the server advertises S256, RFC 8414 metadata), Misskey and its forks by
MiAuth. Why httpx rather than an OAuth library: see ``docs/decisions.md``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import urlencode, urlsplit

import httpx
import idna

from anonbox.core.egress import (
    Malformed,
    Refused,
    Undeliverable,
    destination,
    pinned_target,
)
from anonbox.core.errors import BadRequest, Forbidden
from anonbox.core.i18n import N_

Software = Literal["mastodon", "misskey"]
# NodeInfo's software names of servers that speak Misskey's API; any other speaks
# Mastodon's client API (Mastodon, Pleroma, Akkoma, GoToSocial...) or fails there.
MISSKEY_FAMILY = frozenset(
    {"misskey", "sharkey", "firefish", "calckey", "foundkey", "cherrypick", "meisskey"}
)
MASTODON_SCOPES = "read:accounts write:statuses write:media"
MISSKEY_PERMISSIONS = "read:account,write:notes,write:drive"
APP_NAME = "anonbox"
_MAX_ADDRESS = 300
# The person waits for the answer of an unlink: an instance that is down costs them this.
REVOKE_TIMEOUT_SECONDS = 5.0
_USER_AT_HOST = re.compile(r"^@?[^@\s/]+@([^@\s/]+)$")


class InstanceInvalid(BadRequest):
    code = "instance_invalid"


class InstanceNotAllowed(Forbidden):
    code = "instance_not_allowed"


class InstanceUnreachable(BadRequest):
    """The instance did not answer, or not as a Mastodon or Misskey server does: the
    address the person typed is wrong for us, so a 4xx they can correct."""

    code = "instance_unreachable"


class InstanceRefused(BadRequest):
    code = "instance_refused"


def instance_base(typed: str, *, allow_private: bool) -> str:
    """The instance's base URL (``https://host[:port]``) from what a person typed: a host,
    a URL, or ``@user@host``; a name outside ASCII (``mästodon.example``, full-width
    letters) becomes its IDNA form (UTS 46, as browsers read an address). Raises
    ``InstanceInvalid`` or ``InstanceNotAllowed``, nothing else, whatever was typed."""
    text = typed.strip()
    if not text or len(text) > _MAX_ADDRESS or not text.isprintable() or " " in text:
        # isprintable: no control, format or separator characters (a NUL, a BOM, U+2028)
        raise InstanceInvalid(N_("Type your instance's address, such as mastodon.social."))
    handle = _USER_AT_HOST.match(text)
    if handle:
        text = handle.group(1)
    if "://" not in text:
        text = "https://" + text
    try:
        parts = urlsplit(text)
        port = parts.port  # raises ValueError on a bad port
        host = parts.hostname or ""
        if ":" not in host:  # an IPv6 address stays as written; a name is made IDNA
            host = idna.encode(host, uts46=True).decode("ascii")
    except (ValueError, idna.IDNAError) as exc:  # IDNAError is a UnicodeError, but say so
        raise InstanceInvalid(
            N_("That is not an instance address; type one such as mastodon.social.")
        ) from exc
    if parts.path not in ("", "/") or parts.query or parts.fragment:
        raise InstanceInvalid(
            N_("That is not an instance address; type one such as mastodon.social.")
        )
    netloc = f"[{host}]" if ":" in host else host
    if port is not None:
        netloc += f":{port}"
    try:
        where = destination(f"{parts.scheme}://{netloc}/", allow_private=allow_private)
    except Refused as exc:
        raise InstanceNotAllowed(
            N_("This server does not connect to private or local addresses.")
        ) from exc
    except Malformed as exc:
        raise InstanceInvalid(
            N_("That is not an instance address; type one such as mastodon.social.")
        ) from exc
    if "." not in where.host and not allow_private:
        raise InstanceInvalid(
            N_("That is not an instance address; type one such as mastodon.social.")
        )
    return f"{where.scheme}://{where.host_header}"


@dataclass(frozen=True, slots=True)
class RemoteAccount:
    remote_id: str
    acct: str  # user@host
    name: str


@dataclass(frozen=True, slots=True)
class AppRegistration:
    client_id: str
    client_secret: str


class InstanceClient:
    """HTTP to instances, each request pinned to the address checked."""

    def __init__(self, http: httpx.AsyncClient, *, allow_private: bool) -> None:
        self._http = http
        self.allow_private = allow_private

    async def request(
        self,
        method: str,
        url: str,
        *,
        data: dict[str, str] | None = None,
        json: dict[str, Any] | None = None,
        files: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
        time_limit: float | None = None,
    ) -> httpx.Response:
        """One request to ``url``, resolved and pinned; ``Undeliverable`` or
        ``httpx.HTTPError`` when it cannot be made. ``time_limit``: seconds, less than the
        client's own."""
        target = await pinned_target(url, allow_private=self.allow_private)
        return await self._http.request(
            method,
            target.url,
            data=data,
            json=json,
            files=files,
            headers={
                "Host": target.host,
                "User-Agent": "anonbox",
                "Accept": "application/json",
                **(headers or {}),
            },
            extensions=target.extensions,
            follow_redirects=False,
            timeout=httpx.USE_CLIENT_DEFAULT if time_limit is None else time_limit,
        )

    async def _json(self, method: str, url: str, **options: Any) -> Any:
        try:
            answer = await self.request(method, url, **options)
        except (Undeliverable, httpx.HTTPError) as exc:
            raise InstanceUnreachable(
                N_("The instance could not be reached; check its address and try again.")
            ) from exc
        if answer.status_code in (401, 403):
            raise InstanceRefused(N_("The instance refused to sign you in; please try again."))
        if not answer.is_success:
            raise InstanceUnreachable(
                N_("The instance did not answer as Mastodon or Misskey does.")
            )
        try:
            return answer.json()
        except ValueError as exc:
            raise InstanceUnreachable(
                N_("The instance did not answer as Mastodon or Misskey does.")
            ) from exc

    async def software(self, base: str) -> Software:
        """What the instance runs, from its NodeInfo (Mastodon's API if it names none)."""
        index = await self._json("GET", f"{base}/.well-known/nodeinfo")
        links = index.get("links") if isinstance(index, dict) else None
        href = next(
            (
                str(entry["href"])
                for entry in (links if isinstance(links, list) else [])
                if isinstance(entry, dict)
                and str(entry.get("rel", "")).startswith("http://nodeinfo.diaspora.software/ns/")
                and isinstance(entry.get("href"), str)
            ),
            None,
        )
        if href is None:
            raise InstanceUnreachable(
                N_("The instance did not answer as Mastodon or Misskey does.")
            )
        document = await self._json("GET", href)
        software = document.get("software") if isinstance(document, dict) else None
        name = str(software.get("name", "")).lower() if isinstance(software, dict) else ""
        return "misskey" if name in MISSKEY_FAMILY else "mastodon"

    # --- Mastodon: OAuth 2.0 --------------------------------------------------------------

    async def register_app(self, base: str, *, redirect_uri: str, website: str) -> AppRegistration:
        """``POST /api/v1/apps``: anonbox as an application of this instance."""
        body = await self._json(
            "POST",
            f"{base}/api/v1/apps",
            data={
                "client_name": APP_NAME,
                "redirect_uris": redirect_uri,
                "scopes": MASTODON_SCOPES,
                "website": website,
            },
        )
        if not isinstance(body, dict) or not body.get("client_id") or not body.get("client_secret"):
            raise InstanceUnreachable(
                N_("The instance did not answer as Mastodon or Misskey does.")
            )
        return AppRegistration(str(body["client_id"]), str(body["client_secret"]))

    async def offers_pkce(self, base: str) -> bool:
        """Whether the instance advertises PKCE with S256 (RFC 8414 metadata; Mastodon
        4.3 and later). An instance without the document is asked without PKCE."""
        try:
            document = await self._json("GET", f"{base}/.well-known/oauth-authorization-server")
        except (InstanceUnreachable, InstanceRefused):
            return False
        methods = (
            document.get("code_challenge_methods_supported") if isinstance(document, dict) else None
        )
        return isinstance(methods, list) and "S256" in methods

    @staticmethod
    def authorization_url(
        base: str, *, client_id: str, redirect_uri: str, state: str, challenge: str | None
    ) -> str:
        query = {
            "response_type": "code",
            "client_id": client_id,
            "redirect_uri": redirect_uri,
            "scope": MASTODON_SCOPES,
            "state": state,
        }
        if challenge is not None:
            query |= {"code_challenge": challenge, "code_challenge_method": "S256"}
        return f"{base}/oauth/authorize?{urlencode(query)}"

    async def exchange_code(
        self,
        base: str,
        *,
        app: AppRegistration,
        code: str,
        redirect_uri: str,
        verifier: str | None,
    ) -> str:
        form = {
            "grant_type": "authorization_code",
            "code": code,
            "client_id": app.client_id,
            "client_secret": app.client_secret,
            "redirect_uri": redirect_uri,
            "scope": MASTODON_SCOPES,
        }
        if verifier is not None:
            form["code_verifier"] = verifier
        body = await self._json("POST", f"{base}/oauth/token", data=form)
        token = body.get("access_token") if isinstance(body, dict) else None
        if not isinstance(token, str) or not token:
            raise InstanceRefused(N_("The instance refused to sign you in; please try again."))
        return token

    async def mastodon_account(self, base: str, token: str) -> RemoteAccount:
        body = await self._json(
            "GET",
            f"{base}/api/v1/accounts/verify_credentials",
            headers={"Authorization": f"Bearer {token}"},
        )
        if not isinstance(body, dict) or not body.get("id") or not body.get("username"):
            raise InstanceUnreachable(
                N_("The instance did not answer as Mastodon or Misskey does.")
            )
        host = urlsplit(base).netloc
        return RemoteAccount(
            remote_id=str(body["id"]),
            acct=f"{body['username']}@{host}",
            name=str(body.get("display_name") or body["username"])[:80],
        )

    async def revoke_token(self, base: str, *, app: AppRegistration, token: str) -> bool:
        """``POST /oauth/revoke`` (RFC 7009, as Mastodon documents it: the client's id and
        secret and the token): whether the instance answered 200, that is revoked it. A
        token of another registration is refused (Doorkeeper: 403), so the caller tries
        each. Never raises: an instance that cannot be asked is ``False``."""
        try:
            answer = await self.request(
                "POST",
                f"{base}/oauth/revoke",
                data={
                    "client_id": app.client_id,
                    "client_secret": app.client_secret,
                    "token": token,
                },
                time_limit=REVOKE_TIMEOUT_SECONDS,
            )
        except (Undeliverable, httpx.HTTPError):
            return False
        return answer.status_code == 200

    # --- Misskey: MiAuth ------------------------------------------------------------------

    @staticmethod
    def miauth_url(base: str, *, session: str, callback: str) -> str:
        query = urlencode(
            {"name": APP_NAME, "callback": callback, "permission": MISSKEY_PERMISSIONS}
        )
        return f"{base}/miauth/{session}?{query}"

    async def miauth_check(self, base: str, session: str) -> tuple[str, RemoteAccount]:
        """``POST /api/miauth/{session}/check``: the token and the account, once allowed."""
        body = await self._json("POST", f"{base}/api/miauth/{session}/check", json={})
        if not isinstance(body, dict) or not body.get("ok") or not body.get("token"):
            raise InstanceRefused(N_("The instance refused to sign you in; please try again."))
        user = body.get("user")
        if not isinstance(user, dict) or not user.get("id") or not user.get("username"):
            raise InstanceUnreachable(
                N_("The instance did not answer as Mastodon or Misskey does.")
            )
        host = urlsplit(base).netloc
        return str(body["token"]), RemoteAccount(
            remote_id=str(user["id"]),
            acct=f"{user['username']}@{host}",
            name=str(user.get("name") or user["username"])[:80],
        )
