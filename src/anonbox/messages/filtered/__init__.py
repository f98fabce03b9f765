"""A link's filtered folder: messages kept out of the inbox by muted words
(``service``), its SQL (``repository``) and its endpoints (``router``)."""
