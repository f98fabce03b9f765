"""Sign-in with a one-time link sent by e-mail.

Asking for a link answers the same whether or not the address has an account (the
account is made when the link is followed), so the form cannot be used to learn who
uses anonbox. A link is 256 random bits, kept only as its SHA-256, works once, for
``email_signin_ttl_seconds`` (15 minutes), and only in the browser that asked for it:
the browser holds a random binding in an HttpOnly cookie, and the link's row holds its
hash. A mail scanner that opens the link, or someone it was forwarded to, has no cookie,
so it neither signs in nor spends the link. Links printed by ``anonbox signin-link``
have no browser to bind to and work in any browser, once.

Nobody can lock the owner of an address out by asking for it. Mail to one address is
bounded by ``Settings.limit_signin_address`` (one mail every five minutes): a request
past it sends nothing new, but binds the asking browser to the address's pending links,
so the link already in the mailbox (sent at most five minutes ago, valid fifteen) works
in that browser too. The owner asks, opens the newest mail, and is in, however many
others asked for the address from however many networks. Asking is also limited per
sender network (``Settings.limit_signin_network``), which bounds how many addresses one
network can mail. The page is the same whether a mail went out or not, and whether or
not the address has an account.

So is the work done before the page is answered, or its timing would tell what the page
does not (issue 39): asking writes the link's row, with one statement whether or not a
mail is due (only the row's ``mail_due_at`` differs), and the mail is sent after the
answer by ``SignInMailCourier``, in the notification worker. The row is the durable
hand-over: a process that stops after the answer leaves the mail due, and the worker of
any instance sends it; an attempt that dies with its process is taken up again when its
lease runs out. The link in the mail is minted when the mail is written, as a row of its
own bound to the asking browser: no token waits in the database in clear, and if a mail
went out but its attempt died before recording it, the mail sent again carries a second
link and both work. A mail the server refuses or cannot take is tried again, each wait
four times the last, while its link would still work, then given up.

Used and expired links, and the addresses they hold, are dropped an hour after they
expire by a chore of every instance (``sweep_expired``, ``auth.tasks``), however quiet
the form: not by the next ask, which on a quiet site could be days away.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from email.message import EmailMessage

from anonbox.auth import repository
from anonbox.auth.service import account_for_email, normalised_email
from anonbox.auth.sessions import SessionTokens, open_session
from anonbox.core.clock import now_us
from anonbox.core.database import Connection, Database, Row
from anonbox.core.errors import (
    BadRequest,
    FieldProblem,
    RateLimited,
    ServiceUnavailable,
    ValidationFailed,
)
from anonbox.core.i18n import N_, _, current_language, ngettext, use_locale
from anonbox.core.mail import Mailer, compose
from anonbox.core.ratelimit import RateLimiter
from anonbox.core.settings import Settings
from anonbox.identity.credentials import credential_hash
from anonbox.notifications.courier import Outcome, backoff_seconds
from anonbox.outbox.schemas import Event

logger = logging.getLogger("anonbox.auth")

_US = 1_000_000
_PURGE_AFTER_US = 3600 * _US  # used or expired links are kept an hour, then dropped
SWEEP_SECONDS = 300.0  # how often every instance drops them
MAX_EMAIL_LENGTH = 320
LINK_PATH = "/signin/email"
MAX_MAIL_WAIT_SECONDS = 15 * 60  # between two attempts at one mail


class SignInLinkRefused(BadRequest):
    """A sign-in link that cannot sign anyone in; the message says why and what to do."""


@dataclass(frozen=True, slots=True)
class SignInLink:
    url: str
    email: str


def new_binding() -> str:
    return secrets.token_urlsafe(32)


def _address(email: str) -> str:
    try:
        if len(email) > MAX_EMAIL_LENGTH:
            raise ValueError(email)
        return normalised_email(email)
    except ValueError:
        raise ValidationFailed(
            N_("Enter an e-mail address, like name@example.com"),
            [FieldProblem("email", "invalid")],
        ) from None


def _link_url(base_url: str, token: str) -> str:
    return f"{base_url.rstrip('/')}{LINK_PATH}?token={token}"


async def _new_link(
    db: Database,
    settings: Settings,
    *,
    email: str,
    binding: str | None,
    base_url: str,
    mail: bool = False,
) -> str:
    """Store a new link for ``email``, bound to ``binding``; its URL. With ``mail``, the
    row also asks the worker to mail a link for it (``SignInMailCourier``). A row is
    written for every ask, mailed or not: it is what binds the browser to the address's
    pending links (``repository.consume_email_signin``), and the one statement either
    way is what keeps the two asks alike."""
    token = secrets.token_urlsafe(32)
    now = now_us()
    async with db.transaction() as tx:
        await repository.insert_email_signin(
            tx,
            token_hash=credential_hash(token),
            email=email,
            binding_hash=None if binding is None else credential_hash(binding),
            created_at=now,
            expires_at=now + settings.email_signin_ttl_seconds * _US,
            mail_due_at=now if mail else None,
            mail_language=current_language(),
            site_url=base_url,
        )
    return _link_url(base_url, token)


async def send_link(
    db: Database,
    limiter: RateLimiter,
    settings: Settings,
    *,
    email: str,
    network: str | None,
    binding: str,
    base_url: str,
) -> str:
    """Have a sign-in link bound to ``binding`` mailed, after the answer; the normalised
    address it goes to. The same work whether or not a mail is due, and whether or not
    the address has an account (the module's docstring says why).

    ``network`` is the asking sender's keyed hash (None when the peer is unknown).
    """
    address = _address(email)
    if network is not None:
        decision = await limiter.hit([(settings.limit_signin_network, network)])
        if not decision.allowed:
            minutes = max(1, round(decision.retry_after / 60))
            raise RateLimited(
                f"Too many sign-in links were asked for; try again in {minutes} "
                f"minute{'s' if minutes != 1 else ''}",
                retry_after=decision.retry_after,
            )
    # The address is a key in the limiter (perhaps Redis): keyed-hashed, never in clear.
    # Past its limit nothing is refused: the asking browser is bound to the address's
    # pending links instead of a new one being mailed (one atomic hit decides, on every
    # instance sharing the limiter).
    address_key = hmac.new(settings.secret_key.encode(), address.encode(), hashlib.sha256)
    mail = await limiter.hit([(settings.limit_signin_address, address_key.hexdigest())])
    await _new_link(
        db, settings, email=address, binding=binding, base_url=base_url, mail=mail.allowed
    )
    return address


def signin_mail(settings: Settings, *, to: str, url: str) -> EmailMessage:
    """The mail with a sign-in link, in the current locale (the asking page's)."""
    minutes = settings.email_signin_ttl_seconds // 60
    return compose(
        settings,
        to=to,
        subject=_("Your anonbox sign-in link"),
        text=(
            _("Open this link to sign in to anonbox:")
            + f"\n\n{url}\n\n"
            + ngettext(
                "It works once, for %(num)d minute, in the browser where you asked for "
                "it. If you did not ask to sign in, ignore this mail: nothing happens "
                "without the link.",
                "It works once, for %(num)d minutes, in the browser where you asked for "
                "it. If you did not ask to sign in, ignore this mail: nothing happens "
                "without the link.",
                minutes,
            )
            + "\n"
        ),
    )


@dataclass(frozen=True, slots=True)
class MailDue:
    """A claimed sign-in mail: the asking row, and what writing its mail needs."""

    token_hash: str
    row: Row


class SignInMailCourier:
    """Sends the sign-in mails the asks left due, after their answers (the notification
    worker runs it beside the other channels' couriers). Its work is written by the ask
    itself, not handed over by the outbox: as a channel it accepts nothing."""

    name = "signin_mail"
    title = "Sign-in mail"

    def __init__(self, db: Database, settings: Settings, mailer: Mailer) -> None:
        self._db = db
        self._settings = settings
        self._mailer = mailer

    async def accept(self, conn: Connection, events: Sequence[Event]) -> None:
        return None

    async def due(self, now: int, limit: int, busy: Sequence[str]) -> Sequence[Row]:
        # ``busy`` needs no filter: a claimed mail is due again only when its lease ends.
        return await repository.due_signin_mails(self._db, now, limit)

    async def claim(self, row: Row, until: int) -> MailDue | None:
        token_hash = str(row["token_hash"])
        claimed = await repository.claim_signin_mail(
            self._db, token_hash=token_hash, seen_at=row["mail_due_at"], until=until
        )
        return None if claimed is None else MailDue(token_hash, claimed)

    async def attempt(self, job: MailDue) -> Outcome:
        row = job.row
        attempts = int(row["mail_attempts"]) + 1
        now = now_us()
        if row["expires_at"] <= now:
            return await self._give_up(job, attempts)
        # A link of its own for this mail, bound to the browser that asked, for as long
        # as the asked one lives; written before the mail leaves, so it works on arrival.
        token = secrets.token_urlsafe(32)
        await repository.insert_email_signin(
            self._db,
            token_hash=credential_hash(token),
            email=row["email"],
            binding_hash=row["binding_hash"],
            created_at=now,
            expires_at=row["expires_at"],
        )
        with use_locale(row["mail_language"]):
            mail = signin_mail(
                self._settings,
                to=row["email"],
                url=_link_url(row["site_url"] or "", token),
            )
        try:
            await self._mailer.send(mail)  # logs a failure, without the address
        except ServiceUnavailable:
            wait = backoff_seconds(
                self._settings.email_retry_seconds, attempts, MAX_MAIL_WAIT_SECONDS
            )
            again = now_us() + int(wait * _US)
            if again >= row["expires_at"]:
                return await self._give_up(job, attempts)
            await repository.finish_signin_mail(
                self._db, token_hash=job.token_hash, due_at=again, attempts=attempts
            )
            return Outcome.RETRY
        await repository.finish_signin_mail(
            self._db, token_hash=job.token_hash, due_at=None, attempts=attempts
        )
        return Outcome.DELIVERED

    async def _give_up(self, job: MailDue, attempts: int) -> Outcome:
        logger.warning(
            "a sign-in mail was given up after %d attempts: its link would have expired",
            attempts,
        )
        await repository.finish_signin_mail(
            self._db, token_hash=job.token_hash, due_at=None, attempts=attempts
        )
        return Outcome.FAILED

    async def purge(self) -> None:
        return None  # the expired rows are swept by a chore (``sweep_expired``)


async def sweep_expired(db: Database) -> None:
    """Drop the links that expired over an hour ago: a chore of every instance, every
    ``SWEEP_SECONDS`` (the delete is the same whoever runs it)."""
    await repository.purge_email_signins(db, expired_before=now_us() - _PURGE_AFTER_US)


async def printed_link(
    db: Database, settings: Settings, *, email: str, base_url: str
) -> SignInLink:
    """A link for the command line: the account is made now if new (in the server's
    default language when one is set: no browser says one here), and the link works in
    any browser (there is none to bind to), once, for the usual time."""
    address = _address(email)
    async with db.transaction() as tx:
        await account_for_email(tx, address, language=settings.default_language)
    url = await _new_link(db, settings, email=address, binding=None, base_url=base_url)
    return SignInLink(url=url, email=address)


async def follow_link(
    db: Database,
    settings: Settings,
    *,
    token: str,
    binding: str | None,
    language: str | None = None,
) -> SessionTokens:
    """Spend the link and open a session for its address's account (made if new, in
    ``language``: the browser's that followed the link, the one that asked for it)."""
    token_hash = credential_hash(token)
    binding_hash = None if binding is None else credential_hash(binding)
    now = now_us()
    async with db.transaction() as tx:
        email = await repository.consume_email_signin(
            tx, token_hash=token_hash, binding_hash=binding_hash, now=now
        )
        if email is not None:
            user_id = await account_for_email(tx, email, language=language)
            return await open_session(tx, user_id=user_id, settings=settings)
    raise SignInLinkRefused(await _why_refused(db, token_hash, binding_hash, now))


async def _why_refused(db: Database, token_hash: str, binding_hash: str | None, now: int) -> str:
    row = await repository.email_signin(db, token_hash)
    if row is None:
        return N_("This sign-in link is not valid. Ask for a new one below.")
    if row["used_at"] is not None:
        return N_(
            "This sign-in link was already used; each link works once. Ask for a new one below."
        )
    if row["expires_at"] <= now:
        return N_("This sign-in link has expired. Ask for a new one below.")
    # Unused and unexpired, so the binding did not match: another browser asked for it.
    return N_(
        "This sign-in link was asked for in another browser. Open it there, or ask for a "
        "new one in this browser below."
    )
