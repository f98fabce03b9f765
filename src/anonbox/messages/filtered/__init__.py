"""A link's filtered folder: messages kept out of the inbox by muted words or a block
(``service``), its SQL (``repository``) and its endpoints (``router``)."""
