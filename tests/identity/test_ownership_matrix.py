"""Who may do what to whose data, on every endpoint that takes a creator's credential.

Each case is one request: a credential (none, a bogus one, the owner's revoked API key,
another creator's key, an admin's key, the owner's key, the owner's sign-in token) aimed
at a resource (the owner's, another creator's, one that does not exist, or one under a
link that does not exist). The expected status follows from the rules the dependencies
state once for every route (auth/dependencies.py, links/dependencies.py) and must be one
that /openapi.json documents for that operation. Every answer is the documented envelope,
never carries data of a creator other than the caller, and a refused request changes
nothing its resource's owner can see.

The server is one per module and database, trusting 127.0.0.1 as a proxy so that every
message comes from a sender of its own: blocks made here silence no other case.
"""

from __future__ import annotations

import asyncio
import io
import itertools
import json
import re
import secrets
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

import httpx
import pytest
from PIL import Image

from anonbox.auth.service import create_creator, grant_admin
from anonbox.auth.sessions import open_session
from anonbox.core.clock import now_us
from anonbox.core.database import connect
from anonbox.core.ids import new_link_id, new_ulid
from anonbox.core.settings import Settings
from tests.actions import assert_error
from tests.conftest import ModuleDatabase
from tests.server import Server
from tests.support.http import loopback_client
from tests.support.push import subscription_body

SUCCESS_KEYS = {"status_code", "message", "data", "metadata"}

# --- who calls ---------------------------------------------------------------------------

Credential = Literal["none", "bogus", "revoked", "other", "admin", "owner", "owner-session"]
CREDENTIALS: tuple[Credential, ...] = (
    "none",
    "bogus",
    "revoked",
    "other",
    "admin",
    "owner",
    "owner-session",
)
# The account a credential proves; None for no credential or one that proves nobody.
CALLER: dict[Credential, str | None] = {
    "none": None,
    "bogus": None,
    "revoked": None,
    "other": "other",
    "admin": "admin",
    "owner": "owner",
    "owner-session": "owner",
}

# --- whose resource ----------------------------------------------------------------------

Resource = Literal["own", "others", "missing", "missing-link", "-"]
# Whose chain of link → message → … a target is built from; "missing" replaces the last id
# of the owner's chain by one that does not exist, "missing-link" the link id.
HOLDER: dict[Resource, str] = {
    "own": "owner",
    "others": "other",
    "missing": "owner",
    "missing-link": "owner",
    "-": "owner",
}
PATH_KEYS = {
    "link_id": "link",
    "message_id": "message",
    "reply_id": "reply",
    "block_id": "block",
    "word_id": "word",
    "key_id": "key",
    "report_id": "report",
    "webhook_id": "webhook",
    "subscription_id": "subscription",
    "token": "receipt",
    "phrase_id": "phrase",
    "account_id": "fediverse",
    "domain": "domain",
}

_senders = itertools.count(1)


@dataclass
class Actor:
    """A creator of the seeded world, and what of theirs no one else may ever see."""

    name: str
    user_id: str
    email: str
    link_id: str
    api_key: str
    session: str
    identity: set[str] = field(default_factory=set)  # ids, e-mail, credentials, words
    content: set[str] = field(default_factory=set)  # link ids, unanswered messages

    @property
    def key(self) -> dict[str, str]:
        return {"X-API-Key": self.api_key}

    @property
    def signed_in(self) -> dict[str, str]:
        return {"X-API-Key": self.session}


@dataclass
class Target:
    """The ids a request names, and what of them is private to their holder."""

    ids: dict[str, str]
    secrets: set[str] = field(default_factory=set)


@dataclass
class World:
    server: Server
    http: httpx.Client
    actors: dict[str, Actor]
    revoked_key: str
    seeded: dict[str, dict[str, str]]  # per actor: answered, unanswered message ids
    openapi: dict[str, Any]

    def send(self, link_id: str, text: str) -> str:
        """An anonymous message from a sender no one else is; returns its id."""
        n = next(_senders)
        sender = f"10.77.{(n >> 8) & 255}.{n & 255}"
        sent = self.http.post(
            f"/message/{link_id}",
            json={"message_content": text},
            headers={"X-Forwarded-For": sender},
        )
        assert sent.status_code == 201, sent.text
        return str(sent.json()["data"]["id"])

    def ok(self, method: str, path: str, headers: dict[str, str], **kwargs: Any) -> Any:
        """A set-up request that must succeed; returns its data."""
        answer = self.http.request(method, path, headers=headers, **kwargs)
        assert answer.status_code in {200, 201}, f"{method} {path}: {answer.text}"
        return answer.json()["data"]

    def headers(self, credential: Credential, fresh_session: bool) -> dict[str, str]:
        owner = self.actors["owner"]
        match credential:
            case "none":
                return {}
            case "bogus":
                return {"X-API-Key": f"anb_{uuid.uuid4().hex}{uuid.uuid4().hex}"}
            case "revoked":
                return {"X-API-Key": self.revoked_key}
            case "other":
                return self.actors["other"].key
            case "admin":
                return self.actors["admin"].key
            case "owner":
                return owner.key
            case "owner-session":
                if fresh_session:  # the request signs it out
                    return {
                        "X-API-Key": open_sessions(self.server.database_url, [owner.user_id])[0]
                    }
                return owner.signed_in


