"""Request and response bodies of the link endpoints (the ``data`` of the envelope)."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec
from litestar.openapi.spec import Schema
from litestar.params import KwargDefinition

from anonbox.core.envelope import Timestamp
from anonbox.core.text import NO_CONTROLS_PATTERN, VISIBLE_TEXT_PATTERN

MAX_PROMPT_CHARACTERS = 300
MAX_PAUSE_HOURS = 365 * 24

# What happens to a new message with a muted word: kept in the filtered folder, or dropped.
MutedMode = Literal["filter", "drop"]
# Answers posted to the creator's fediverse account: off, or with this visibility.
Crosspost = Literal["off", "public", "unlisted", "followers"]
# Who may send to a link: anyone, or only people signed in to an anonbox account (who stay
# anonymous to the creator: docs/safety.md, "Signed-in senders").
Senders = Literal["anyone", "signed_in"]
MAX_CONTENT_WARNING_CHARACTERS = 100
# The story card's look, chosen per link (web/cards draws them): "violet" is the default,
# "night" the dark one, "paper" the light one.
CardTheme = Literal["violet", "peach", "ocean", "mint", "night", "paper"]
CARD_THEMES: tuple[str, ...] = ("violet", "peach", "ocean", "mint", "night", "paper")
DEFAULT_CARD_THEME = "violet"
# The languages a link can speak to the world: core.i18n.LANGUAGES (a test keeps them one).
LinkLanguage = Literal["en", "ja", "ko", "id", "es"]
# How a followable link's answers are addressed on the fediverse (docs/fediverse.md):
# everyone and public timelines, everyone but not public timelines, or followers only.
FederationVisibility = Literal["public", "unlisted", "followers"]
FEDERATION_VISIBILITIES: tuple[str, ...] = ("public", "unlisted", "followers")

# Bounds are documented here but checked after NFC and trimming, in the service.
_PROMPT_DOC = KwargDefinition(
    min_length=1,
    max_length=MAX_PROMPT_CHARACTERS,
    pattern=VISIBLE_TEXT_PATTERN,
    description="What the public page asks senders: 1 to 300 characters once surrounding "
    "whitespace is trimmed, not only characters that draw nothing (refused as blank)",
)


class LinkIn(msgspec.Struct):
    # Absent: the default prompt in the creator's language (links.prompts).
    prompt: Annotated[str | msgspec.UnsetType, _PROMPT_DOC] = msgspec.UNSET


class LinkPatch(msgspec.Struct):
    """Send at least one field; an absent field keeps its value, an unknown one is ignored."""

    prompt: Annotated[str | msgspec.UnsetType, _PROMPT_DOC] = msgspec.UNSET
    paused: Annotated[
        bool | msgspec.UnsetType,
        KwargDefinition(description="While true, the link refuses new messages"),
    ] = msgspec.UNSET
    follow_ups: Annotated[
        bool | msgspec.UnsetType,
        KwargDefinition(
            description="Whether a sender may send one follow-up through their receipt "
            "(true for a new link)"
        ),
    ] = msgspec.UNSET
    pause_for_hours: Annotated[
        int | msgspec.UnsetType,
        KwargDefinition(
            ge=1,
            le=MAX_PAUSE_HOURS,
            description="Pause the link for this many hours (1 to 8760); it resumes by "
            "itself within a minute of the end. Not together with paused.",
        ),
    ] = msgspec.UNSET
    hide_dates: Annotated[
        bool | msgspec.UnsetType,
        KwargDefinition(description="Whether the public page leaves out when messages came"),
    ] = msgspec.UNSET
    muted: Annotated[
        MutedMode | msgspec.UnsetType,
        KwargDefinition(
            description="A new message with a muted word: 'filter' keeps it in the link's "
            "filtered folder ('filter' for a new link), 'drop' drops it silently"
        ),
    ] = msgspec.UNSET
    crosspost: Annotated[
        Crosspost | msgspec.UnsetType,
        KwargDefinition(
            description="Each answer you publish is posted to your connected Mastodon or "
            "Misskey account with this visibility ('public', 'unlisted', 'followers'), or "
            "not ('off', for a new link). Turning it on needs a connected account "
            "(409 no_fediverse_account)."
        ),
    ] = msgspec.UNSET
    crosspost_cw: Annotated[
        str | msgspec.UnsetType,
        KwargDefinition(
            max_length=MAX_CONTENT_WARNING_CHARACTERS,
            pattern=NO_CONTROLS_PATTERN,
            description="A content warning for the posted answers (0 to 100 characters; "
            "'' for none)",
        ),
    ] = msgspec.UNSET
    fediverse: Annotated[
        bool | msgspec.UnsetType,
        KwargDefinition(
            description="Whether people can follow the link from the fediverse (Mastodon, "
            "Misskey…) and see its answers there (false for a new link)"
        ),
    ] = msgspec.UNSET
    fediverse_discoverable: Annotated[
        bool | msgspec.UnsetType,
        KwargDefinition(
            description="Whether the link's fediverse profile says it may be suggested to "
            "people and its posts searched for (discoverable, indexable: false for a new "
            "link); its followers are told of a change"
        ),
    ] = msgspec.UNSET
    senders: Annotated[
        Senders | msgspec.UnsetType,
        KwargDefinition(
            description="Who may send: 'anyone' (for a new link), or 'signed_in': only "
            "people signed in to an anonbox account (a sign-in access token or an API key; "
            "401 sign_in_required otherwise), who stay anonymous to you"
        ),
    ] = msgspec.UNSET
    language: Annotated[
        LinkLanguage | msgspec.UnsetType,
        KwargDefinition(
            description="The language the link speaks to the world: its previews in chats "
            "and feeds (og:title, og:description, og:locale, alt texts) and its cards, "
            "whoever reads them (a new link: the language of the browser or client that "
            "made it, else your account's)"
        ),
    ] = msgspec.UNSET
    card_theme: Annotated[
        CardTheme | msgspec.UnsetType,
        KwargDefinition(
            description="The look of the link's story cards and previews ('violet' for a "
            "new link; 'night' is dark, 'paper' light)"
        ),
    ] = msgspec.UNSET
    federation_visibility: Annotated[
        FederationVisibility | msgspec.UnsetType,
        KwargDefinition(
            description="Who sees the link's answers on the fediverse once it is followable: "
            "'public' (everyone, public timelines too; for a new link), 'unlisted' "
            "(everyone, kept off public timelines) or 'followers' (its followers only; "
            "not in its outbox, not fetched by anyone else)"
        ),
    ] = msgspec.UNSET


# The rules of a patch across its fields, as the document states them; the service checks
# them (``service.update_link``): at least one setting (unknown fields are ignored, so
# ``minProperties`` alone would let ``{"colour": "red"}`` through), not both ways to pause.
LINK_PATCH_RULES: dict[str, object] = {
    "min_properties": 1,
    "any_of": [Schema(required=[f.encode_name]) for f in msgspec.structs.fields(LinkPatch)],
    "not": Schema(required=["paused", "pause_for_hours"]),
}


class LinkOut(msgspec.Struct):
    id: str
    prompt: str
    paused: bool
    created_at: Timestamp
    follow_ups: bool = True
    paused_until: Timestamp | None = None  # a timed pause's end; null when open-ended
    hide_dates: bool = False
    muted: MutedMode = "filter"  # a message with a muted word: the filtered folder, or dropped
    crosspost: Crosspost = "off"  # answers posted to the creator's fediverse account
    crosspost_cw: str | None = None  # their content warning
    fediverse: bool = False  # followable from the fediverse (docs/fediverse.md)
    fediverse_discoverable: bool = False  # its profile may be suggested and searched
    senders: Senders = "anyone"  # who may send: anyone, or signed-in people only
    # What the link speaks to the world (previews, alt texts, cards): its setting, else
    # the creator's language, else English.
    language: LinkLanguage = "en"
    card_theme: CardTheme = "violet"  # the story card's and preview's look
    # Who sees its answers on the fediverse: everyone, everyone off public timelines, or
    # its followers only.
    federation_visibility: FederationVisibility = "public"


class LinkList(msgspec.Struct):
    items: list[LinkOut]


# What public pages, cards and the API call a creator who has not chosen a name: never
# anything taken from their e-mail address (pages show it translated).
NEUTRAL_NAME = "The creator"


class PublicLink(msgspec.Struct):
    """What a visitor's send page shows: never the creator's e-mail or account id."""

    id: str
    prompt: str
    paused: bool
    creator_name: str  # the name they chose, else NEUTRAL_NAME
    creator_picture_url: str | None
    hide_dates: bool = False  # the page leaves out when messages came
    creator_bio: str | None = None
    creator_named: bool = False  # whether creator_name is one they chose
    # Their picture on this site: uploaded, else generated (account.avatar); never the
    # account id or anything of the e-mail.
    creator_avatar_url: str = "/avatars/neutral.svg"
    senders: Senders = "anyone"  # 'signed_in': a sender must be signed in to send
    # What the link speaks to the world (previews, alt texts, cards, ActivityPub): the
    # link's language setting, else its creator's, else English.
    language: str = "en"
    card_theme: CardTheme = "violet"  # the story card's look
