"""What every page stands on: routers, templates and static files (``routing``), headers
and CSRF (``security``), the browser session (``session``), the language a page speaks
(``locale``), how pages and form posts answer (``forms``) and what a page handler takes
(``dependencies``).
"""
