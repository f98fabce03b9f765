"""Signed webhooks: a creator's endpoints, and the deliveries made to them."""
