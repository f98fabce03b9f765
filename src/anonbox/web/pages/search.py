"""Page route: the search of one link's inbox, from the box on the inbox page.

A plain GET form (``q``, the inbox's ``filter``), so a search is a link that can be
reloaded, shared between tabs and paged with "Older results". The results are the inbox's
message cards; their actions come back here (the cards' ``back`` field). The search
itself is the API's (``messages.search.service``).
"""

from __future__ import annotations

from typing import Annotated, Any
from urllib.parse import urlencode

from litestar import Request, get
from litestar.params import QueryParameter
from litestar.response import Template
from litestar.types import ControllerRouterHandler

from anonbox.account import service as account
from anonbox.core.dependencies import DB, AppSettings
from anonbox.core.errors import ValidationFailed
from anonbox.core.paths import Cursor
from anonbox.messages.inbox import service as inbox
from anonbox.messages.search import service as search
from anonbox.web.infra.dependencies import OwnedPageLink, SignedInBrowser, signed_in_pages
from anonbox.web.infra.forms import dashboard_page
from anonbox.web.infra.routing import readable

PAGE_SIZE = 20

AnyRequest = Request[Any, Any, Any]

FilterName = Annotated[
    str, QueryParameter(name="filter", pattern="^(all|unread|unanswered|answered|liked)$")
]


@get("/dashboard/links/{link_id:str}/search")
async def search_page(
    request: AnyRequest,
    browser: SignedInBrowser,
    link: OwnedPageLink,
    db: DB,
    settings: AppSettings,
    q: str = "",
    which: FilterName = "all",
    cursor: Cursor = None,
) -> Template:
    user_id = browser.principal.user_id
    base = f"/dashboard/links/{link.link_id}"
    which_filter = inbox.InboxFilter(which)
    query: dict[str, str] = {"q": q}
    if which_filter is not inbox.InboxFilter.ALL:
        query["filter"] = which
    here = f"{base}/search?{urlencode(query)}"
    if cursor:
        here += f"&cursor={cursor}"
    results: inbox.Page | None = None
    problem: str | None = None
    status_code = 200
    if q.strip():  # an empty box shows the form, not an error
        try:
            results = await search.search_cards(
                db, link_id=link.link_id, q=q, which=which_filter, cursor=cursor, limit=PAGE_SIZE
            )
        except ValidationFailed as exc:
            problem, status_code = readable(exc.message, 400, exc.code), 400
    owned = await inbox.links_with_unread(db, user_id)
    prompt = next(str(row["prompt"]) for row in owned if row["id"] == link.link_id)
    return dashboard_page(
        request,
        browser,
        settings,
        "dashboard_search.html",
        {
            "profile": await account.signed_in_as(db, user_id=user_id),
            "link": {"id": link.link_id, "prompt": prompt},
            "base": base,
            "here": here,
            "q": q,
            "filter": which,
            "filters": [f.value for f in inbox.InboxFilter],
            "filter_urls": {
                f.value: f"{base}/search?"
                + urlencode({"q": q, **({} if f is inbox.InboxFilter.ALL else {"filter": f.value})})
                for f in inbox.InboxFilter
            },
            "older_url": None
            if results is None or results.next_cursor is None
            else f"{base}/search?{urlencode({**query, 'cursor': results.next_cursor})}",
            "results": results,
            "problem": problem,
            "max_characters": search.MAX_QUERY_CHARACTERS,
        },
        status_code,
    )


ROUTES: list[ControllerRouterHandler] = [signed_in_pages(search_page)]
