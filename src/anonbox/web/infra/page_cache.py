"""The public pages rendered once per change (issue 43): a link's send page and answer
pages are the same for every anonymous visitor but for their language, so their bytes are
kept per *content version* (``links.content_version``, moved by database triggers in the
transaction of every change they show: migration 0036) and served again until it moves.

A request reads the version (one primary-key read), makes the page's strong ETag from it
(with the language, the path's parameters, the site's address and this build's templates
and catalogs), answers ``If-None-Match`` with a 304 without rendering or looking anything
else up, and else serves the kept bytes (gzipped once, beside the plain ones) or renders
and keeps them. Kept in this process only, least recently used first out past
``MAX_BYTES``: a change made through any instance moves the version every instance reads,
so none serves the old page after it. ``ANONBOX_PAGE_CACHE=false`` keeps nothing (the
ETags and 304s stay): the bench's "cache off" run. docs/scaling.md has the model.
"""

from __future__ import annotations

import gzip
import hashlib
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from litestar import Request, Response
from litestar.utils.scope.state import ScopeState

import anonbox
from anonbox.core.settings import Settings
from anonbox.web.infra.security import cookie_name
from anonbox.web.infra.session import ACCESS_COOKIE, REFRESH_COOKIE

AnyRequest = Request[Any, Any, Any]

# How long a shared cache (a CDN, a proxy, the browser) may serve a public page without
# asking again: the most a reader there sees of an answer already deleted or a link
# already paused (anonbox itself shows a change at once). docs/scaling.md says why 60.
MAX_AGE = 60
PUBLIC = f"public, max-age={MAX_AGE}"
# Every page with a session, a token or a visitor's own words.
PRIVATE = "private, no-store"
MAX_BYTES = 64 * 1024 * 1024  # plain and gzipped: ~2,000 send pages of 20 answers
_GZIP_LEVEL = 6  # as the page router's compression (web.infra.routing)
_GZIP_FROM = 1024

_WEB = Path(__file__).parent.parent


def _build() -> str:
    """What else makes the bytes: anonbox's version, its code, templates and catalogs (a
    deploy that changes any of them changes every tag; read once, ~2 MB, at start-up)."""
    digest = hashlib.blake2b(anonbox.__version__.encode(), digest_size=6)
    files = sorted((_WEB / "templates").rglob("*.html"))
    files += sorted((_WEB.parent / "locale").rglob("*.mo"))
    files += sorted(_WEB.parent.rglob("*.py"))
    for path in files:
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


BUILD = _build()


@dataclass(frozen=True, slots=True)
class Kept:
    body: bytes
    gzipped: bytes | None


class PageCache:
    def __init__(self, max_bytes: int = MAX_BYTES) -> None:
        self._kept: OrderedDict[str, Kept] = OrderedDict()
        self._bytes = 0
        self._max_bytes = max_bytes
        self.counts = {"hits": 0, "renders": 0, "not_modified": 0, "evicted": 0}

    def stats(self) -> Mapping[str, int]:
        """For /metrics (``anonbox_pages_*``): renders, hits, 304s, what is kept now."""
        return {**self.counts, "kept": len(self._kept), "kept_bytes": self._bytes}

    def get(self, etag: str) -> Kept | None:
        kept = self._kept.get(etag)
        if kept is not None:
            self._kept.move_to_end(etag)
            self.counts["hits"] += 1
        return kept

    def keep(self, etag: str, body: bytes) -> Kept:
        gzipped = gzip.compress(body, _GZIP_LEVEL, mtime=0) if len(body) >= _GZIP_FROM else None
        kept = Kept(body, gzipped)
        if etag not in self._kept:
            self._kept[etag] = kept
            self._bytes += _size(kept)
        while self._bytes > self._max_bytes and self._kept:
            _, evicted = self._kept.popitem(last=False)
            self._bytes -= _size(evicted)
            self.counts["evicted"] += 1
        return kept


def _size(kept: Kept) -> int:
    return len(kept.body) + len(kept.gzipped or b"")


PAGES = PageCache()


def etag_of(*key: object) -> str:
    """A strong ETag for the plain bytes of the page ``key`` names (its gzipped bytes
    add ``-gz``: another representation, another tag)."""
    digest = hashlib.blake2b(repr(key).encode(), digest_size=12, key=BUILD.encode())
    return digest.hexdigest()


def _gzip_taken(request: AnyRequest) -> bool:
    # As the compression middleware decides (web.infra.routing.PAGE_COMPRESSION).
    return "gzip" in request.headers.get("accept-encoding", "")


def not_modified(request: AnyRequest, etag: str) -> bool:
    """``If-None-Match`` names this page's tag (either representation's) or ``*``."""
    asked = request.headers.get("if-none-match")
    if not asked:
        return False
    tags = {tag.strip().removeprefix("W/") for tag in asked.split(",")}
    return "*" in tags or f'"{etag}"' in tags or f'"{etag}-gz"' in tags


# The page's bytes, or the answer to give instead (an error page: never kept).
Render = Callable[[], Awaitable["bytes | Response[Any]"]]


async def public_page(
    request: AnyRequest, key: tuple[object, ...], render: Render, vary: str
) -> Response[Any]:
    """The page ``key`` names (its content version among it), as a shared cache may keep
    it: a 304 for a browser that has it, else kept bytes, else ``render()``'s, kept."""
    settings: Settings = request.app.state.settings
    etag = etag_of(*key)
    gz = _gzip_taken(request)
    headers = {"Cache-Control": PUBLIC, "Vary": vary}
    if not_modified(request, etag):
        PAGES.counts["not_modified"] += 1
        headers["ETag"] = f'"{etag}-gz"' if gz else f'"{etag}"'
        return Response(b"", status_code=304, headers=headers, media_type="text/html")
    kept = PAGES.get(etag) if settings.page_cache else None
    if kept is None:
        PAGES.counts["renders"] += 1
        body = await render()
        if isinstance(body, Response):
            return body
        if not settings.page_cache:  # compressed by the page router as any page
            headers["ETag"] = f'"{etag}-gz"' if gz and len(body) >= _GZIP_FROM else f'"{etag}"'
            return Response(body, headers=headers, media_type="text/html")
        kept = PAGES.keep(etag, body)
    # Compressed already: the router's compression must pass these bytes as they are.
    ScopeState.from_scope(request.scope).is_cached = True
    if gz and kept.gzipped is not None:
        headers["ETag"] = f'"{etag}-gz"'
        headers["Content-Encoding"] = "gzip"
        headers["Vary"] = vary + ", Accept-Encoding"
        return Response(kept.gzipped, headers=headers, media_type="text/html")
    headers["ETag"] = f'"{etag}"'
    if kept.gzipped is not None:
        headers["Vary"] = vary + ", Accept-Encoding"
    return Response(kept.body, headers=headers, media_type="text/html")


def render_template(request: AnyRequest, name: str, context: dict[str, Any]) -> bytes:
    """A template's bytes, as a ``Template`` answer would render them."""
    engine = request.app.template_engine
    assert engine is not None  # the app is made with its templates (web.infra.routing)
    rendered: str = engine.get_template(name).render(**context, request=request)
    return rendered.encode()


def has_session(request: AnyRequest) -> bool:
    """The browser carries a sign-in (its pages are then its own: never shared)."""
    settings: Settings = request.app.state.settings
    return any(
        cookie_name(name, settings) in request.cookies for name in (ACCESS_COOKIE, REFRESH_COOKIE)
    )
