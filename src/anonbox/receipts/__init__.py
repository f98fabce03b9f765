"""Answer receipts: a sender's private link to the answer of their message, and one
follow-up into the same thread."""
