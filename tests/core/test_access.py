"""Access rules are types (core/access.py): for every route, the rule its signature names is
the rule enforced and the security documented, and a parameter's name changes nothing."""

from __future__ import annotations

import contextvars
import inspect
import re
import warnings
from typing import Annotated, Any

import pytest
from litestar import Litestar, Request, get
from litestar.di import Provide
from litestar.handlers import HTTPRouteHandler
from litestar.routes import HTTPRoute
from litestar.testing import TestClient
from litestar.utils.signature import get_fn_type_hints

from anonbox.core.access import (
    INJECTED,
    UNCHECKED,
    AccessError,
    AccessRule,
    Provided,
    guarded,
    rules_of,
)
from anonbox.core.exception_handlers import EXCEPTION_HANDLERS
from anonbox.core.settings import Settings
from anonbox.identity.dependencies import SECURITY, Creator
from anonbox.identity.service import Principal

_PARAMETER = re.compile(r"\{(\w+):[^}]+\}")


def _app(tmp_path: Any) -> Litestar:
    """The real application, built only to read its routes; importing it warns of
    Litestar deprecations."""
    settings = Settings.from_env({"ANONBOX_DATABASE_URL": f"sqlite:///{tmp_path}/a.db"})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from anonbox.main import create_app

        app = create_app(settings).app
    assert isinstance(app, Litestar)
    return app


def _handlers(app: Litestar) -> list[tuple[str, HTTPRouteHandler]]:
    return [
        (route.path, handler)
        for route in app.routes
        if isinstance(route, HTTPRoute)
        for handler in route.route_handlers
        if "OPTIONS" not in handler.http_methods
    ]


def test_every_route_enforces_and_documents_the_rules_its_signature_names(tmp_path: Any) -> None:
    app = _app(tmp_path)
    document = app.openapi_schema.to_schema()
    guarded_routes = documented_routes = 0
    for path, handler in _handlers(app):
        with warnings.catch_warnings():  # signatures that still name Litestar's old marker
            warnings.simplefilter("ignore", DeprecationWarning)
            rules = rules_of(handler.fn)
        provided = handler.resolve_dependencies()
        for name, rule in rules.items():
            # What fills the parameter is its rule's provider, whatever the name (or an
            # alias of it, where another rule's provider takes it under another name).
            provider = provided[name]
            if provider.dependency is not rule.provider:
                (shared,) = inspect.signature(provider.dependency).parameters
                provider = provided[shared]
            assert provider.dependency is rule.provider, (path, name)
        required = [r for r in rules.values() if r.security is not None and not r.optional]
        optional = [r for r in rules.values() if r.security is not None and r.optional]
        expected = (required or optional or [None])[0]
        wanted = list(expected.security or ()) if expected is not None else None
        assert (handler.resolve_security() or None) == wanted, path
        if handler.resolve_include_in_schema():
            for method in handler.http_methods - {"HEAD"}:
                operation = document["paths"][_PARAMETER.sub(r"{\1}", path)][method.lower()]
                assert operation.get("security") == wanted, (method, path)
                documented_routes += 1
        guarded_routes += bool(rules)
    assert guarded_routes >= 100  # the API's creator routes and the dashboard's pages
    assert documented_routes > 60


