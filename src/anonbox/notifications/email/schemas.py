"""What the e-mail notice endpoints of the API take and answer."""

from typing import Annotated, Literal, get_args

import msgspec
from litestar.params import Parameter

from anonbox.core.openapi import keep_component_names

Mode = Literal["off", "immediately", "hourly", "daily"]
MODES: tuple[Mode, ...] = get_args(Mode)
# confirmed: notices go to it; confirmation_sent: a link was mailed and awaits a click;
# unconfirmed: not yet asked (choose a mode other than off to be sent the link).
AddressState = Literal["confirmed", "confirmation_sent", "unconfirmed"]


# The token a mail's link carries (confirming the address, stopping notices).
Token = Annotated[
    str,
    Parameter(
        min_length=1, max_length=200, pattern=r"^[A-Za-z0-9._=-]+$", description="From the mail"
    ),
]


class EmailNoticesIn(msgspec.Struct, forbid_unknown_fields=True):
    mode: Mode


class EmailNoticesOut(msgspec.Struct):
    mode: Mode
    address: str  # the account's address: the only one notices go to
    address_state: AddressState
    active: bool  # notices are being mailed: a mode other than off, to a confirmed address


# Published from ``notifications.email_schemas`` before it was split (core/openapi.py).
keep_component_names("anonbox.notifications.email_schemas", EmailNoticesOut)
