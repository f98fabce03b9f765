"""The pages, one module per family: its routes, what they read and what they answer.

Each module's ``ROUTES`` joins the one list of ``web.routes``; what they all stand on
(routers, templates, the session, CSRF, the language) is ``web.infra``.
"""