def unique(label: str) -> str:
    return f"{label} {uuid.uuid4().hex[:12]}"


# --- targets: the resources a request names ----------------------------------------------

Builder = Callable[[World, Actor], Target]


def seeded_link(w: World, a: Actor) -> Target:
    return Target({"link": a.link_id})


def seeded_answered(w: World, a: Actor) -> Target:
    return Target({"link": a.link_id, "message": w.seeded[a.name]["answered"]})


def seeded_unanswered(w: World, a: Actor) -> Target:
    return Target({"link": a.link_id, "message": w.seeded[a.name]["unanswered"]})


def fresh_message(w: World, a: Actor) -> Target:
    text = unique(f"private to {a.name}")
    message = w.send(a.link_id, text)
    return Target({"link": a.link_id, "message": message}, {text, message})


def fresh_reply(w: World, a: Actor) -> Target:
    target = fresh_message(w, a)
    path = f"/message/{a.link_id}/{target.ids['message']}"
    reply = w.ok("POST", path, a.key, json={"message_content": unique("reply")})
    target.ids["reply"] = reply["reply_message_id"]
    return target


def fresh_link(w: World, a: Actor) -> Target:
    link = w.ok("POST", "/links", a.key, json={"prompt": unique("prompt")})["id"]
    a.content.add(link)
    return Target({"link": link})


def fresh_link_with_unanswered(w: World, a: Actor) -> Target:
    target = fresh_link(w, a)
    text = unique(f"private to {a.name}")
    target.ids["message"] = w.send(target.ids["link"], text)
    target.secrets |= {text, target.ids["message"]}
    return target


def fresh_filtered(w: World, a: Actor) -> Target:
    """A message in the link's filtered folder: it holds a word the holder just muted."""
    word = f"muted{uuid.uuid4().hex[:12]}"
    word_id = w.ok("POST", "/muted-words", a.key, json={"word": word})["id"]
    a.identity |= {word, word_id}
    text = unique(f"private to {a.name} {word}")
    message = w.send(a.link_id, text)
    return Target({"link": a.link_id, "message": message}, {text, message})


def fresh_block(w: World, a: Actor) -> Target:
    target = fresh_message(w, a)
    path = f"/message/{a.link_id}/{target.ids['message']}/block"
    block = w.ok("POST", path, a.key)["id"]
    a.identity.add(block)
    return Target({"block": block}, target.secrets)


def fresh_word(w: World, a: Actor) -> Target:
    word = f"muted{uuid.uuid4().hex[:12]}"
    word_id = w.ok("POST", "/muted-words", a.key, json={"word": word})["id"]
    a.identity |= {word, word_id}
    return Target({"word": word_id})


def fresh_key(w: World, a: Actor) -> Target:
    made = w.ok("POST", "/auth/api-keys", a.signed_in, json={"name": unique("key")})
    a.identity |= {made["id"], made["api_key"], made["name"]}
    return Target({"key": made["id"]})


def webhook_body() -> dict[str, Any]:
    return {"url": f"https://example.org/{uuid.uuid4().hex}"}


def fresh_webhook(w: World, a: Actor) -> Target:
    for earlier in w.ok("GET", "/webhooks", a.key)["items"]:  # a creator may keep 10
        w.ok("DELETE", f"/webhooks/{earlier['id']}", a.key)
    made = w.ok("POST", "/webhooks", a.key, json=webhook_body())
    a.identity |= {made["id"], made["url"], made["secret"]}
    return Target({"webhook": made["id"]})


def fresh_subscription(w: World, a: Actor) -> Target:
    made = w.ok("POST", "/push/subscriptions", a.key, json=subscription_body())
    a.identity |= {made["id"], made["endpoint"]}
    return Target({"subscription": made["id"]})


def fresh_report(w: World, a: Actor) -> Target:
    target = fresh_message(w, a)
    path = f"/message/{a.link_id}/{target.ids['message']}/report"
    report = w.ok("POST", path, {}, json={"reason": "spam"})["id"]
    return Target({"report": report}, target.secrets)