def test_no_rule_is_provided_by_a_name_app_wide(tmp_path: Any) -> None:
    app = _app(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        providers = {
            rule.provider for _, handler in _handlers(app) for rule in rules_of(handler.fn).values()
        }
    assert len(providers) >= 10  # the API's rules and the pages'
    for name, provide in app.dependencies.items():
        assert provide.dependency not in providers, name


def _provided_as(hint: Any) -> str | None:
    for marker in getattr(hint, "__metadata__", ()):
        if isinstance(marker, Provided):
            return str(marker.name)
    return None


def test_each_injected_object_is_taken_by_its_own_type(tmp_path: Any) -> None:
    """Litestar fills an app-wide dependency by the parameter's name; each one's type
    carries that name (``Provided``), so ``db: PublicDB`` or ``gate: Gate`` is found
    here, and two objects of one class (the database, its public reads) are two types."""
    from anonbox.core.dependencies import DB, PublicDB
    from anonbox.wiring import DEPENDENCIES

    assert PublicDB != DB
    assert (_provided_as(DB), _provided_as(PublicDB)) == ("db", "public_db")
    app = _app(tmp_path)
    taken: dict[str, set[str]] = {}
    for path, handler in _handlers(app):
        hints = get_fn_type_hints(handler.fn)
        for name in inspect.signature(handler.fn).parameters:
            hint = hints.get(name)
            if name in DEPENDENCIES:
                assert _provided_as(hint) == name, (path, handler.fn.__name__, name, hint)
                taken.setdefault(name, set()).add(repr(hint))
            else:
                assert _provided_as(hint) is None, (path, handler.fn.__name__, name, hint)
    assert all(len(types) == 1 for types in taken.values()), taken
    assert {"db", "public_db", "gate", "posting", "settings"} <= taken.keys()


def test_renaming_the_parameter_keeps_the_rule() -> None:
    @get("/mine", sync_to_thread=False)
    def mine(anything_at_all: Creator) -> str:
        return anything_at_all.user_id

    app = Litestar(
        route_handlers=guarded([mine]),
        dependencies={"db": Provide(lambda: None, sync_to_thread=False)},
        exception_handlers=EXCEPTION_HANDLERS,
    )
    with TestClient(app) as client:
        # Without a credential: refused, as any Creator route; never read from the query.
        assert client.get("/mine").status_code == 401
        assert client.get("/mine", params={"anything_at_all": "x"}).status_code == 401
    assert mine.resolve_security() == SECURITY


def test_a_guarded_type_without_a_rule_refuses_to_start() -> None:
    @get("/mine", sync_to_thread=False)
    def mine(creator: Principal) -> str:
        return creator.user_id

    with pytest.raises(AccessError, match="without an access rule"):
        guarded([mine])


def test_security_by_hand_refuses_to_start() -> None:
    @get("/mine", sync_to_thread=False, security=[{}])
    def mine(creator: Creator) -> str:
        return creator.user_id

    with pytest.raises(AccessError, match="security comes from its access rules"):
        guarded([mine])


class Token:
    def __init__(self, owner: str) -> None:
        self.owner = owner


CALLS: list[str] = []


LANGUAGE: contextvars.ContextVar[str] = contextvars.ContextVar("test_language", default="en")


async def _session(request: Request[Any, Any, Any]) -> Token:
    CALLS.append("session")
    LANGUAGE.set(request.headers.get("x-language", "en"))  # as a page's browser rule does
    return Token("hana")


SessionOf = Annotated[Token, INJECTED, UNCHECKED, AccessRule("SessionOf", _session, Token)]


class Posted:
    def __init__(self, text: str) -> None:
        self.text = text


async def _form_of(session: SessionOf) -> Posted:
    return Posted(f"form of {session.owner}")


FormOf = Annotated[Posted, INJECTED, UNCHECKED, AccessRule("FormOf", _form_of, Posted)]


def test_a_rule_taken_by_another_is_resolved_once_in_the_requests_task() -> None:
    """The form rule takes the session rule; the page names its session ``me``. The session
    is still resolved once, first, where what it sets (the page's language) is seen."""

    @get("/page", sync_to_thread=False)
    def page(me: SessionOf, posted: FormOf) -> dict[str, Any]:
        return {"owner": me.owner, "form": posted.text, "language": LANGUAGE.get()}

    app = Litestar(route_handlers=guarded([page]), exception_handlers=EXCEPTION_HANDLERS)
    with TestClient(app) as client:
        CALLS.clear()
        answer = client.get("/page", headers={"x-language": "ja"})
        assert answer.json() == {"owner": "hana", "form": "form of hana", "language": "ja"}
        assert CALLS == ["session"]
