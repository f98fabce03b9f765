"""GET /openapi.json is an OpenAPI 3.1 document whose schemas match what the server really sends."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from jsonschema import Draft202012Validator, FormatChecker

from tests.conftest import Creator

INBOX = "/message/{link_id}"
THREAD = "/message/{link_id}/{message_id}"
LIKE = "/message/{link_id}/{message_id}/like"
REPLY = "/message/{link_id}/{message_id}/{reply_id}"

OPERATIONS = {
    (INBOX, "get"),
    (INBOX, "post"),
    (THREAD, "get"),
    (THREAD, "post"),
    (THREAD, "delete"),
    (LIKE, "put"),
    (REPLY, "delete"),
    ("/healthz", "get"),
    ("/readyz", "get"),
}
CREATOR_ONLY = [(THREAD, "post"), (THREAD, "delete"), (LIKE, "put"), (REPLY, "delete")]
SUCCESS = {
    (INBOX, "get"): 200,
    (INBOX, "post"): 201,
    (THREAD, "get"): 200,
    (THREAD, "post"): 201,
    (THREAD, "delete"): 200,
    (LIKE, "put"): 200,
    (REPLY, "delete"): 200,
    ("/healthz", "get"): 200,
    ("/readyz", "get"): 200,
}
HTTP_METHODS = {"get", "put", "post", "delete", "options", "head", "patch", "trace"}
UNKNOWN_ULID = "01jabcdefghjkmnpqrstvwxyz0"


@pytest.fixture
def doc(api: httpx.Client) -> dict[str, Any]:
    response = api.get("/openapi.json")
    assert response.status_code == 200, response.text
    return response.json()  # type: ignore[no-any-return]


def validator(doc: dict[str, Any], schema: dict[str, Any]) -> Draft202012Validator:
    """A validator for ``schema`` whose ``#/components/...`` references resolve in ``doc``."""
    return Draft202012Validator(
        {**schema, "components": doc["components"]}, format_checker=FormatChecker()
    )


def response_schema(doc: dict[str, Any], path: str, method: str, status: int) -> dict[str, Any]:
    responses = doc["paths"][path][method]["responses"]
    assert str(status) in responses, f"{method.upper()} {path} does not document {status}"
    schema: dict[str, Any] = responses[str(status)]["content"]["application/json"]["schema"]
    return schema