def fresh_receipt(w: World, a: Actor) -> Target:
    """A sender's receipt: its token is the credential, so its text is its holder's own."""
    n = next(_senders)
    sent = w.http.post(
        f"/message/{a.link_id}",
        params={"receipt": "true"},
        json={"message_content": unique("with a receipt")},
        headers={"X-Forwarded-For": f"10.78.{(n >> 8) & 255}.{n & 255}"},
    )
    assert sent.status_code == 201, sent.text
    return Target({"link": a.link_id, "receipt": sent.json()["data"]["receipt"]["token"]})


def phrase_body() -> dict[str, Any]:
    # Muted on every link of the world: a word no message here contains.
    return {"phrase": f"zzphrase{uuid.uuid4().hex[:12]}"}


def fresh_phrase(w: World, a: Actor) -> Target:
    """A site-wide muted phrase: the admin's whoever ``a`` is."""
    made = w.ok("POST", "/admin/muted-phrases", w.actors["admin"].key, json=phrase_body())
    return Target({"phrase": made["id"]})


def fresh_fediverse_account(w: World, a: Actor) -> Target:
    """A Mastodon account linked to ``a``, as a finished sign-in leaves it (the e-mail
    address stays a way in, so it may be removed)."""
    account_id = new_ulid(now_us())
    token = f"instance-token-{uuid.uuid4().hex}"

    async def run() -> None:
        db = await connect(w.server.database_url)
        try:
            await db.execute(
                "INSERT INTO fediverse_accounts (id, user_id, software, instance, remote_id,"
                " acct, access_token, created_at) VALUES ($1, $2, 'mastodon',"
                " 'https://mastodon.example', $3, $4, $5, $6)",
                account_id,
                a.user_id,
                account_id,
                f"{a.name}{account_id[-6:].lower()}@mastodon.example",
                token,
                now_us(),
            )
        finally:
            await db.close()

    asyncio.run(run())
    a.identity |= {account_id, token}
    return Target({"fediverse": account_id})


def domain_body() -> dict[str, Any]:
    return {"domain": f"x{uuid.uuid4().hex[:12]}.example"}


def fresh_domain(w: World, a: Actor) -> Target:
    """A blocked fediverse server: the admin's whoever ``a`` is."""
    made = w.ok(
        "POST", "/admin/federation/blocked-domains", w.actors["admin"].key, json=domain_body()
    )
    return Target({"domain": made["domain"]})


# --- the endpoints -----------------------------------------------------------------------

Guard = Literal["public", "viewer", "creator", "owned_link", "session", "admin"]


@dataclass(frozen=True)
class Endpoint:
    """One operation of /openapi.json, and how it decides who may call it.

    guard: public (credentials ignored), viewer (optional credential, refused when wrong),
    creator (any valid credential; ids are looked up among the caller's own, else 404),
    owned_link (the link's creator: 404 unknown link, 403 someone else's, then 404 for
    what is missing under it), session (a sign-in token; an API key is 403; ids among the
    caller's own), admin (an admin; anyone else 403).
    """

    name: str
    method: str
    path: str  # exactly as in /openapi.json
    guard: Guard
    success: int
    target: Builder | None = None  # None: the path names no resource
    body: Callable[[], dict[str, Any]] | None = None
    picture: bool = False  # the body is a PNG file, not JSON (PUT /account/avatar)
    query: dict[str, str] | None = None  # the query string, for operations that need one
    mutates: bool = False  # a fresh target per case; a refusal must leave it untouched
    private: bool = False  # a viewer route whose resource only its creator may see
    signs_out: bool = False  # the request ends the session that makes it
    # Puts back what a successful request changed that the rest of the matrix relies on
    # (given the time just before the request).
    undo: Callable[[World, int], None] | None = None

    @property
    def params(self) -> list[str]:
        return re.findall(r"{(\w+)}", self.path)

    @property
    def resources(self) -> tuple[Resource, ...]:
        if self.target is None:
            return ("-",)
        if self.params[0] == "link_id" and len(self.params) > 1:
            return ("own", "others", "missing", "missing-link")
        return ("own", "others", "missing")


def text_body(label: str) -> Callable[[], dict[str, Any]]:
    return lambda: {"message_content": unique(label)}


def prompt_body() -> dict[str, Any]:
    return {"prompt": unique("prompt")}


def word_body() -> dict[str, Any]:
    return {"word": f"muted{uuid.uuid4().hex[:12]}"}


