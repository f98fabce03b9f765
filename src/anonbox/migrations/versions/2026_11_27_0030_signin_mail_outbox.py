"""Sign-in mails go out after the answer (issue 39): a link's row says whether a mail is
still to be sent for it, and what the sender needs to write it.

Asking for a sign-in link used to send the mail before answering, so the answer took
longer when a mail went out than when the per-address limit held it back. Now the ask
writes its row, the same statement either way, and the row carries ``mail_due_at`` (when
the mail is due; NULL: none to send, or sent), ``mail_attempts``, the asking page's
``mail_language`` and the ``site_url`` the link is to point at. The link in the mail is
minted when the mail is sent (``auth.email_signin.SignInMailCourier``): no token waits in
the database in clear.

Revision ID: 0030
Revises: 0029
Create Date: 2026-11-27
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0030"
down_revision = "0029"
branch_labels = None
depends_on = None

_DUE = sa.text("mail_due_at IS NOT NULL")


def upgrade() -> None:
    with op.batch_alter_table("email_signin_tokens") as batch:
        batch.add_column(sa.Column("mail_due_at", sa.BigInteger, nullable=True))
        batch.add_column(sa.Column("mail_attempts", sa.Integer, nullable=False, server_default="0"))
        batch.add_column(sa.Column("mail_language", sa.String(35), nullable=True))
        batch.add_column(sa.Column("site_url", sa.String(2048), nullable=True))
    op.create_index(
        "ix_email_signin_tokens_mail_due_at",
        "email_signin_tokens",
        ["mail_due_at"],
        sqlite_where=_DUE,
        postgresql_where=_DUE,
    )


def downgrade() -> None:
    op.drop_index("ix_email_signin_tokens_mail_due_at", "email_signin_tokens")
    with op.batch_alter_table("email_signin_tokens") as batch:
        batch.drop_column("site_url")
        batch.drop_column("mail_language")
        batch.drop_column("mail_attempts")
        batch.drop_column("mail_due_at")
