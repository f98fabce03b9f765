"""The contract is exact (issue 16): what /openapi.json declares is what the service does.

First the claim itself: an unmodified ``schemathesis run --checks all`` over the document,
in its four phases (examples, coverage, fuzzing, stateful), with a creator's key and with
an admin's, finds nothing, on SQLite and on PostgreSQL. Each run has a server of its own
(an admin's fuzzer may block 127.0.0.1 site-wide, and a creator's deletes its own link),
and is bounded: a fixed seed and Hypothesis derandomized, so every run sends the same
requests (server-made ids aside; no example database), MAX_EXAMPLES per operation,
REQUEST_TIMEOUT_S a request.

Then each rule the document gained, through HTTP, so that a failure names the rule.
"""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from anonbox.core.settings import Settings
from tests.actions import assert_error, inbox_ids, post_message
from tests.conftest import Creator
from tests.links.test_links import LINK_SETTINGS
from tests.server import Server
from tests.support.admin import make_account
from tests.support.http import loopback_get

# Fixed, so every run sends the same requests; SCHEMATHESIS_SEED tries another by hand.
SEED = int(os.environ.get("SCHEMATHESIS_SEED", "20261124"))
MAX_EXAMPLES = 10
REQUEST_TIMEOUT_S = 10
RUN_TIMEOUT_S = 600  # a hung run fails the test instead of the CI job
SCHEMATHESIS = str(Path(sys.executable).with_name("schemathesis"))
METHODS = ("get", "put", "post", "delete", "patch")
PHASES = "examples,coverage,fuzzing,stateful"


@pytest.mark.parametrize("role", ["creator", "admin"])
@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_schemathesis_with_every_check_finds_nothing(
    backend: str,
    role: str,
    database_url_factory: Callable[[str], str],
    tmp_path: Path,
) -> None:
    server = Server(database_url_factory(backend), tmp_path / "server.log").start()
    try:
        key = make_account(server.database_url, admin=role == "admin").creator.api_key
        command = [
            SCHEMATHESIS,
            "run",
            f"{server.url}/openapi.json",
            "--checks=all",
            f"--phases={PHASES}",
            f"--header=X-API-Key: {key}",
            f"--max-examples={MAX_EXAMPLES}",
            f"--seed={SEED}",
            "--generation-deterministic",
            f"--request-timeout={REQUEST_TIMEOUT_S}",
            "--no-color",
        ]
        started = time.monotonic()
        # In an empty directory: no schemathesis.toml of anyone's tunes this run.
        run = subprocess.run(
            command, cwd=tmp_path, capture_output=True, text=True, timeout=RUN_TIMEOUT_S
        )
        took = time.monotonic() - started
    finally:
        server.stop()
    summary = run.stdout.rstrip().rsplit("\n", 1)[-1]
    assert run.returncode == 0, f"{summary}\n{run.stdout[-20000:]}\n{run.stderr[-5000:]}"
    assert "failure" not in summary, run.stdout[-5000:]
    print(f"schemathesis ({backend}, {role}) in {took:.0f} s: {summary}")


# --- the document -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def doc(server: Server) -> dict[str, Any]:
    response = loopback_get(f"{server.url}/openapi.json", timeout=30)
    assert response.status_code == 200, response.text
    return response.json()  # type: ignore[no-any-return]


