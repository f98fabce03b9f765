"""The web pages: server-rendered HTML over the same services as the JSON API.

Everything a page needs is served from here (templates, CSS, a little JavaScript):
no CDN, no external font, no build step. See ``docs/pages.md``.

``pages`` holds the pages, one module per family; ``infra`` what they stand on (routers,
templates, security, the session, forms, the language); ``cards`` draws the share cards;
``routes`` lists every page route for the application.
"""
