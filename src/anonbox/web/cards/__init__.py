"""The share cards: a message and its reply, or a link's invitation, drawn as a PNG for
stories (1080 by 1920) or as a landscape preview for posts (1200 by 630).

``draw`` lays a story card out and draws it, ``preview`` the landscape one, ``fit`` sizes
their texts to the room they have (never cutting), ``themes`` gives each link's look and
background, ``text`` cuts and orders the text, ``fonts`` picks the font for each piece of
it, and ``cache`` keeps each drawn version. The routes that serve them are a page
(``web.pages.share_card``).
"""