M = "/message/{link_id}"
MM = "/message/{link_id}/{message_id}"
ENDPOINTS: list[Endpoint] = [
    # messages
    Endpoint("send", "POST", M, "public", 201, seeded_link, body=text_body("anonymous")),
    Endpoint("inbox", "GET", M, "viewer", 200, seeded_link),
    Endpoint(
        "search", "GET", M + "/search", "owned_link", 200, seeded_link, query={"q": "private to"}
    ),
    Endpoint("replies-of-answered", "GET", MM, "viewer", 200, seeded_answered),
    Endpoint("replies-of-unanswered", "GET", MM, "viewer", 200, seeded_unanswered, private=True),
    Endpoint(
        "reply", "POST", MM, "owned_link", 201, fresh_message, text_body("reply"), mutates=True
    ),
    Endpoint("like", "PUT", MM + "/like", "owned_link", 200, fresh_message, mutates=True),
    Endpoint(
        "delete-reply", "DELETE", MM + "/{reply_id}", "owned_link", 200, fresh_reply, mutates=True
    ),
    Endpoint("delete-message", "DELETE", MM, "owned_link", 200, fresh_message, mutates=True),
    Endpoint("block", "POST", MM + "/block", "owned_link", 201, fresh_message, mutates=True),
    Endpoint(
        "delete-unanswered",
        "DELETE",
        M + "/unanswered",
        "owned_link",
        200,
        fresh_link_with_unanswered,
        mutates=True,
    ),
    Endpoint(
        "report", "POST", MM + "/report", "public", 201, seeded_answered, lambda: {"reason": "x"}
    ),
    Endpoint("filtered", "GET", M + "/filtered", "owned_link", 200, fresh_filtered),
    Endpoint("restore", "POST", MM + "/restore", "owned_link", 200, fresh_filtered, mutates=True),
    Endpoint(
        "empty-filtered",
        "DELETE",
        M + "/filtered",
        "owned_link",
        200,
        fresh_filtered,
        mutates=True,
    ),
    # links
    Endpoint("create-link", "POST", "/links", "creator", 201, body=prompt_body, mutates=True),
    Endpoint("list-links", "GET", "/links", "creator", 200),
    Endpoint("get-link", "GET", "/links/{link_id}", "owned_link", 200, seeded_link),
    Endpoint(
        "update-link",
        "PATCH",
        "/links/{link_id}",
        "owned_link",
        200,
        fresh_link,
        prompt_body,
        mutates=True,
    ),
    Endpoint(
        "pause-link",
        "PATCH",
        "/links/{link_id}",
        "owned_link",
        200,
        fresh_link,
        lambda: {"paused": True},
        mutates=True,
    ),
    Endpoint(
        "delete-link", "DELETE", "/links/{link_id}", "owned_link", 200, fresh_link, mutates=True
    ),
    Endpoint("public-link", "GET", "/links/{link_id}/public", "public", 200, seeded_link),
    # receipts: the token is the only credential
    Endpoint("receipt", "GET", "/receipts/{token}", "public", 200, fresh_receipt),
    Endpoint(
        "follow-up",
        "POST",
        "/receipts/{token}/follow-up",
        "public",
        201,
        fresh_receipt,
        text_body("follow-up"),
        mutates=True,
    ),
    # safety
    Endpoint("list-blocks", "GET", "/blocks", "creator", 200),
    Endpoint("unblock", "DELETE", "/blocks/{block_id}", "creator", 200, fresh_block, mutates=True),
    Endpoint("list-muted", "GET", "/muted-words", "creator", 200),
    Endpoint("mute", "POST", "/muted-words", "creator", 201, body=word_body, mutates=True),
    Endpoint(
        "unmute", "DELETE", "/muted-words/{word_id}", "creator", 200, fresh_word, mutates=True
    ),
    # notifications
    Endpoint("list-webhooks", "GET", "/webhooks", "creator", 200),
    Endpoint("add-webhook", "POST", "/webhooks", "creator", 201, body=webhook_body, mutates=True),
    Endpoint(
        "remove-webhook",
        "DELETE",
        "/webhooks/{webhook_id}",
        "creator",
        200,
        fresh_webhook,
        mutates=True,
    ),
    Endpoint(
        "webhook-deliveries",
        "GET",
        "/webhooks/{webhook_id}/deliveries",
        "creator",
        200,
        fresh_webhook,
    ),
    Endpoint(
        "test-webhook",
        "POST",
        "/webhooks/{webhook_id}/test",
        "creator",
        201,
        fresh_webhook,
        mutates=True,
    ),
    Endpoint("list-devices", "GET", "/push/subscriptions", "creator", 200),
    Endpoint(
        "add-device",
        "POST",
        "/push/subscriptions",
        "creator",
        201,
        body=subscription_body,
        mutates=True,
    ),
    Endpoint(
        "remove-device",
        "DELETE",
        "/push/subscriptions/{subscription_id}",
        "creator",
        200,
        fresh_subscription,
        mutates=True,
    ),
    Endpoint("email-notices", "GET", "/notifications/email", "creator", 200),
    Endpoint(
        "choose-email-notices",
        "PUT",
        "/notifications/email",
        "creator",
        200,
        body=lambda: {"mode": "off"},
        mutates=True,
    ),
    # auth
    Endpoint("profile", "GET", "/user", "creator", 200),
    Endpoint(
        "create-key",
        "POST",
        "/auth/api-keys",
        "session",
        201,
        body=lambda: {"name": "n"},
        mutates=True,
    ),
    Endpoint("list-keys", "GET", "/auth/api-keys", "session", 200),
    Endpoint(
        "revoke-key", "DELETE", "/auth/api-keys/{key_id}", "session", 200, fresh_key, mutates=True
    ),
    Endpoint("logout", "POST", "/auth/logout", "session", 200, signs_out=True, mutates=True),
    # moderation
    Endpoint("list-reports", "GET", "/admin/reports", "admin", 200),
    Endpoint(
        "resolve-report",
        "POST",
        "/admin/reports/{report_id}/resolve",
        "admin",
        200,
        fresh_report,
        lambda: {"action": "dismiss"},
        mutates=True,
    ),
    Endpoint(
        "admin-delete-message",
        "DELETE",
        "/admin/messages/{message_id}",
        "admin",
        200,
        fresh_message,
        mutates=True,
    ),
    Endpoint(
        "admin-block-sender",
        "POST",
        "/admin/messages/{message_id}/block-sender",
        "admin",
        201,
        fresh_message,
        mutates=True,
    ),
    Endpoint("list-muted-phrases", "GET", "/admin/muted-phrases", "admin", 200),
    Endpoint(
        "add-muted-phrase",
        "POST",
        "/admin/muted-phrases",
        "admin",
        201,
        body=phrase_body,
        mutates=True,
    ),
    Endpoint(
        "remove-muted-phrase",
        "DELETE",
        "/admin/muted-phrases/{phrase_id}",
        "admin",
        200,
        fresh_phrase,
        mutates=True,
    ),
    Endpoint("audit-log", "GET", "/admin/audit", "admin", 200),
    # federation (docs/fediverse.md); its ActivityPub documents take no credential
    Endpoint("list-blocked-domains", "GET", "/admin/federation/blocked-domains", "admin", 200),
    Endpoint(
        "block-domain",
        "POST",
        "/admin/federation/blocked-domains",
        "admin",
        201,
        body=domain_body,
        mutates=True,
    ),
    Endpoint(
        "unblock-domain",
        "DELETE",
        "/admin/federation/blocked-domains/{domain}",
        "admin",
        200,
        fresh_domain,
        mutates=True,
    ),
    # account
    Endpoint("export", "GET", "/account/export", "creator", 200),
    Endpoint("deletion-state", "GET", "/account/deletion", "creator", 200),
    Endpoint(
        "request-deletion",
        "POST",
        "/account/deletion",
        "session",
        201,
        mutates=True,
        signs_out=True,
        undo=lambda w, since: reinstate(w, "owner", since),
    ),
    Endpoint("cancel-deletion", "DELETE", "/account/deletion", "session", 200, mutates=True),
    Endpoint("public-profile", "GET", "/account/profile", "creator", 200),
    Endpoint(
        "choose-public-profile",
        "PATCH",
        "/account/profile",
        "creator",
        200,
        body=lambda: {"bio": unique("bio")},
        mutates=True,
    ),
    Endpoint("avatar", "GET", "/account/avatar", "creator", 200),
    Endpoint("upload-avatar", "PUT", "/account/avatar", "creator", 200, picture=True, mutates=True),
    Endpoint("remove-avatar", "DELETE", "/account/avatar", "creator", 200, mutates=True),
    Endpoint("fediverse-accounts", "GET", "/account/fediverse", "creator", 200),
    Endpoint(
        "unlink-fediverse",
        "DELETE",
        "/account/fediverse/{account_id}",
        "creator",
        200,
        fresh_fediverse_account,
        mutates=True,
    ),
]


