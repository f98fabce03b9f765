"""Who may call a route, as types: a handler's signature states its rule, never a name.

An access rule is an ``Annotated`` type declared once beside its provider, for example
``Creator = Annotated[Principal, INJECTED, UNCHECKED, AccessRule(...)]`` in
``auth/dependencies.py``. ``guarded`` reads every handler's signature and, for each
parameter whose type carries a rule, registers the rule's provider under that parameter's
name on that handler alone, and sets the handler's OpenAPI ``security`` from the same
rules. So renaming a parameter keeps its rule, and what the document says is what is
enforced. The rules, from the widest to the narrowest:

    Viewer          anyone; a credential that is present must be valid     (API)
    Creator         a valid credential of an account in service            (API)
    ├── SignedIn    ... from a sign-in session, not an API key             (API)
    ├── Admin       ... of an admin                                        (API)
    ├── OwnedLink   ... that owns the link in the path (looked up)         (API)
    ├── ClaimedLink ... that claims the link in the path (checked by the write)
    └── ViewedLink  the live link in the path, and whether the caller owns it
    AccountHolder   a valid credential, even of an account being erased    (API)
    └── SignedInHolder ... from a sign-in session                          (API)
    SignedInBrowser a browser's sign-in session (CSRF-checked on a form)   (pages)
    ├── OwnedPageLink, SignedInForm, AdminBrowser                          (pages)
    AccountHolderBrowser, AccountHolderForm (the deletion page)            (pages)

A parameter of a type that some rule guards (``Principal``, ``LinkAccess``...) without a
rule refuses to start: it could only be filled by a name-keyed dependency, which is what
this replaces.

A rule built on another takes it in its provider's signature (``OwnedLink`` takes a
``Creator``, ``SignedInForm`` a ``SignedInBrowser``), so the step they share is resolved
once, first, in the request's own task.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any

from litestar import Router
from litestar.di import Dependency, Provide
from litestar.handlers import BaseRouteHandler, HTTPRouteHandler
from litestar.openapi.spec import SecurityRequirement
from litestar.params import SkipValidationMarker
from litestar.routes import HTTPRoute
from litestar.types import ControllerRouterHandler
from litestar.utils.signature import get_fn_type_hints

# The markers every rule type carries before its rule: a dependency, filled under the
# parameter's name (which ``guarded`` provides), and not validated (the provider's own value).
INJECTED = Dependency()
UNCHECKED = SkipValidationMarker()


@dataclass(frozen=True)
class Provided:
    """The name an app-wide object (``wiring.DEPENDENCIES``) is provided under, carried by
    its type: ``DB`` is ``db``'s, ``PublicDB`` is ``public_db``'s. Litestar fills a
    dependency by the parameter's name; this marker makes each type one name's, so two
    objects of one class (the database and its public reads) are distinct types, and a
    parameter whose name and type disagree is found (``tests/core/test_access.py``)."""

    name: str


# The types that only a rule may fill (added by each rule, as its ``guards``).
_GUARDED: set[type] = set()


@dataclass(frozen=True, eq=False)
class AccessRule:
    """One rule: who may call, the provider that decides it, and what the document says.

    ``security`` is ``None`` where the route is not documented (pages); ``optional``
    rules (a public read that takes a credential too) give way to a required rule beside
    them."""

    name: str
    provider: Callable[..., Awaitable[Any]]
    guards: type
    security: Sequence[SecurityRequirement] | None = None
    optional: bool = False
    provide: Provide = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "provide", Provide(self.provider))
        _GUARDED.add(self.guards)


class AccessError(TypeError):
    """A handler whose signature does not say who may call it, or says it twice."""


def rules_of(fn: Callable[..., Any]) -> dict[str, AccessRule]:
    """The access rules in ``fn``'s signature, by parameter name; refuses a parameter of
    a guarded type that carries no rule."""
    found: dict[str, AccessRule] = {}
    for name, hint in get_fn_type_hints(fn).items():
        if name == "return":
            continue
        rule = _rule_in(hint)
        if rule is not None:
            found[name] = rule
        elif _guarded_type_in(hint):
            raise AccessError(
                f"{fn.__module__}.{fn.__qualname__}: parameter {name!r} is a {hint!r} "
                "without an access rule; declare it with a rule type (core/access.py)"
            )
    return found


def _rule_in(hint: Any) -> AccessRule | None:
    if typing.get_origin(hint) is typing.Annotated:
        rules = [m for m in hint.__metadata__ if isinstance(m, AccessRule)]
        if len(rules) > 1:
            raise AccessError(f"{hint!r} carries more than one access rule")
        return rules[0] if rules else None
    return None


def _guarded_type_in(hint: Any) -> bool:
    if typing.get_origin(hint) is typing.Annotated:
        hint = typing.get_args(hint)[0]
    if hint in _GUARDED:
        return True
    return any(arg in _GUARDED for arg in typing.get_args(hint))


def security_of(rules: Iterable[AccessRule]) -> list[SecurityRequirement] | None:
    """What the document says of a handler with these rules: a required rule's
    credentials, else an optional one's, else nothing."""
    documented = sorted((r for r in rules if r.security is not None), key=lambda r: r.optional)
    return list(documented[0].security or ()) if documented else None


