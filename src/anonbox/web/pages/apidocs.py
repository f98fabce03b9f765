"""The API documentation page: Swagger UI over ``/openapi.json``, served from ``static/swagger``.

Swagger UI is vendored (see ``static/swagger/README.md``) so the page needs nothing from
the internet, and it is started from a static file so the pages' strict CSP still holds.
"""

from __future__ import annotations

from litestar import get
from litestar.response import Template
from litestar.types import ControllerRouterHandler


@get("/docs", name="apidocs", sync_to_thread=False)
def apidocs() -> Template:
    return Template(template_name="apidocs.html")


ROUTES: list[ControllerRouterHandler] = [apidocs]
