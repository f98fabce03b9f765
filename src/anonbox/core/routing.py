"""What Litestar's routing leaves to us: ``OPTIONS`` naming every method of a path in its
``Allow`` header, and a 405 only for a method that no documented operation takes there.

Litestar 2 makes a path's ``OPTIONS`` handler when the path's first handler is registered,
and keeps it as later handlers of the same path join the route: ``OPTIONS /links`` listed
only ``POST`` although ``GET /links`` exists (litestar-org/litestar#4169, fixed in 3.0).
A path whose first handler already answers ``OPTIONS`` gets none made for it, so each path
gets ours first, and ours reads the methods from the finished application when asked.

A fixed segment beats a parameter: ``GET /message/{link_id}/unanswered`` reaches the route
of ``DELETE /message/{link_id}/unanswered`` and is refused (405), although it is also
``GET /message/{link_id}/{message_id}`` for a message that does not exist. That is a 404,
as for any unknown id: ``taken_elsewhere`` tells the two apart, by the operations of the
API's document (``POST /blocks`` is refused, though a page takes ``POST /{link_id}``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from functools import cache
from typing import Any

from litestar import Litestar, Request, Response, Router, route
from litestar.handlers import HTTPRouteHandler
from litestar.routes import HTTPRoute
from litestar.types import ControllerRouterHandler
from litestar.utils import join_paths, normalize_path


def with_options(handlers: Sequence[ControllerRouterHandler]) -> list[ControllerRouterHandler]:
    """``handlers``, after an ``OPTIONS`` handler for each path they answer (on the router
    they are registered on: a nested router makes its own, see ``OptionsRouter``)."""
    return [*(_options_for(path) for path in _paths(handlers)), *handlers]


class OptionsRouter(Router):
    """A router whose paths answer ``OPTIONS`` with every method they have."""

    def __init__(
        self, path: str, *, route_handlers: Sequence[ControllerRouterHandler] = (), **kwargs: Any
    ) -> None:
        super().__init__(path, route_handlers=with_options(route_handlers), **kwargs)


def _paths(handlers: Iterable[ControllerRouterHandler]) -> list[str]:
    paths: dict[str, None] = {}
    for handler in handlers:
        if isinstance(handler, HTTPRouteHandler) and "OPTIONS" not in handler.http_methods:
            paths.update(dict.fromkeys(normalize_path(path) for path in sorted(handler.paths)))
    return list(paths)


def _options_for(path: str) -> HTTPRouteHandler:
    @route(path, http_method="OPTIONS", include_in_schema=False, sync_to_thread=False)
    def options(request: Request[Any, Any, Any]) -> Response[None]:
        methods = request.app.route_handler_method_map[_route_path(request)]
        return Response(None, status_code=204, headers={"Allow": ", ".join(sorted(methods))})

    return options


def _route_path(request: Request[Any, Any, Any]) -> str:
    """The path of the route that answered, as the application's route map names it."""
    (path,) = request.route_handler.paths
    owner = request.route_handler.owner
    while owner is not None:
        path = join_paths([owner.path, path])
        owner = owner.owner
    return path


def taken_elsewhere(app: Litestar, method: str, path: str) -> bool:
    """Whether an operation of the API's document other than the route ``path`` reached
    would take ``method`` there."""
    return any(
        method in methods and template.fullmatch(path) for template, methods in _templates(app)
    )


_PARAMETER = re.compile(r"\{[^}:]+:([^}]+)\}")


@cache
def _templates(app: Litestar) -> list[tuple[re.Pattern[str], frozenset[str]]]:
    def pattern(path: str) -> re.Pattern[str]:
        parts = _PARAMETER.split(path)  # text, type, text, type, ..., text
        return re.compile(
            "".join(
                re.escape(part) if n % 2 == 0 else (".*" if part == "path" else "[^/]+")
                for n, part in enumerate(parts)
            )
        )

    documented = [
        (
            route.path,
            frozenset(
                method
                for method, (handler, _) in route.route_handler_map.items()
                if handler.resolve_include_in_schema()
            ),
        )
        for route in app.routes
        if isinstance(route, HTTPRoute)
    ]
    return [(pattern(path), methods) for path, methods in documented if methods]