def _guard(handler: BaseRouteHandler) -> None:
    """Register ``handler``'s rules as its own dependencies, with the rules their providers
    take (a page's form or link rule takes the browser's), and set its documented security.

    A rule that a provider takes is registered under the provider's parameter name, so
    Litestar resolves it first, alone, in the request's own task (where it may set the
    page's language); the handler's parameter of the same rule, if named otherwise, is
    an alias of it rather than a second resolution beside it."""
    rules = rules_of(handler.fn)
    nested: dict[AccessRule, str] = {}
    pending = [rules_of(rule.provider) for rule in rules.values()]
    while pending:
        for name, rule in pending.pop().items():
            if nested.setdefault(rule, name) != name:
                raise AccessError(f"{handler}: the providers name rule {rule.name} twice")
            pending.append(rules_of(rule.provider))
    dependencies = dict(handler.dependencies or {})
    wanted = {name: rule.provide for rule, name in nested.items()}
    for name, rule in rules.items():
        shared = nested.get(rule)
        wanted[name] = rule.provide if shared in (None, name) else _alias(shared, rule)
    for name, provide in wanted.items():
        if dependencies.get(name, provide) is not provide:
            raise AccessError(
                f"{handler}: {name!r} is provided twice; an access rule is only a type"
            )
        dependencies[name] = provide
    handler.dependencies = dependencies
    if isinstance(handler, HTTPRouteHandler):
        security = security_of(rules.values())
        # Set by hand it could only drift from the rules (the same, it is ours from before).
        if handler.security is not None and list(handler.security) != security:
            raise AccessError(f"{handler}: security comes from its access rules, not by hand")
        handler.security = security


_ALIASES: dict[tuple[str, AccessRule], Provide] = {}


def _alias(name: str, rule: AccessRule) -> Provide:
    """A provider that hands on the value of the rule registered as ``name``."""
    if (name, rule) not in _ALIASES:

        async def alias(**given: Any) -> Any:
            return given[name]

        hint = Annotated[Any, INJECTED, UNCHECKED]
        alias.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
            [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, annotation=hint)]
        )
        alias.__annotations__ = {name: hint, "return": Any}
        _ALIASES[name, rule] = Provide(alias)
    return _ALIASES[name, rule]


def guarded(handlers: Iterable[ControllerRouterHandler]) -> list[ControllerRouterHandler]:
    """``handlers``, each given the providers and the security its signature's access
    rules name (inside routers too)."""
    handlers = list(handlers)
    for handler in handlers:
        if isinstance(handler, Router):
            for route in handler.routes:
                if isinstance(route, HTTPRoute):
                    for inner in route.route_handlers:
                        _guard(inner)
        elif isinstance(handler, BaseRouteHandler):
            _guard(handler)
    return handlers