def small_png() -> bytes:
    """A 16x16 picture, what PUT /account/avatar takes."""
    out = io.BytesIO()
    Image.new("RGB", (16, 16), (200, 40, 90)).save(out, "PNG")
    return out.getvalue()


def reinstate(w: World, name: str, since: int) -> None:
    """Take back a deletion the actor asked for, keys and sessions included (which only a
    test may do: cancelling keeps the keys revoked), so the matrix can go on with them."""
    user_id = w.actors[name].user_id

    async def run() -> None:
        db = await connect(w.server.database_url)
        try:
            async with db.transaction() as tx:
                await tx.execute("DELETE FROM account_deletions WHERE user_id = $1", user_id)
                for table in ("api_keys", "sessions"):
                    await tx.execute(
                        f"UPDATE {table} SET revoked_at = NULL"  # noqa: S608 - ours
                        " WHERE user_id = $1 AND revoked_at >= $2",
                        user_id,
                        since,
                    )
        finally:
            await db.close()

    asyncio.run(run())


def expected_status(endpoint: Endpoint, credential: Credential, resource: Resource) -> int:
    """What the documented rules say this request gets."""
    caller = CALLER[credential]
    exists = resource in {"own", "others"}
    holder = HOLDER[resource] if exists else None
    link_missing = resource == "missing-link" or (
        resource == "missing" and endpoint.params[-1] == "link_id"
    )
    link_holder = None if link_missing else HOLDER[resource]
    if endpoint.guard == "public":
        return endpoint.success if exists or resource == "-" else 404
    if credential in {"bogus", "revoked"} or (credential == "none" and endpoint.guard != "viewer"):
        return 401
    match endpoint.guard:
        case "viewer":
            if not exists or (endpoint.private and caller != holder):
                return 404
            return endpoint.success
        case "admin":
            if caller != "admin":
                return 403
            return endpoint.success if exists or resource == "-" else 404
        case "owned_link":
            if link_holder is None:
                return 404
            if link_holder != caller:
                return 403
            return endpoint.success if exists else 404
        case "session" if credential != "owner-session":
            return 403
    # creator and session: ids are looked up among the caller's own
    return endpoint.success if resource == "-" or holder == caller else 404


