"""Fuzzed contract (issue 5): schemathesis against the running server's own /openapi.json.

Every documented operation is fuzzed on the real ``anonbox serve`` subprocess, on SQLite and
on PostgreSQL: once with a real creator's API key and once with no credential at all, each
through schemathesis's examples, coverage (boundary values) and fuzzing phases, with
schema-valid and schema-invalid requests (the creator's boundary values are left to
``tests/core/test_contract.py``, whose coverage phase sends them with every check). Then
stateful scenarios chain operations: our document declares no OpenAPI ``links``, so
schemathesis infers them from response schemas and path parameter names (``GET /user``
-> ``link_id``, ``POST /message/{link_id}`` -> ``data.id`` -> ``{message_id}``, ...) and
feeds ids from earlier responses into later calls.

Every response must not be a 5xx, and must match the document: a documented status code,
its documented content type and headers, and a body that validates against its schema.

Bounded for CI: MAX_EXAMPLES per operation and phase, STATEFUL_SCENARIOS of at most
STATEFUL_MAX_STEPS calls, REQUEST_TIMEOUT_S per request. Hypothesis is derandomized with no
example database, so every run sends the same requests (server-made ids aside) and a
failure reproduces.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import hypothesis
import pytest
import schemathesis

# Imported with the module, not by the first test that loads a document: once in CI, a
# process whose first schema load came from inside a test failed to compile one of these
# modules there (CPython 3.11.7: "AST constructor recursion depth mismatch", 252 frames
# deep, in a process that had just run Hypothesis and a thousand streams).
import schemathesis.specs.openapi.schemas
from schemathesis import Case, Response
from schemathesis.config import SchemathesisConfig
from schemathesis.generation.stateful.state_machine import StepInput, StepOutput
from schemathesis.schemas import BaseSchema

from tests.actions import post_message, post_reply
from tests.conftest import Creator, make_creator_in
from tests.core.test_contract import operations
from tests.server import Server
from tests.support.http import loopback_client, loopback_get

SEED = 20_250_505
MAX_EXAMPLES = 25
STATEFUL_SCENARIOS = 100
STATEFUL_MAX_STEPS = 10
REQUEST_TIMEOUT_S = 10

CHECKS = [
    "not_a_server_error",
    "status_code_conformance",
    "content_type_conformance",
    "response_headers_conformance",
    "response_schema_conformance",
]

# Text a random generator seldom makes but people and scripts send, in every generated
# string: a schema-valid request only gets the values that match that parameter's schema.
# HOSTILE_SHARE of generated strings are drawn from here, so that with MAX_EXAMPLES per
# operation each text field almost surely gets each kind (and a NUL) at least once.
HOSTILE_TEXT = [
    "\u0000",  # PostgreSQL text cannot hold NUL
    "a\u0000b",
    "\u0301",  # a combining mark alone: nothing left once folded
    " ",  # whitespace only
    "\U0001f4ac",  # outside the BMP: 4 bytes of UTF-8
    "'",
]
HOSTILE_SHARE = 0.4

# Left out of the stateful scenarios (still fuzzed one by one): with an API key they can
# only answer 401/403 (sign-in, sessions and API-key management take a signed-in session;
# /admin takes the admin role), so in a chain they only use up steps. The fuzzer is never
# an admin on purpose: a site-wide block would block 127.0.0.1, the sender of every other
# test sharing this session's server.
NOT_IN_SCENARIOS = r"^/(auth|admin)/"


@dataclass(frozen=True)
class World:
    """A creator and things of theirs, made through the API, for fuzzed ids to hit.

    Random ids only ever reach "404 not found"; half the time the per-operation passes use
    one of these instead, so requests get past the lookup into the handler. Operations that
    destroy what they hit get things of their own, so that the operations fuzzed after them
    still find theirs.
    """

    creator: Creator
    answered: str  # a message with replies, on creator.link_id
    replies: list[str]  # replies to `answered`, for DELETE .../{reply_id}
    unanswered: list[str]  # messages for DELETE /message/{link_id}/{message_id}
    spare_links: list[str]  # links for DELETE /links/{link_id}

    def bindings(self) -> tuple[dict[str, Any], dict[str, Any], list[dict[str, Any]]]:
        """schemathesis dictionaries, parameter bindings and per-operation bindings."""

        def half(name: str) -> dict[str, Any]:
            return {"dictionary": name, "probability": 0.5}

        dictionaries = {
            "link": {"values": [self.creator.link_id]},
            "message": {"values": [self.answered]},
            "reply": {"values": self.replies},
            "unanswered": {"values": self.unanswered},
            "spare-link": {"values": self.spare_links},
        }
        parameters = {"path.link_id": half("link"), "path.message_id": half("message")}
        operations = [
            {
                "include-name": "DELETE /message/{link_id}/{message_id}/{reply_id}",
                "parameters": {**parameters, "path.reply_id": half("reply")},
            },
            {
                "include-name": "DELETE /message/{link_id}/{message_id}",
                "parameters": {**parameters, "path.message_id": half("unanswered")},
            },
            {
                "include-name": "DELETE /links/{link_id}",
                "parameters": {"path.link_id": half("spare-link")},
            },
        ]
        return dictionaries, parameters, operations


def make_world(server: Server) -> World:
    creator = make_creator_in(server.database_url)
    with loopback_client(base_url=server.url, headers=creator.headers, timeout=30) as api:

        def new_link() -> str:
            made = api.post("/links", json={"prompt": "ask me"})
            assert made.status_code == 201, made.text
            return str(made.json()["data"]["id"])

        answered = post_message(api, creator.link_id, "what is your favourite tea?")
        replies = [post_reply(api, creator, answered, f"oolong {n}") for n in range(3)]
        unanswered = [post_message(api, creator.link_id, f"hello {n}") for n in range(3)]
        spare_links = [new_link() for _ in range(3)]
    return World(creator, answered, replies, unanswered, spare_links)


def fuzz_config(
    world: World | None, *, api_key: str | None, off: Sequence[str] = ()
) -> SchemathesisConfig:
    """``off``: names of operations left out ("GET /user")."""
    dictionaries: dict[str, Any] = {"hostile-text": {"values": HOSTILE_TEXT}}
    parameters: dict[str, Any] = {}
    operations: list[dict[str, Any]] = []
    if world is not None:
        own, parameters, operations = world.bindings()
        dictionaries.update(own)
    data: dict[str, Any] = {
        "seed": SEED,
        "dictionaries": dictionaries,
        "parameters": parameters,
        "generation": {
            "max-examples": MAX_EXAMPLES,
            "deterministic": True,  # Hypothesis derandomize: the same cases on every run
            "database": "none",  # no .hypothesis/ directory, nothing replayed between runs
            "dictionaries": {
                "string": {"dictionary": "hostile-text", "probability": HOSTILE_SHARE}
            },
        },
        "checks": {"enabled": False, **{name: {"enabled": True} for name in CHECKS}},
        # Scenarios send schema-valid requests only, so a chain gets past its first step;
        # the per-operation passes send the schema-invalid ones.
        "phases": {"stateful": {"generation": {"mode": "positive"}}},
        "request-timeout": REQUEST_TIMEOUT_S,
    }
    if off:
        # Filters set on a loaded schema are dropped by schemathesis's pytest plugin
        # (from_fixture keeps only its own and the config's), so this goes in the config.
        operations.append({"include-name": list(off), "enabled": False})
    if operations:
        data["operations"] = operations
    if api_key is None:
        # No credential at all, not a random one: what a visitor sends.
        data["generation"]["with-security-parameters"] = False
    else:
        data["auth"] = {"openapi": {"ApiKey": {"api_key": api_key}}}
        # A creator's boundary values are tests/core/test_contract.py's: its coverage phase runs
        # with the same key and every check (a superset of CHECKS), on both databases.
        data["phases"]["coverage"] = {"enabled": False}
    return SchemathesisConfig.from_dict(data)


def load(server: Server, config: SchemathesisConfig) -> BaseSchema:
    return schemathesis.openapi.from_url(f"{server.url}/openapi.json", config=config)


def validate(case: Case[Any], response: Response, **kwargs: Any) -> None:
    case.validate_response(response, **kwargs)


@pytest.fixture(scope="module")
def world(server: Server) -> World:
    return make_world(server)


@pytest.fixture
def creator_schema(server: Server, world: World) -> BaseSchema:
    return load(server, fuzz_config(world, api_key=world.creator.api_key))


def needing_a_credential(server: Server) -> list[str]:
    """The operations that declare security and no anonymous (empty) requirement in it."""
    document = loopback_get(f"{server.url}/openapi.json", timeout=30).json()
    return [
        f"{method.upper()} {path}"
        for path, method, operation in operations(document)
        if operation.get("security") and {} not in operation["security"]
    ]


@pytest.fixture
def anonymous_schema(server: Server, world: World) -> BaseSchema:
    """Every operation on SQLite; on PostgreSQL, those a visitor may call. A request with no
    credential to an operation that needs one is answered before anything reaches the
    database (the 401, or the 400 of a request that does not parse), so on a second
    database it would only send the same requests to the same code again."""
    if server.database_url.startswith("sqlite"):
        return load(server, fuzz_config(world, api_key=None))
    return load(server, fuzz_config(world, api_key=None, off=needing_a_credential(server)))


@pytest.fixture
def scenario_schema(server: Server) -> BaseSchema:
    return load(server, fuzz_config(None, api_key=None)).exclude(path_regex=NOT_IN_SCENARIOS)


@pytest.fixture(autouse=True)
def _node_id_for_schemathesis(request: pytest.FixtureRequest) -> None:
    # schemathesis 4.32's from_fixture reads and rewrites ``node._nodeid``, which pytest 9.2
    # no longer has: without this, every lazy-schema test fails with AttributeError.
    request.node._nodeid = request.node.nodeid


as_creator = schemathesis.pytest.from_fixture("creator_schema")
anonymous = schemathesis.pytest.from_fixture("anonymous_schema")


# A picture's body (PUT /account/avatar: binary, up to 2 MB in three media types) is drawn
# by rejection more often than Hypothesis's health check allows; the cases are still sent.
_BINARY_BODIES = hypothesis.settings(suppress_health_check=[hypothesis.HealthCheck.filter_too_much])


@as_creator.parametrize()
@_BINARY_BODIES
def test_every_operation_as_a_creator(case: Case[Any]) -> None:
    validate(case, case.call())


@anonymous.parametrize()
@_BINARY_BODIES
def test_every_operation_without_a_credential(case: Case[Any]) -> None:
    validate(case, case.call())


def test_linked_operations_as_a_creator(server: Server, scenario_schema: BaseSchema) -> None:
    """Each scenario is a new creator, so every scenario starts from the same server state.

    Hypothesis builds scenarios from recorded prefixes; if the server remembered the last
    scenario (another link, a muted word), the same prefix would enable different rules and
    Hypothesis would stop with FlakyStrategyDefinition.
    """
    linked: Counter[tuple[str, int]] = Counter()  # steps whose ids came from a response

    class Scenario(scenario_schema.as_state_machine()):  # type: ignore[misc]
        def setup(self) -> None:
            self.creator = make_creator_in(server.database_url)

        def get_call_kwargs(self, case: Case[Any]) -> dict[str, Any]:
            return {"headers": self.creator.headers}

        def step(self, input: StepInput) -> StepOutput:
            output: StepOutput = super().step(input)
            if input.transition is not None and input.is_applied:
                linked[input.case.operation.label, output.response.status_code] += 1
            return output

        def validate_response(
            self, response: Response, case: Case[Any], additional_checks: Any = None, **kwargs: Any
        ) -> None:
            validate(case, response, transport_kwargs=kwargs or None, recorder=self.recorder)

    Scenario.run(
        settings=hypothesis.settings(
            phases=[hypothesis.Phase.generate],  # no shrinking replays against a live server
            derandomize=True,
            database=None,
            deadline=None,
            max_examples=STATEFUL_SCENARIOS,
            stateful_step_count=STATEFUL_MAX_STEPS,
            suppress_health_check=list(hypothesis.HealthCheck),
        )
    )
    # Not a degenerate run: ids from earlier responses reached later, successful requests.
    succeeded = {label for (label, status) in linked if status < 300}
    assert len(succeeded) >= 5, sorted(linked.items())