def resolve(doc: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        assert schema["$ref"].startswith("#/components/schemas/"), schema
        schema = doc["components"]["schemas"][schema["$ref"].rsplit("/", 1)[1]]
    return schema


def schema_errors(doc: dict[str, Any], schema: dict[str, Any], instance: Any) -> list[str]:
    return [
        f"{'/'.join(map(str, e.absolute_path))}: {e.message}"
        for e in validator(doc, schema).iter_errors(instance)
    ]


def walk(node: Any) -> Iterator[Any]:
    yield node
    children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else []
    for child in children:
        yield from walk(child)


def test_document_is_openapi_3_1(api: httpx.Client, doc: dict[str, Any]) -> None:
    assert api.get("/openapi.json").headers["content-type"].startswith("application/json")
    assert doc["openapi"].startswith("3.1.")
    assert doc["info"]["title"]
    assert doc["info"]["version"]
    operation_ids = []
    for path, item in doc["paths"].items():
        assert path.startswith("/")
        for method, operation in item.items():
            if method not in HTTP_METHODS:
                continue
            operation_ids.append(operation["operationId"])
            assert operation["responses"], f"{method} {path} documents no response"
            declared = {p["name"] for p in operation.get("parameters", []) if p["in"] == "path"}
            templated = {part[1:-1] for part in path.split("/") if part.startswith("{")}
            assert declared == templated, f"{method} {path}: path parameters {declared}"
    assert len(operation_ids) == len(set(operation_ids)), "operationIds must be unique"
    for node in walk(doc):
        if isinstance(node, dict) and isinstance(node.get("$ref"), str):
            resolve(doc, node)  # raises KeyError on a dangling reference


def test_documents_every_message_and_health_operation(doc: dict[str, Any]) -> None:
    documented = {
        (path, method)
        for path, item in doc["paths"].items()
        for method in item
        if method in HTTP_METHODS
    }
    assert documented >= OPERATIONS, sorted(OPERATIONS - documented)


@pytest.mark.parametrize("path", [INBOX, THREAD])
def test_message_body_documents_1_to_500_characters(doc: dict[str, Any], path: str) -> None:
    body = doc["paths"][path]["post"]["requestBody"]
    assert body.get("required") is True
    schema = resolve(doc, body["content"]["application/json"]["schema"])
    assert "message_content" in schema["required"]
    content = schema["properties"]["message_content"]
    assert content["type"] == "string"
    assert content["minLength"] == 1
    assert content["maxLength"] == 500
    checks = validator(doc, body["content"]["application/json"]["schema"])
    assert checks.is_valid({"message_content": "x" * 500})
    assert not checks.is_valid({"message_content": "x" * 501})
    assert not checks.is_valid({"message_content": ""})
    assert not checks.is_valid({})


def test_creator_operations_document_the_api_key_header(doc: dict[str, Any]) -> None:
    schemes = doc["components"]["securitySchemes"]
    api_key = [
        name
        for name, s in schemes.items()
        if s["type"] == "apiKey" and s["in"] == "header" and s["name"] == "X-API-Key"
    ]
    assert api_key, schemes
    for path, method in CREATOR_ONLY:
        security = doc["paths"][path][method].get("security", doc.get("security"))
        assert security, f"{method.upper()} {path} documents no credential"
        assert {} not in security, f"{method.upper()} {path} documents the credential as optional"
        assert any(api_key[0] in requirement for requirement in security)
    assert not doc["paths"][INBOX]["post"].get("security", doc.get("security"))


# Routes an account scheduled for erasure may still use: to see or cancel the deletion.
STILL_OPEN_WHILE_ERASING = {("/account/deletion", "get"), ("/account/deletion", "delete")}


def test_operations_taking_a_credential_document_its_refusals(doc: dict[str, Any]) -> None:
    """A credential can be wrong (401) or belong to an account scheduled for erasure (403
    ``account_deletion_pending``): every operation that reads one documents both."""
    undocumented = []
    for path, operations in doc["paths"].items():
        for method, operation in operations.items():
            if not isinstance(operation, dict) or not operation.get("security"):
                continue
            expected = {"401"} if (path, method) in STILL_OPEN_WHILE_ERASING else {"401", "403"}
            missing = expected - set(operation["responses"])
            if missing:
                undocumented.append(f"{method.upper()} {path}: {sorted(missing)}")
    assert undocumented == []


@pytest.mark.parametrize("path", [INBOX, THREAD])
def test_public_reads_document_the_credential_as_optional(
    api: httpx.Client, creator: Creator, doc: dict[str, Any], path: str
) -> None:
    message = api.post(f"/message/{creator.link_id}", json={"message_content": "q"}).json()
    message_id = message["data"]["id"]
    reply = api.post(
        f"/message/{creator.link_id}/{message_id}",
        json={"message_content": "a"},
        headers=creator.headers,
    )
    assert reply.status_code == 201, reply.text
    anonymous = api.get(path.format(link_id=creator.link_id, message_id=message_id))
    assert anonymous.status_code == 200, anonymous.text
    security = doc["paths"][path]["get"].get("security", doc.get("security")) or [{}]
    assert {} in security, f"GET {path} answers without a credential but documents {security}"


def test_success_status_code_is_documented_as_its_one_value(doc: dict[str, Any]) -> None:
    loose = []
    for (path, method), status in sorted(SUCCESS.items()):
        envelope = resolve(doc, response_schema(doc, path, method, status))
        checks = validator(doc, envelope["properties"]["status_code"])
        assert checks.is_valid(status), f"{method.upper()} {path}"
        if checks.is_valid(200 if status == 201 else 201):
            loose.append(f"{method.upper()} {path}")
    assert loose == [], "status_code documented as any integer, not its success value"


def test_times_are_documented_as_date_time(doc: dict[str, Any]) -> None:
    schemas = doc["components"]["schemas"]
    fields = [
        ("MessageOut", "created_at"),
        ("ReplyOut", "created_at"),
        ("InboxItem", "created_at"),
        ("Metadata", "timestamp"),
    ]
    untyped = [
        f"{name}.{field}"
        for name, field in fields
        if schemas[name]["properties"][field].get("format") != "date-time"
    ]
    assert untyped == [], "documented as plain strings, not date-time"


# --- Real responses against the documented schemas ---------------------------------------


@dataclass(frozen=True)
class World:
    api: httpx.Client
    owner: Creator
    stranger: Creator

    @property
    def inbox(self) -> str:
        return f"/message/{self.owner.link_id}"

    def message(self) -> str:
        sent = self.api.post(self.inbox, json={"message_content": "what is your favourite tea?"})
        assert sent.status_code == 201, sent.text
        return str(sent.json()["data"]["id"])

    def reply(self, message_id: str) -> str:
        sent = self.api.post(
            f"{self.inbox}/{message_id}",
            json={"message_content": "oolong"},
            headers=self.owner.headers,
        )
        assert sent.status_code == 201, sent.text
        return str(sent.json()["data"]["reply_message_id"])

    def answered(self) -> tuple[str, str]:
        message_id = self.message()
        return message_id, self.reply(message_id)


BAD_KEY = {"X-API-Key": "anb_" + "0" * 40}
HELLO = {"message_content": "hello"}
TOO_BIG = b'{"message_content": "' + b"x" * (17 * 1024) + b'"}'


def list_as_creator(w: World) -> httpx.Response:
    w.answered()
    w.message()
    return w.api.get(w.inbox, headers=w.owner.headers)


def list_as_visitor(w: World) -> httpx.Response:
    w.answered()
    return w.api.get(w.inbox)


def replies_of_answered(w: World) -> httpx.Response:
    message_id, _ = w.answered()
    return w.api.get(f"{w.inbox}/{message_id}")


def toggle_like(w: World) -> httpx.Response:
    return w.api.put(f"{w.inbox}/{w.message()}/like", headers=w.owner.headers)


def delete_reply(w: World) -> httpx.Response:
    message_id, reply_id = w.answered()
    return w.api.delete(f"{w.inbox}/{message_id}/{reply_id}", headers=w.owner.headers)


def delete_reply_as(headers: dict[str, str] | None) -> Callable[[World], httpx.Response]:
    def send(w: World) -> httpx.Response:
        message_id, reply_id = w.answered()
        return w.api.delete(
            f"{w.inbox}/{message_id}/{reply_id}",
            headers=w.stranger.headers if headers is None else headers,
        )

    return send


CASES: list[Any] = [
    # POST /message/{link_id}
    pytest.param(INBOX, "post", 201, lambda w: w.api.post(w.inbox, json=HELLO), id="create-201"),
    pytest.param(
        INBOX,
        "post",
        400,
        lambda w: w.api.post(w.inbox, json={"message_content": "x" * 501}),
        id="create-400",
    ),
    pytest.param(
        INBOX,
        "post",
        404,
        lambda w: w.api.post("/message/nolinkhere0", json=HELLO),
        id="create-404",
    ),
    pytest.param(
        INBOX,
        "post",
        413,
        lambda w: w.api.post(
            w.inbox, content=TOO_BIG, headers={"content-type": "application/json"}
        ),
        id="create-413",
    ),
    pytest.param(
        INBOX,
        "post",
        415,
        lambda w: w.api.post(w.inbox, content=b"hello", headers={"content-type": "text/plain"}),
        id="create-415",
    ),
    # GET /message/{link_id}
    pytest.param(INBOX, "get", 200, list_as_creator, id="list-200-creator"),
    pytest.param(INBOX, "get", 200, list_as_visitor, id="list-200-visitor"),
    pytest.param(
        INBOX, "get", 400, lambda w: w.api.get(w.inbox, params={"limit": 0}), id="list-400"
    ),
    pytest.param(INBOX, "get", 401, lambda w: w.api.get(w.inbox, headers=BAD_KEY), id="list-401"),
    pytest.param(INBOX, "get", 404, lambda w: w.api.get("/message/nolinkhere0"), id="list-404"),
    # POST /message/{link_id}/{message_id}
    pytest.param(
        THREAD,
        "post",
        201,
        lambda w: w.api.post(f"{w.inbox}/{w.message()}", json=HELLO, headers=w.owner.headers),
        id="reply-201",
    ),
    pytest.param(
        THREAD,
        "post",
        400,
        lambda w: w.api.post(
            f"{w.inbox}/{w.message()}", json={"message_content": ""}, headers=w.owner.headers
        ),
        id="reply-400",
    ),
    pytest.param(
        THREAD,
        "post",
        401,
        lambda w: w.api.post(f"{w.inbox}/{w.message()}", json=HELLO),
        id="reply-401",
    ),
    pytest.param(
        THREAD,
        "post",
        403,
        lambda w: w.api.post(f"{w.inbox}/{w.message()}", json=HELLO, headers=w.stranger.headers),
        id="reply-403",
    ),
    pytest.param(
        THREAD,
        "post",
        404,
        lambda w: w.api.post(f"{w.inbox}/{UNKNOWN_ULID}", json=HELLO, headers=w.owner.headers),
        id="reply-404",
    ),
    pytest.param(
        THREAD,
        "post",
        415,
        lambda w: w.api.post(
            f"{w.inbox}/{w.message()}",
            content=b"hi",
            headers={"content-type": "text/plain", **w.owner.headers},
        ),
        id="reply-415",
    ),
    # GET /message/{link_id}/{message_id}
    pytest.param(THREAD, "get", 200, replies_of_answered, id="replies-200"),
    pytest.param(
        THREAD,
        "get",
        400,
        lambda w: w.api.get(
            f"{w.inbox}/{w.message()}", params={"cursor": "nope"}, headers=w.owner.headers
        ),
        id="replies-400",
    ),
    pytest.param(
        THREAD,
        "get",
        401,
        lambda w: w.api.get(f"{w.inbox}/{w.message()}", headers=BAD_KEY),
        id="replies-401",
    ),
    pytest.param(
        THREAD,
        "get",
        404,
        lambda w: w.api.get(f"{w.inbox}/{UNKNOWN_ULID}", headers=w.owner.headers),
        id="replies-404",
    ),
    # DELETE /message/{link_id}/{message_id}
    pytest.param(
        THREAD,
        "delete",
        200,
        lambda w: w.api.delete(f"{w.inbox}/{w.message()}", headers=w.owner.headers),
        id="delete-message-200",
    ),
    pytest.param(
        THREAD,
        "delete",
        400,
        lambda w: w.api.delete(f"{w.inbox}/not-a-ulid", headers=w.owner.headers),
        id="delete-message-400",
    ),
    pytest.param(
        THREAD,
        "delete",
        401,
        lambda w: w.api.delete(f"{w.inbox}/{w.message()}"),
        id="delete-message-401",
    ),
    pytest.param(
        THREAD,
        "delete",
        403,
        lambda w: w.api.delete(f"{w.inbox}/{w.message()}", headers=w.stranger.headers),
        id="delete-message-403",
    ),
    pytest.param(
        THREAD,
        "delete",
        404,
        lambda w: w.api.delete(f"{w.inbox}/{UNKNOWN_ULID}", headers=w.owner.headers),
        id="delete-message-404",
    ),
    # PUT /message/{link_id}/{message_id}/like
    pytest.param(LIKE, "put", 200, toggle_like, id="like-200"),
    pytest.param(
        LIKE,
        "put",
        400,
        lambda w: w.api.put(f"{w.inbox}/not-a-ulid/like", headers=w.owner.headers),
        id="like-400",
    ),
    pytest.param(
        LIKE,
        "put",
        401,
        lambda w: w.api.put(f"{w.inbox}/{w.message()}/like", headers=BAD_KEY),
        id="like-401",
    ),
    pytest.param(
        LIKE,
        "put",
        403,
        lambda w: w.api.put(f"{w.inbox}/{w.message()}/like", headers=w.stranger.headers),
        id="like-403",
    ),
    pytest.param(
        LIKE,
        "put",
        404,
        lambda w: w.api.put(f"{w.inbox}/{UNKNOWN_ULID}/like", headers=w.owner.headers),
        id="like-404",
    ),
    # DELETE /message/{link_id}/{message_id}/{reply_id}
    pytest.param(REPLY, "delete", 200, delete_reply, id="delete-reply-200"),
    pytest.param(
        REPLY,
        "delete",
        400,
        lambda w: w.api.delete(f"{w.inbox}/{w.message()}/not-a-ulid", headers=w.owner.headers),
        id="delete-reply-400",
    ),
    pytest.param(REPLY, "delete", 401, delete_reply_as({}), id="delete-reply-401"),
    pytest.param(REPLY, "delete", 403, delete_reply_as(None), id="delete-reply-403"),
    pytest.param(
        REPLY,
        "delete",
        404,
        lambda w: w.api.delete(f"{w.inbox}/{w.message()}/{UNKNOWN_ULID}", headers=w.owner.headers),
        id="delete-reply-404",
    ),
    # Probes
    pytest.param("/healthz", "get", 200, lambda w: w.api.get("/healthz"), id="healthz-200"),
    pytest.param("/readyz", "get", 200, lambda w: w.api.get("/readyz"), id="readyz-200"),
]


@pytest.fixture
def world(api: httpx.Client, make_creator: Callable[[], Creator]) -> World:
    return World(api=api, owner=make_creator(), stranger=make_creator())


@pytest.mark.parametrize(("path", "method", "status", "send"), CASES)
def test_documented_schema_validates_real_response(
    doc: dict[str, Any],
    world: World,
    path: str,
    method: str,
    status: int,
    send: Callable[[World], httpx.Response],
) -> None:
    response = send(world)
    assert response.status_code == status, response.text
    assert response.headers["content-type"].split(";")[0] == "application/json"
    body = response.json()
    assert body["status_code"] == status
    if status >= 400:
        assert body["data"] is None
    errors = schema_errors(doc, response_schema(doc, path, method, status), body)
    assert errors == [], errors


def test_success_and_error_schemas_tell_bodies_apart(doc: dict[str, Any], world: World) -> None:
    created = world.api.post(world.inbox, json=HELLO).json()
    missing = world.api.post("/message/nolinkhere0", json=HELLO).json()
    success = response_schema(doc, INBOX, "post", 201)
    error = response_schema(doc, INBOX, "post", 404)
    assert schema_errors(doc, success, created) == []
    assert schema_errors(doc, error, missing) == []
    assert schema_errors(doc, success, missing), "an error body passes as a created message"
    assert schema_errors(doc, error, created), "a created message passes as an error"
    without_id = {**created, "data": {k: v for k, v in created["data"].items() if k != "id"}}
    assert schema_errors(doc, success, without_id), "a message without id passes"
    liked = toggle_like(world).json()
    like_schema = response_schema(doc, LIKE, "put", 200)
    assert schema_errors(doc, like_schema, liked) == []
    as_text = {**liked, "data": {**liked["data"], "like_by_creator": "true"}}
    assert schema_errors(doc, like_schema, as_text), "like_by_creator as a string passes"