# Cases where the service answers something other than the documented rules: none known.
DEVIATIONS: dict[str, str] = {}


def cases() -> Iterator[Any]:
    for endpoint in ENDPOINTS:
        for credential in CREDENTIALS:
            for resource in endpoint.resources:
                case_id = f"{endpoint.name}-{credential}-{resource}"
                marks = []
                if case_id in DEVIATIONS:
                    marks.append(pytest.mark.xfail(strict=True, reason=DEVIATIONS[case_id]))
                yield pytest.param(endpoint, credential, resource, id=case_id, marks=marks)


# --- the seeded world --------------------------------------------------------------------


def open_sessions(database_url: str, user_ids: list[str]) -> list[str]:
    """Sign-in access tokens for these accounts, as a finished sign-in would issue them."""

    async def run() -> list[str]:
        db = await connect(database_url)
        try:
            settings = Settings.from_env({})
            return [
                (await open_session(db, user_id=user_id, settings=settings)).access_token
                for user_id in user_ids
            ]
        finally:
            await db.close()

    return asyncio.run(run())


def make_accounts(database_url: str) -> dict[str, tuple[str, str, str, str]]:
    """The owner, another creator and an admin: (user id, e-mail, link id, API key)."""

    async def run() -> dict[str, tuple[str, str, str, str]]:
        db = await connect(database_url)
        try:
            made = {}
            for name in ("owner", "other", "admin"):
                email = f"{name}-{uuid.uuid4().hex[:10]}@example.com"
                creator = await create_creator(db, email=email, name=f"Creator {name}")
                made[name] = (creator.user_id, creator.email, creator.link_id, creator.api_key)
            await grant_admin(db, email=made["admin"][1])
            return made
        finally:
            await db.close()

    return asyncio.run(run())


def seed(server: Server, http: httpx.Client) -> World:
    accounts = make_accounts(server.database_url)
    sessions = open_sessions(server.database_url, [user for user, *_ in accounts.values()])
    actors = {
        name: Actor(name, user_id, email, link_id, api_key, session)
        for (name, (user_id, email, link_id, api_key)), session in zip(
            accounts.items(), sessions, strict=True
        )
    }
    for actor in actors.values():
        actor.identity |= {actor.user_id, actor.email, actor.api_key, actor.session}
        actor.content.add(actor.link_id)
    openapi = http.get("/openapi.json").json()
    world = World(server, http, actors, revoked_key="", seeded={}, openapi=openapi)

    owner = actors["owner"]
    revoked = world.ok("POST", "/auth/api-keys", owner.signed_in, json={"name": "revoked"})
    world.ok("DELETE", f"/auth/api-keys/{revoked['id']}", owner.signed_in)
    world.revoked_key = revoked["api_key"]
    owner.identity |= {revoked["id"], revoked["api_key"]}

    for actor in (owner, actors["other"]):
        answered = world.send(actor.link_id, unique(f"published question to {actor.name}"))
        world.ok(
            "POST",
            f"/message/{actor.link_id}/{answered}",
            actor.key,
            json={"message_content": unique(f"published answer of {actor.name}")},
        )
        private = fresh_message(world, actor)
        actor.content |= private.secrets
        blocked = fresh_block(world, actor)
        actor.content |= blocked.secrets
        fresh_word(world, actor)
        fresh_key(world, actor)
        world.seeded[actor.name] = {"answered": answered, "unanswered": private.ids["message"]}
    return world


