"""The creator's inbox search: the rules of a query (``service``), how a page of matches
is found (``repository``) and the endpoint (``router``)."""
