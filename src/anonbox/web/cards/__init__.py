"""The share cards: a message and its reply, or a link's invitation, drawn as a PNG.

``draw`` lays a card out and draws it, ``text`` cuts and orders its text, ``fonts`` picks
the font for each piece of it, and ``cache`` keeps each drawn version. The route that
serves them is a page (``web.pages.share_card``).
"""