@pytest.fixture(scope="module")
def world(
    module_database: ModuleDatabase,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[World]:
    backend = module_database.backend
    log = tmp_path_factory.mktemp("matrix") / f"{backend}.log"
    server = Server(
        module_database.url, log, env={"ANONBOX_TRUSTED_PROXIES": "127.0.0.1/32"}
    ).start()
    try:
        with loopback_client(base_url=server.url, timeout=30) as http:
            yield seed(server, http)
    finally:
        server.stop()
    assert "Traceback" not in server.log(), f"the server logged a traceback: see {log}"


# --- what a request leaves behind --------------------------------------------------------


def view(w: World, path: str, headers: dict[str, str], **params: Any) -> tuple[int, Any]:
    answer = w.http.get(path, headers=headers, params=params)
    return answer.status_code, answer.json()["data"]


def key_listing(w: World, headers: dict[str, str]) -> tuple[int, Any]:
    """An account's API keys, without ``last_used_at``: observing uses the keys, and a key's
    use is recorded once a minute, so a minute's turn between two looks would show as a
    change."""
    status, data = view(w, "/auth/api-keys", headers)
    if data is None:
        return status, data
    items = [{k: v for k, v in item.items() if k != "last_used_at"} for item in data["items"]]
    return status, {**data, "items": items}


def picked(items: tuple[int, Any], key: str, value: str) -> tuple[int, Any]:
    status, data = items
    return status, None if data is None else [i for i in data["items"] if i[key] == value]


def observe(w: World, target: Target | None, holder: Actor) -> dict[str, Any]:
    """What the holder of ``target`` (or, for no target, everyone) can see of it."""
    if target is None:
        seen: dict[str, Any] = {}
        for actor in w.actors.values():
            for label, headers in (("key", actor.key), ("session", actor.signed_in)):
                seen[f"{actor.name} {label}"] = view(w, "/user", headers)
            seen[f"{actor.name} links"] = view(w, "/links", actor.key)
            seen[f"{actor.name} muted"] = view(w, "/muted-words", actor.key)
            seen[f"{actor.name} keys"] = key_listing(w, actor.signed_in)
        seen["muted phrases"] = view(w, "/admin/muted-phrases", w.actors["admin"].key)
        seen["audit"] = view(w, "/admin/audit", w.actors["admin"].key, limit=100)
        seen["blocked servers"] = view(
            w, "/admin/federation/blocked-domains", w.actors["admin"].key
        )
        return seen
    ids, key = target.ids, holder.key
    seen = {}
    if "link" in ids:
        seen["link"] = view(w, f"/links/{ids['link']}", key)
        inbox = view(w, f"/message/{ids['link']}", key, limit=100)
        seen["inbox"] = picked(inbox, "id", ids["message"]) if "message" in ids else inbox
        seen["filtered"] = view(w, f"/message/{ids['link']}/filtered", key, limit=100)
    if "message" in ids and "link" in ids:
        seen["replies"] = view(w, f"/message/{ids['link']}/{ids['message']}", key, limit=100)
        seen["blocks"] = view(w, "/blocks", key)  # a refused block must not block
    elif "block" in ids:
        seen["blocks"] = picked(view(w, "/blocks", key), "id", ids["block"])
    if "word" in ids:
        seen["muted"] = picked(view(w, "/muted-words", key), "id", ids["word"])
    if "webhook" in ids:
        seen["webhooks"] = picked(view(w, "/webhooks", key), "id", ids["webhook"])
    if "subscription" in ids:
        devices = view(w, "/push/subscriptions", key)
        seen["devices"] = picked(devices, "id", ids["subscription"])
    if "key" in ids:
        seen["keys"] = picked(key_listing(w, holder.signed_in), "id", ids["key"])
    if "report" in ids:
        admin = w.actors["admin"].key
        for status in ("open", "resolved"):
            reports = view(w, "/admin/reports", admin, status=status, limit=100)
            seen[f"{status} reports"] = picked(reports, "id", ids["report"])
    if "fediverse" in ids:
        seen["fediverse"] = picked(view(w, "/account/fediverse", key), "id", ids["fediverse"])
    if "phrase" in ids:
        phrases = view(w, "/admin/muted-phrases", w.actors["admin"].key)
        seen["muted phrases"] = picked(phrases, "id", ids["phrase"])
    if "domain" in ids:
        servers = view(w, "/admin/federation/blocked-domains", w.actors["admin"].key)
        seen["blocked servers"] = picked(servers, "domain", ids["domain"])
    # A refused request is no admin action: it writes nothing to the audit log.
    seen["audit"] = view(w, "/admin/audit", w.actors["admin"].key, limit=100)
    return seen


def target_for(w: World, endpoint: Endpoint, resource: Resource) -> Target | None:
    if endpoint.target is None:
        return None
    target = endpoint.target(w, w.actors[HOLDER[resource]])
    if resource == "missing":
        leaf = PATH_KEYS[endpoint.params[-1]]
        target.ids[leaf] = new_link_id() if leaf == "link" else new_ulid(now_us())
    elif resource == "missing-link":
        target.ids["link"] = longest_unknown_link_id()
    return target


def longest_unknown_link_id() -> str:
    """A link id that names nothing, as long as the document allows (64 characters), so
    longer than any link column: a statement that binds it must match nothing, not fail."""
    return (new_link_id() + secrets.token_hex(32))[:64]


def forbidden_secrets(
    w: World, endpoint: Endpoint, credential: Credential, resource: Resource, target: Target | None
) -> set[str]:
    """Everything the caller must not be shown: all that belongs to someone else, except
    what an admin sees of reported content on the admin routes."""
    caller = CALLER[credential]
    sees_content = endpoint.guard == "admin" and caller == "admin"
    secrets: set[str] = set()
    for actor in w.actors.values():
        if actor.name != caller:
            secrets |= actor.identity if sees_content else actor.identity | actor.content
    if target is not None and HOLDER[resource] != caller and not sees_content:
        secrets |= target.secrets
    return secrets


@pytest.mark.parametrize(("endpoint", "credential", "resource"), list(cases()))
def test_each_credential_gets_the_documented_answer_and_only_its_own_data(
    world: World, endpoint: Endpoint, credential: Credential, resource: Resource
) -> None:
    w = world
    target = target_for(w, endpoint, resource)
    holder = w.actors[HOLDER[resource]]
    expected = expected_status(endpoint, credential, resource)
    watch = endpoint.mutates and expected >= 400
    before = observe(w, target, holder) if watch else None
    ids = {} if target is None else target.ids
    path = endpoint.path.format(**{param: ids[PATH_KEYS[param]] for param in endpoint.params})

    started = now_us()
    headers = w.headers(credential, fresh_session=endpoint.signs_out)
    if endpoint.picture:
        headers = {**headers, "Content-Type": "image/png"}
    response = w.http.request(
        endpoint.method,
        path,
        headers=headers,
        json=endpoint.body() if endpoint.body else None,
        content=small_png() if endpoint.picture else None,
        params=endpoint.query,
    )
    if endpoint.undo is not None:
        endpoint.undo(w, started)

    request = f"{endpoint.method} {path}"
    assert response.status_code == expected, f"{request} -> {response.status_code} {response.text}"
    documented = w.openapi["paths"][endpoint.path][endpoint.method.lower()]["responses"]
    assert str(expected) in documented, f"{request}: {expected} is not documented"
    if expected >= 400:
        assert_error(response, expected)
    else:
        body = response.json()
        assert set(body) == SUCCESS_KEYS, body
        assert body["status_code"] == expected

    shown = response.json()
    shown["metadata"].pop("url")  # the request as received: the caller's own words
    haystack = json.dumps(shown, ensure_ascii=False)
    sent = str(response.request.url) + response.request.content.decode(errors="replace")
    leaked = sorted(
        secret
        for secret in forbidden_secrets(w, endpoint, credential, resource, target)
        if secret in haystack and secret not in sent
    )
    assert leaked == [], f"{request} as {credential} shows {leaked}: {response.text}"

    if before is not None:
        assert observe(w, target, holder) == before, f"{request} as {credential} changed state"


def test_every_operation_that_takes_a_credential_is_in_the_matrix(world: World) -> None:
    documented = {
        (method.upper(), path)
        for path, operations in world.openapi["paths"].items()
        for method, operation in operations.items()
        if isinstance(operation, dict) and operation.get("security")
    }
    covered = {(endpoint.method, endpoint.path) for endpoint in ENDPOINTS}
    assert documented - covered == set()
    assert (
        covered
        - {
            (method.upper(), path)
            for path, operations in world.openapi["paths"].items()
            for method in operations
        }
        == set()
    )