def resolved(doc: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        schema = doc["components"]["schemas"][schema["$ref"].rsplit("/", 1)[1]]
    return schema


def body_schema(doc: dict[str, Any], path: str, method: str) -> dict[str, Any]:
    content = doc["paths"][path][method]["requestBody"]["content"]["application/json"]
    return resolved(doc, content["schema"])


def operations(doc: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    for path, item in doc["paths"].items():
        for method in METHODS:
            if method in item:
                yield path, method, item[method]


# --- text: the pattern the document states is the rule the service applies ---------------

TEXTS = {
    "a message": True,
    "two\nlines\ttabbed\r\n": True,
    "\u3000 ideographic space, then words": True,
    "\U0001f4ac": True,
    " ": False,  # only whitespace
    " \t\n\r\u3000\u2028 ": False,
    "a\x00b": False,  # NUL
    "a\x7f": False,  # DEL
    "question\x85": False,  # a C1 control that str.strip() takes for whitespace
    "\x1c question": False,  # a C0 control that str.strip() takes for whitespace
}


@pytest.fixture
def link_prompt(api: httpx.Client, creator: Creator) -> Callable[[], str]:
    def prompt() -> str:
        got = api.get(f"/links/{creator.link_id}", headers=creator.headers)
        assert got.status_code == 200, got.text
        return str(got.json()["data"]["prompt"])

    return prompt


@pytest.mark.parametrize("text", list(TEXTS), ids=repr)
def test_the_documented_text_pattern_is_the_rule_for_a_message(
    api: httpx.Client, creator: Creator, doc: dict[str, Any], text: str
) -> None:
    pattern = body_schema(doc, "/message/{link_id}", "post")["properties"]["message_content"]
    allowed = re.search(pattern["pattern"], text) is not None
    assert allowed is TEXTS[text]
    before = inbox_ids(api, creator)
    sent = api.post(f"/message/{creator.link_id}", json={"message_content": text})
    if allowed:
        assert sent.status_code == 201, sent.text
        return
    body = assert_error(sent, 400, "validation_failed")
    assert body["error"]["fields"][0]["field"] == "message_content"
    assert body["error"]["fields"][0]["problem"] in {"blank", "control_character"}
    assert inbox_ids(api, creator) == before  # nothing stored


@pytest.mark.parametrize("text", [t for t, fine in TEXTS.items() if not fine], ids=repr)
def test_every_free_text_field_documents_the_pattern_and_refuses_what_it_refuses(
    api: httpx.Client,
    creator: Creator,
    doc: dict[str, Any],
    link_prompt: Callable[[], str],
    text: str,
) -> None:
    message_id = post_message(api, creator.link_id, "anything to report?")
    prompt = link_prompt()
    fields = [
        ("/message/{link_id}", "post", "message_content"),
        ("/message/{link_id}/{message_id}", "post", "message_content"),
        ("/links", "post", "prompt"),
        ("/links/{link_id}", "patch", "prompt"),
        ("/message/{link_id}/{message_id}/report", "post", "reason"),
        ("/muted-words", "post", "word"),
    ]
    for template, method, field in fields:
        path = template.format(link_id=creator.link_id, message_id=message_id)
        schema = body_schema(doc, template, method)["properties"][field]
        assert re.search(schema["pattern"], text) is None, (template, field)
        refused = api.request(method, path, json={field: text}, headers=creator.headers)
        body = assert_error(refused, 400, "validation_failed")
        assert body["error"]["fields"][0]["field"] == field, body
    assert link_prompt() == prompt
    listed = api.get("/muted-words", headers=creator.headers).json()["data"]["items"]
    assert listed == []
    # The search query says what a message says; the phrases an admin mutes what a muted
    # word says (matching removes invisible characters, so a word of them alone is blank).
    search = doc["paths"]["/message/{link_id}/search"]["get"]["parameters"]
    (q,) = [p for p in search if p["name"] == "q"]
    message = body_schema(doc, "/message/{link_id}", "post")["properties"]["message_content"]
    assert q["schema"]["pattern"] == message["pattern"]
    phrase = body_schema(doc, "/admin/muted-phrases", "post")["properties"]["phrase"]
    assert phrase["pattern"] == schema["pattern"]


# Words that matching would empty: only default-ignorable code points (and spaces). The
# document's pattern refuses each, and so does the service ("blank"); schemathesis found
# the difference when the pattern was the message's (issue 32, part 9).
INVISIBLE_WORDS = ["\u200b", "\u200b\u200d", " \ufeff ", "\u00ad", "\u2060\ufe0f", "\u034f"]


@pytest.mark.parametrize("word", INVISIBLE_WORDS)
def test_a_muted_word_of_invisible_characters_is_refused_as_the_document_says(
    doc: dict[str, Any], api: httpx.Client, creator: Creator, word: str
) -> None:
    schema = body_schema(doc, "/muted-words", "post")["properties"]["word"]
    assert re.search(schema["pattern"], word) is None
    refused = api.post("/muted-words", json={"word": word}, headers=creator.headers)
    body = assert_error(refused, 400, "validation_failed")
    assert body["error"]["fields"] == [{"field": "word", "problem": "blank"}]
    assert api.get("/muted-words", headers=creator.headers).json()["data"]["items"] == []
    kept = api.post("/muted-words", json={"word": "a\u200bb"}, headers=creator.headers)
    assert kept.status_code == 201, kept.text  # visible letters with one between: a word
    assert re.search(schema["pattern"], "a\u200bb")


# The body schemathesis sent with seed 1 (issue 32, part 9): extra properties (allowed)
# and a bio with U+0005 in it. The document set no pattern on bio, so it counted as valid,
# and the service refused it: "schema-valid request rejected".
SEED_1_PROFILE = {
    "e\u00d3\u00c2": {"\u00e6\u00e3": True, "\u00ec{\u001d": None},
    "z@": {"n": True, "": True},
    "": [["", -311, {}]],
    "bio": "w\u0005\u00cb\u00bd\u00f0\u001a\u00e8\fP",
    "display_name": "\u00fdZ\u00f0\u00ed",
}
# A bio may be blank (it removes the bio), so only the controls are its rule; these are
# blank to str.strip() and were taken for "remove it" before the controls were looked at.
BLANK_CONTROLS = ["\x1c", "\x1f \x1e", "\x85", " \x0b\x0c "]
# Names that draw nothing (issue 39, item 6): refused as a display name or a prompt, a
# blank bio. Characters of the first plane only: the pattern cannot name the others.
INVISIBLE_NAMES = [
    "\u200b",
    "\u2060\ufeff",
    "\u200d\u200c",
    "\u3164",
    "\u2800",
    "\uffa0 \u115f\u1160",
    " \u200b\u3164 \u2800\u00ad\ufe0f ",
    "\u202e\u2069",
]
VISIBLE_WITH_INVISIBLE = ["a\u200bb", "\u3164x", "\u2800\u2801", "\u202eevil"]


@pytest.mark.parametrize(
    "patch",
    [
        SEED_1_PROFILE,
        *({"bio": text} for text in [*TEXTS, *BLANK_CONTROLS]),
        *({"display_name": text} for text in [*TEXTS, *BLANK_CONTROLS]),
        *({"bio": text} for text in [*INVISIBLE_NAMES, *VISIBLE_WITH_INVISIBLE]),
        *({"display_name": text} for text in [*INVISIBLE_NAMES, *VISIBLE_WITH_INVISIBLE]),
    ],
    ids=repr,
)
def test_the_profile_is_refused_exactly_when_its_documented_patterns_refuse_it(
    api: httpx.Client, creator: Creator, doc: dict[str, Any], patch: dict[str, Any]
) -> None:
    properties = body_schema(doc, "/account/profile", "patch")["properties"]
    valid = all(
        re.search(properties[field].get("pattern", ""), value) is not None
        for field, value in patch.items()
        if field in properties
    )
    before = api.get("/account/profile", headers=creator.headers).json()["data"]
    answer = api.patch("/account/profile", json=patch, headers=creator.headers)
    if valid:
        assert answer.status_code == 200, answer.text
        return
    body = assert_error(answer, 400, "validation_failed")
    assert {f["problem"] for f in body["error"]["fields"]} <= {"blank", "control_character"}
    assert api.get("/account/profile", headers=creator.headers).json()["data"] == before


@pytest.mark.parametrize("text", [*INVISIBLE_NAMES, *VISIBLE_WITH_INVISIBLE], ids=repr)
def test_a_prompt_is_refused_exactly_when_its_documented_pattern_refuses_it(
    api: httpx.Client,
    creator: Creator,
    doc: dict[str, Any],
    link_prompt: Callable[[], str],
    text: str,
) -> None:
    for template, method in (("/links", "post"), ("/links/{link_id}", "patch")):
        pattern = body_schema(doc, template, method)["properties"]["prompt"]["pattern"]
        assert (re.search(pattern, text) is not None) is (text in VISIBLE_WITH_INVISIBLE)
    before = link_prompt()
    answer = api.patch(f"/links/{creator.link_id}", json={"prompt": text}, headers=creator.headers)
    if text in VISIBLE_WITH_INVISIBLE:
        assert answer.status_code == 200, answer.text
        assert link_prompt() == text
        return
    body = assert_error(answer, 400, "validation_failed")
    assert body["error"]["fields"] == [{"field": "prompt", "problem": "blank"}]
    assert link_prompt() == before


# --- types: a JSON body has real types -----------------------------------------------------


@pytest.mark.parametrize(
    "patch",
    [
        {"paused": "yes"},
        {"paused": "true"},
        {"paused": 1},
        {"paused": 0},
        {"paused": None},
        {"hide_dates": "false"},
        {"pause_for_hours": "3"},
        {"pause_for_hours": 2.5},
        {"pause_for_hours": True},
        {"prompt": 5},
        {"muted": 1},
    ],
    ids=repr,
)
def test_a_value_of_another_type_is_refused_not_converted(
    api: httpx.Client, creator: Creator, patch: dict[str, Any]
) -> None:
    before = api.get(f"/links/{creator.link_id}", headers=creator.headers).json()["data"]
    refused = api.patch(f"/links/{creator.link_id}", json=patch, headers=creator.headers)
    body = assert_error(refused, 400, "validation_failed")
    assert body["error"]["fields"] == [{"field": next(iter(patch)), "problem": "wrong_type"}]
    after = api.get(f"/links/{creator.link_id}", headers=creator.headers).json()["data"]
    assert after == before


@pytest.mark.parametrize("body", [{"message_content": 5}, {"message_content": ["hi"]}], ids=repr)
def test_a_number_or_a_list_is_not_a_message(
    api: httpx.Client, creator: Creator, body: dict[str, Any]
) -> None:
    refused = api.post(f"/message/{creator.link_id}", json=body)
    answer = assert_error(refused, 400, "validation_failed")
    assert answer["error"]["fields"] == [{"field": "message_content", "problem": "wrong_type"}]
    assert inbox_ids(api, creator) == []


def test_a_whole_number_written_with_a_point_is_an_integer(
    api: httpx.Client, creator: Creator
) -> None:
    """JSON Schema's ``integer`` takes 3.0, so the service does too."""
    paused = api.patch(
        f"/links/{creator.link_id}", json={"pause_for_hours": 3.0}, headers=creator.headers
    )
    assert paused.status_code == 200, paused.text
    assert paused.json()["data"]["paused"] is True


# --- bodies: what the document says of a body as a whole -----------------------------------


def test_a_patch_with_no_setting_is_refused_as_the_document_says(
    api: httpx.Client, creator: Creator, doc: dict[str, Any]
) -> None:
    schema = body_schema(doc, "/links/{link_id}", "patch")
    assert schema["minProperties"] == 1
    settings = {*LINK_SETTINGS, "pause_for_hours"}
    assert schema["anyOf"] == [{"required": [setting]} for setting in schema["properties"]]
    assert set(schema["properties"]) == settings
    assert schema["not"] == {"required": ["paused", "pause_for_hours"]}
    before = api.get(f"/links/{creator.link_id}", headers=creator.headers).json()["data"]
    for patch in ({}, {"pasued": True}, {"paused": True, "pause_for_hours": 2}):
        refused = api.patch(f"/links/{creator.link_id}", json=patch, headers=creator.headers)
        assert_error(refused, 400, "validation_failed")
    after = api.get(f"/links/{creator.link_id}", headers=creator.headers).json()["data"]
    assert after == before


# --- sizes: a body within the document's bounds is never too large --------------------------

BODY_LIMIT = Settings().max_body_bytes
ESCAPED = 12  # the most bytes JSON spends on a code point: an astral one as two \\uXXXX escapes
SCALAR = 25  # the longest number JSON writes (-1.7976931348623157e+308), true, null


def longest(doc: dict[str, Any], schema: dict[str, Any]) -> float:
    """The most bytes a JSON value within ``schema``'s bounds can take, its named properties
    all present, whatever the types its pattern or format allow: inf when a string or an
    array has no bound. Bounds written beside a ``oneOf`` apply to each alternative."""
    schema = resolved(doc, schema)
    alternatives = schema.get("oneOf", []) + schema.get("anyOf", [])
    typed = [a for a in alternatives if "type" in a or "$ref" in a]
    if typed:
        siblings = {k: v for k, v in schema.items() if k not in {"oneOf", "anyOf"}}
        return max(longest(doc, {**resolved(doc, a), **siblings}) for a in typed)
    if "enum" in schema:
        return max(len(json.dumps(value)) for value in schema["enum"])
    match schema.get("type"):
        case "string":
            return 2 + ESCAPED * schema.get("maxLength", math.inf)
        case "array":
            item = longest(doc, schema["items"]) + 1
            return 2 + item * schema.get("maxItems", math.inf)
        case "object":
            properties = schema.get("properties", {}).items()
            return 2 + sum(len(json.dumps(k)) + 1 + longest(doc, v) + 1 for k, v in properties)
    return SCALAR


def test_every_body_within_the_documented_bounds_fits_the_body_limit(
    doc: dict[str, Any],
) -> None:
    """A client (or a fuzzer) that keeps to the document's lengths and escapes every
    character is answered about what it sent, never 413 (which says nothing of what was
    wrong, and which a 400-or-201 client does not expect)."""
    sizes = {
        f"{method.upper()} {path}": longest(doc, op["requestBody"]["content"][kind]["schema"])
        for path, method, op in operations(doc)
        if "requestBody" in op
        for kind in op["requestBody"]["content"]
        if kind == "application/json"  # a picture's body has its own limit (below)
    }
    assert len(sizes) > 10
    too_large = {operation: size for operation, size in sizes.items() if size > BODY_LIMIT}
    assert too_large == {}, f"over {BODY_LIMIT} bytes: {too_large}"


def test_the_only_bodies_not_json_are_pictures_with_their_own_limit(doc: dict[str, Any]) -> None:
    others = {
        f"{method.upper()} {path}": op["requestBody"]["content"]
        for path, method, op in operations(doc)
        if "requestBody" in op and set(op["requestBody"]["content"]) != {"application/json"}
    }
    assert set(others) == {"PUT /account/avatar"}
    content = others["PUT /account/avatar"]
    assert set(content) == {"image/png", "image/jpeg", "image/webp"}
    assert {kind["schema"]["maxLength"] for kind in content.values()} == {2 * 1024 * 1024}


def test_the_longest_endpoint_escaped_is_refused_for_its_shape_not_its_size(
    api: httpx.Client, creator: Creator, doc: dict[str, Any]
) -> None:
    schema = body_schema(doc, "/push/subscriptions", "post")
    keys = resolved(doc, schema["properties"]["keys"])["properties"]
    body = {
        "endpoint": "\U0001f4ac" * schema["properties"]["endpoint"]["maxLength"],
        "keys": {
            "p256dh": "BA" + "A" * 85 + "=" * (keys["p256dh"]["maxLength"] - 87),
            "auth": "A" * 22 + "=" * (keys["auth"]["maxLength"] - 22),
        },
    }
    sent = json.dumps(body).encode()  # ensure_ascii: every astral character in 12 bytes
    assert len(sent) > 12_000
    headers = {**creator.headers, "Content-Type": "application/json"}
    refused = api.post("/push/subscriptions", content=sent, headers=headers)
    answer = assert_error(refused, 400, "validation_failed")
    assert [field["field"] for field in answer["error"]["fields"]] == ["endpoint"]
    assert api.get("/push/subscriptions", headers=creator.headers).json()["data"]["items"] == []


def test_every_body_that_refuses_unknown_fields_says_so(doc: dict[str, Any]) -> None:
    closed = {
        name
        for name, schema in doc["components"]["schemas"].items()
        if schema.get("additionalProperties") is False
    }
    assert closed == {"WebhookIn", "PushKeys", "EmailNoticesIn"}


# --- methods: OPTIONS, 405 and 404 ----------------------------------------------------------


def concrete(path: str) -> str:
    return re.sub(r"\{[^}]+\}", "abcdefgh", path)


def allowed(api: httpx.Client, path: str) -> set[str]:
    answer = api.options(path)
    assert answer.status_code == 204, answer.text
    return {method.strip() for method in answer.headers["allow"].split(",")}


def test_options_lists_every_documented_method_of_every_path(
    api: httpx.Client, doc: dict[str, Any]
) -> None:
    for path, item in doc["paths"].items():
        documented = {method.upper() for method in item if method in METHODS}
        assert allowed(api, concrete(path)) == documented | {"OPTIONS"}, path


@pytest.mark.parametrize(
    ("path", "methods"),
    [
        ("/signin/email", {"GET", "POST"}),
        ("/abcdefgh", {"GET", "POST"}),  # a link's send page
        ("/dashboard/links", {"GET", "POST"}),
        ("/account/deletion", {"GET", "POST", "DELETE"}),
        ("/static/app.css", {"GET", "HEAD"}),
    ],
)
def test_options_lists_every_method_of_a_page_too(
    api: httpx.Client, path: str, methods: set[str]
) -> None:
    assert allowed(api, path) == methods | {"OPTIONS"}


def test_a_method_no_route_takes_is_405_with_allow_and_an_unknown_id_is_404(
    api: httpx.Client, creator: Creator
) -> None:
    refused = assert_error(api.post("/blocks", headers=creator.headers), 405)
    assert refused["error"]["code"] == "method_not_allowed"
    # "unanswered" is a fixed segment for DELETE, and a message id for GET and POST.
    unknown = api.get(f"/message/{creator.link_id}/unanswered", headers=creator.headers)
    assert_error(unknown, 404, "not_found")
    assert "allow" not in unknown.headers
    assert allowed(api, f"/message/{creator.link_id}/unanswered") == {"DELETE", "OPTIONS"}


def test_a_405_names_the_methods_in_allow(api: httpx.Client) -> None:
    refused = api.put("/links")
    assert_error(refused, 405, "method_not_allowed")
    assert {m.strip() for m in refused.headers["allow"].split(",")} == {"GET", "POST", "OPTIONS"}


# --- headers and credentials -----------------------------------------------------------------


def test_every_429_and_503_documents_retry_after(doc: dict[str, Any]) -> None:
    seen = set()
    for path, method, operation in operations(doc):
        for status in ("429", "503"):
            if status in operation["responses"]:
                header = operation["responses"][status]["headers"]["Retry-After"]
                assert header["schema"] == {"type": "integer", "minimum": 0}, (path, method)
                # Every 503 carries it; a 429 asking for a proof of work does not.
                assert header["required"] is (status == "503"), (path, method)
                seen.add(status)
    assert seen == {"429", "503"}


def test_a_malformed_authorization_is_refused_even_beside_a_good_key(
    api: httpx.Client, creator: Creator
) -> None:
    for authorization in ("Basic dXNlcjpwYXNz", "Bearer", "token"):
        headers = {**creator.headers, "Authorization": authorization}
        assert_error(api.get("/links", headers=headers), 401, "unauthorized")
        assert_error(api.get(f"/message/{creator.link_id}", headers=headers), 401)
    assert api.get("/links", headers=creator.headers).status_code == 200


def test_a_deleted_link_is_404_link_gone_in_the_api_and_410_on_its_page(
    api: httpx.Client, creator: Creator, doc: dict[str, Any]
) -> None:
    made = api.post("/links", json={"prompt": "soon gone"}, headers=creator.headers)
    link_id = made.json()["data"]["id"]
    assert api.delete(f"/links/{link_id}", headers=creator.headers).status_code == 200
    assert_error(api.delete(f"/links/{link_id}", headers=creator.headers), 404, "link_gone")
    assert_error(api.post(f"/message/{link_id}", json={"message_content": "hi"}), 404)
    assert api.get(f"/{link_id}", headers={"Accept": "text/html"}).status_code == 410
    assert not [op for _, _, op in operations(doc) if "410" in op["responses"]]
