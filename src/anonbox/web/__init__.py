"""The web pages: server-rendered HTML over the same services as the JSON API.

Everything a page needs is served from here (templates, CSS, a little JavaScript):
no CDN, no external font, no build step. See ``docs/pages.md``.
"""
