"""What a creator can do with e-mail notices: read and choose the mode, confirm the
address, and turn notices off from a mail without signing in."""

from __future__ import annotations

from email.message import EmailMessage
from typing import cast

from anonbox.core.clock import now_us
from anonbox.core.database import Database, Row
from anonbox.core.errors import NotFound, ServiceUnavailable
from anonbox.core.i18n import _, use_locale
from anonbox.core.mail import Mailer, compose
from anonbox.core.settings import Settings
from anonbox.identity.service import Principal
from anonbox.notifications.email import repository
from anonbox.notifications.email.delivery import (
    CONFIRM_PAGE,
    confirmation_token,
    confirmation_token_valid,
    site_url,
    token_user,
    unsubscribe_token_valid,
)
from anonbox.notifications.email.schemas import AddressState, EmailNoticesOut, Mode

RESEND_AFTER_US = 60 * 1_000_000  # choosing again within a minute mails no second link
_NO_MAIL = "E-mail cannot be sent from this server (ANONBOX_SMTP_URL is not set)"
# A token that does not verify names no confirmation and no subscription: not found, as an
# unknown id is (the request itself was well formed).
_BAD_LINK = "This link is not valid (it may be for an address the account no longer has)"


def _out(row: Row) -> EmailNoticesOut:
    mode = cast(Mode, row["mode"] or "off")
    state: AddressState = "unconfirmed"
    if row["confirmed_address"] is not None and row["confirmed_address"] == row["email"]:
        state = "confirmed"
    elif row["confirmation_sent_at"] is not None:
        state = "confirmation_sent"
    return EmailNoticesOut(
        mode=mode,
        address=row["email"],
        address_state=state,
        active=mode != "off" and state == "confirmed",
    )


async def _choice(db: Database, user_id: str) -> Row:
    row = await repository.choice_of(db, user_id)
    if row is None:
        raise NotFound("No such creator")
    return row


async def choice(db: Database, *, user_id: str) -> EmailNoticesOut:
    return _out(await _choice(db, user_id))


async def _verified_by_sign_in(db: Database, creator: Principal, row: Row) -> bool:
    """The account's address was proven by signing in: Google only gives verified
    addresses, and a session starts only from Google or an e-mail link."""
    return (
        creator.kind == "session"
        or row["google_sub"] is not None
        or await repository.has_signed_in(db, creator.user_id)
    )


async def choose(
    db: Database, settings: Settings, mailer: Mailer | None, *, creator: Principal, mode: Mode
) -> EmailNoticesOut:
    """Save the mode; mail a confirmation link first if the address is not yet confirmed."""
    row = await _choice(db, creator.user_id)
    address: str = row["email"]
    confirmed = row["confirmed_address"] if row["confirmed_address"] == address else None
    sent_at: int | None = row["confirmation_sent_at"]
    now = now_us()
    if mode != "off":
        if mailer is None:
            raise ServiceUnavailable(_NO_MAIL, 3600)
        if confirmed is None and await _verified_by_sign_in(db, creator, row):
            confirmed = address
        if confirmed is None and (sent_at is None or now - sent_at > RESEND_AFTER_US):
            with use_locale(row["language"], row["time_zone"]):  # the creator's language
                mail = _confirmation_mail(settings, user_id=creator.user_id, to=address)
            await mailer.send(mail)
            sent_at = now
    async with db.transaction() as tx:
        await repository.save_choice(
            tx,
            user_id=creator.user_id,
            mode=mode,
            confirmed_address=confirmed,
            confirmation_sent_at=sent_at,
            at=now,
        )
        if mode == "off":
            await repository.drop_pending(tx, user_id=creator.user_id, at=now)
    return await choice(db, user_id=creator.user_id)


def _confirmation_mail(settings: Settings, *, user_id: str, to: str) -> EmailMessage:
    token = confirmation_token(settings.secret_key, user_id, to)
    url = f"{site_url(settings)}{CONFIRM_PAGE}?token={token}"
    return compose(
        settings,
        to=to,
        subject=_("Confirm your address for anonbox notices"),
        text=(
            _("You asked anonbox to tell you about new anonymous messages by e-mail.")
            + "\n"
            + _("Open this link to confirm that this address is yours:")
            + f"\n\n{url}\n\n"
            + _("If you did not ask for this, ignore this mail: nothing is sent without it.")
            + "\n"
        ),
    )


async def confirm(db: Database, settings: Settings, *, token: str) -> EmailNoticesOut:
    user_id = token_user(token)
    row = await repository.choice_of(db, user_id)
    if row is None or not confirmation_token_valid(settings.secret_key, token, row["email"]):
        raise NotFound(_BAD_LINK)
    if not await repository.confirm_address(db, user_id=user_id, address=row["email"], at=now_us()):
        raise NotFound(_BAD_LINK)
    return await choice(db, user_id=user_id)


async def unsubscribe(db: Database, settings: Settings, *, token: str) -> None:
    """Notices off for the creator the token names (RFC 8058 one-click: no sign-in)."""
    if not unsubscribe_token_valid(settings.secret_key, token):
        raise NotFound("This unsubscribe link is not valid")
    async with db.transaction() as tx:
        await repository.turn_off(tx, user_id=token_user(token), at=now_us())
