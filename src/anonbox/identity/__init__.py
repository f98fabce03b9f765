"""Who a request acts for: the principal a credential proves, and the access rules built on it."""
