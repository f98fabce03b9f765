"""E-mail notices: a creator's choice (immediately, hourly or daily digest, off), the
address it was confirmed for, and one notice row per new message to mail.

A notice is written in the relay's transaction (``notifications.email_notices``) with
the time it is due (now, or the end of its digest period); the sender mails the due
notices of one creator together. Notices hold the message's id, not its text: the text
is read when the mail is made, so a message deleted meanwhile is never mailed.

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-23
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None

ULID = sa.String(26)


def upgrade() -> None:
    op.create_table(
        "email_notice_settings",
        sa.Column("user_id", ULID, primary_key=True),
        sa.Column("mode", sa.String(16), nullable=False),  # off | immediately | hourly | daily
        # The address notices may go to: the account's, once confirmed. Notices stop when
        # the account's address is no longer this one.
        sa.Column("confirmed_address", sa.String(320), nullable=True),
        sa.Column("confirmation_sent_at", sa.BigInteger, nullable=True),
        sa.Column("updated_at", sa.BigInteger, nullable=False),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.id"],
            name="fk_email_notice_settings_user_id_users",
            ondelete="CASCADE",
        ),
    )
    op.create_table(
        "email_notices",
        sa.Column("id", ULID, primary_key=True),
        sa.Column("user_id", ULID, nullable=False),
        sa.Column("message_id", ULID, nullable=False),
        sa.Column("created_at", sa.BigInteger, nullable=False),
        sa.Column("status", sa.String(16), nullable=False),  # pending | sent | dropped | failed
        sa.Column("attempts", sa.Integer, nullable=False, server_default="0"),
        # Due time: now for "immediately", the end of the period for a digest; then the
        # next retry, or the end of an attempt's claim.
        sa.Column("next_attempt_at", sa.BigInteger, nullable=False),
        sa.Column("last_error", sa.Text, nullable=True),
        sa.Column("finished_at", sa.BigInteger, nullable=True),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name="fk_email_notices_user_id_users", ondelete="CASCADE"
        ),
    )
    op.create_index("ix_email_notices_due", "email_notices", ["status", "next_attempt_at"])
    op.create_index("ix_email_notices_user", "email_notices", ["user_id", "id"])


def downgrade() -> None:
    op.drop_table("email_notices")
    op.drop_table("email_notice_settings")
