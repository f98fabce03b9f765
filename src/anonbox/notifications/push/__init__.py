"""Web Push: a creator's device subscriptions, and the pushes sent to them."""
