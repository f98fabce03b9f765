"""What a creator can do with their links, and the rules for doing it.

Ownership is settled before the per-link operations run (``links.dependencies.owned_link``);
their statements still name the creator, so a link that changed hands is not found.
"""

from __future__ import annotations

import unicodedata
from typing import cast

from anonbox.account import avatar
from anonbox.core.clock import isoformat_us, now_us
from anonbox.core.database import Database, Row, one_at_a_time
from anonbox.core.errors import Conflict, FieldProblem, NotFound, ValidationFailed
from anonbox.core.i18n import DEFAULT_LANGUAGE, LANGUAGES, N_
from anonbox.core.settings import Settings
from anonbox.core.text import contains_control_characters, normalised_text
from anonbox.federation import service as federation
from anonbox.links import repository
from anonbox.links.availability import NO_LINK, LinkGone, missing_link
from anonbox.links.prompts import default_prompt
from anonbox.links.schemas import (
    CARD_THEMES,
    DEFAULT_CARD_THEME,
    FEDERATION_VISIBILITIES,
    MAX_CONTENT_WARNING_CHARACTERS,
    MAX_PAUSE_HOURS,
    MAX_PROMPT_CHARACTERS,
    NEUTRAL_NAME,
    CardTheme,
    FederationVisibility,
    LinkLanguage,
    LinkList,
    LinkOut,
    PublicLink,
)

# A creator's links are listed in one response, unpaginated: the cap keeps it small.
MAX_LINKS_PER_CREATOR = 100

_US = 1_000_000
RESUME_SECONDS = 5.0  # how often ended pauses are looked for


class TooManyLinks(Conflict):
    code = "too_many_links"


class NoFediverseAccount(Conflict):
    code = "no_fediverse_account"


def normalised_prompt(value: str) -> str:
    """The prompt as stored: NFC, trimmed, 1 to 300 code points, something visible (a
    page asking nothing it can show looks broken), no controls."""
    return normalised_text(
        value, field="prompt", max_characters=MAX_PROMPT_CHARACTERS, trim=True, visible=True
    )


def _link_out(row: Row) -> LinkOut:
    until = row["paused_until"]
    return LinkOut(
        id=row["id"],
        prompt=row["prompt"],
        paused=bool(row["paused"]),
        created_at=isoformat_us(row["created_at"]),
        follow_ups=bool(row["follow_ups"]),
        paused_until=None if until is None else isoformat_us(until),
        hide_dates=bool(row["hide_dates"]),
        muted="drop" if row["muted"] == "drop" else "filter",
        crosspost=row["crosspost"] or "off",
        crosspost_cw=row["crosspost_cw"],
        fediverse=bool(row["fediverse"]),
        fediverse_discoverable=bool(row["fediverse_discoverable"]),
        senders="signed_in" if row["senders"] == "signed_in" else "anyone",
        language=spoken_language(row["language"], row["creator_language"]),
        card_theme=shown_theme(row["card_theme"]),
        federation_visibility=federation_visibility(row["federation_visibility"]),
    )


async def create_link(
    db: Database, *, user_id: str, prompt: str | None, language: str | None = None
) -> LinkOut:
    """A new link asking ``prompt``; None: the default prompt in the creator's language
    (their account's, English until one is known). ``language``: what the link speaks to
    the world, the language of the browser or client that made it (None, or one anonbox
    does not speak: the creator's, whatever it is when the link is shown)."""
    creator_language = await repository.user_language(db, user_id)
    if prompt is None:
        prompt = default_prompt(creator_language)
    if language not in LANGUAGES:
        language = None
    text = normalised_prompt(prompt)
    now = now_us()
    # Counted and added in a transaction that runs alone for this creator, on every
    # instance: parallel creations would otherwise all count below the cap.
    async with db.transaction() as tx:
        await one_at_a_time(tx, f"links:{user_id}")
        if await repository.count_links(tx, user_id) >= MAX_LINKS_PER_CREATOR:
            raise TooManyLinks(
                f"A creator can have at most {MAX_LINKS_PER_CREATOR} links; delete one first"
            )
        link_id = await repository.insert_link(
            tx, user_id=user_id, prompt=text, created_at=now, language=language
        )
    return LinkOut(
        id=link_id,
        prompt=text,
        paused=False,
        created_at=isoformat_us(now),
        language=spoken_language(language, creator_language),
    )


async def links_of(db: Database, *, user_id: str) -> LinkList:
    return LinkList(items=[_link_out(row) for row in await repository.links_of(db, user_id)])


async def link(db: Database, *, link_id: str, user_id: str) -> LinkOut:
    row = await repository.link_of(db, link_id=link_id, user_id=user_id)
    if row is None:
        raise NotFound(NO_LINK)
    return _link_out(row)


async def public_link(db: Database, *, link_id: str) -> PublicLink:
    row = await repository.public_link(db, link_id)
    if row is None:
        raise await missing_link(db, link_id)
    if row["disabled"]:
        raise LinkGone()
    return PublicLink(
        id=row["id"],
        prompt=row["prompt"],
        paused=bool(row["paused"]),
        creator_name=row["display_name"] or NEUTRAL_NAME,
        creator_picture_url=row["picture_url"],
        hide_dates=bool(row["hide_dates"]),
        creator_bio=row["bio"],
        creator_named=bool(row["display_name"]),
        creator_avatar_url=avatar.avatar_ref(
            user_id=row["user_id"], uploaded=row["avatar_id"], named=bool(row["display_name"])
        ).url,
        senders="signed_in" if row["senders"] == "signed_in" else "anyone",
        language=spoken_language(row["language"], row["creator_language"]),
        card_theme=shown_theme(row["card_theme"]),
    )


def spoken_language(link_language: str | None, creator_language: str | None) -> LinkLanguage:
    """The language a link speaks to the world: its own setting, else its creator's, else
    English (a value no longer spoken reads as the next one)."""
    for language in (link_language, creator_language):
        if language in LANGUAGES:
            return cast(LinkLanguage, language)
    return cast(LinkLanguage, DEFAULT_LANGUAGE)


def federation_visibility(stored: str | None) -> FederationVisibility:
    """How the link's answers are addressed on the fediverse (NULL: public)."""
    return cast(FederationVisibility, stored if stored in FEDERATION_VISIBILITIES else "public")


def shown_theme(stored: str | None) -> CardTheme:
    """The link's card theme as stored (NULL, or one no longer drawn: the default)."""
    return cast(CardTheme, stored if stored in CARD_THEMES else DEFAULT_CARD_THEME)


async def pause_end(db: Database, *, link_id: str) -> int | None:
    """When a timed pause of the link ends, in microseconds (None: not a timed pause)."""
    return await repository.paused_until(db, link_id)


async def content_version(db: Database, *, link_id: str) -> tuple[int, int | None] | None:
    """The link's content version and its pause's end (None: no such link). The version
    moves, in the same transaction, with anything its public pages show (migration 0036)."""
    row = await repository.content_version(db, link_id)
    return None if row is None else (int(row["content_version"]), row["paused_until"])


async def creator_time_zone(db: Database, *, link_id: str) -> str | None:
    """The time zone the link's creator reads times in (None: not chosen, or no such link),
    which the link's pages show times in to everyone (docs/decisions.md, issue 41)."""
    return await repository.creator_time_zone(db, link_id)


async def update_link(
    db: Database,
    *,
    link_id: str,
    user_id: str,
    prompt: str | None,
    paused: bool | None,
    follow_ups: bool | None = None,
    pause_for_hours: int | None = None,
    hide_dates: bool | None = None,
    muted: str | None = None,
    crosspost: str | None = None,
    crosspost_cw: str | None = None,
    senders: str | None = None,
    fediverse: bool | None = None,
    settings: Settings | None = None,
    language: str | None = None,
    card_theme: str | None = None,
    federation_visibility: str | None = None,
    fediverse_discoverable: bool | None = None,
) -> LinkOut:
    """Change the given settings; None leaves one as it is, and at least one must be given.
    Making the link followable gives it its actor's keys first (``settings``: whether the
    site federates)."""
    given = (
        prompt,
        paused,
        follow_ups,
        pause_for_hours,
        hide_dates,
        muted,
        crosspost,
        crosspost_cw,
        fediverse,
        senders,
        language,
        card_theme,
        federation_visibility,
        fediverse_discoverable,
    )
    if all(setting is None for setting in given):
        raise ValidationFailed(
            "Send at least one setting to change: prompt, paused, pause_for_hours, "
            "follow_ups, hide_dates, muted, crosspost, crosspost_cw, fediverse, senders, "
            "language, card_theme, federation_visibility, fediverse_discoverable",
            [FieldProblem("body", "missing")],
        )
    if federation_visibility is not None and federation_visibility not in FEDERATION_VISIBILITIES:
        raise ValidationFailed(
            "federation_visibility must be 'public', 'unlisted' or 'followers'",
            [FieldProblem("federation_visibility", "invalid")],
        )
    if language is not None and language not in LANGUAGES:
        raise ValidationFailed(
            "language must be one of " + ", ".join(f"'{code}'" for code in LANGUAGES),
            [FieldProblem("language", "invalid")],
        )
    if card_theme is not None and card_theme not in CARD_THEMES:
        raise ValidationFailed(
            "card_theme must be one of " + ", ".join(f"'{theme}'" for theme in CARD_THEMES),
            [FieldProblem("card_theme", "invalid")],
        )
    if crosspost is not None and crosspost not in ("off", "public", "unlisted", "followers"):
        raise ValidationFailed(
            "crosspost must be 'off', 'public', 'unlisted' or 'followers'",
            [FieldProblem("crosspost", "invalid")],
        )
    if crosspost_cw is not None:
        whole = unicodedata.normalize("NFC", crosspost_cw)
        crosspost_cw = whole.strip()
        if len(crosspost_cw) > MAX_CONTENT_WARNING_CHARACTERS:
            raise ValidationFailed(
                f"crosspost_cw must be at most {MAX_CONTENT_WARNING_CHARACTERS} characters",
                [FieldProblem("crosspost_cw", "too_long")],
            )
        # Before trimming too: strip() takes some controls for whitespace.
        if contains_control_characters(whole):
            raise ValidationFailed(
                "crosspost_cw must not contain control characters",
                [FieldProblem("crosspost_cw", "control_character")],
            )
    if crosspost not in (None, "off") and not await repository.has_fediverse_account(db, user_id):
        raise NoFediverseAccount(
            N_(
                "Link a Mastodon or Misskey account on the account page before answers "
                "are posted to it."
            )
        )
    if muted is not None and muted not in ("filter", "drop"):
        raise ValidationFailed(
            "muted must be 'filter' or 'drop'", [FieldProblem("muted", "invalid")]
        )
    if senders is not None and senders not in ("anyone", "signed_in"):
        raise ValidationFailed(
            "senders must be 'anyone' or 'signed_in'", [FieldProblem("senders", "invalid")]
        )
    if pause_for_hours is not None and not 1 <= pause_for_hours <= MAX_PAUSE_HOURS:
        raise ValidationFailed(
            f"pause_for_hours must be 1 to {MAX_PAUSE_HOURS}",
            [FieldProblem("pause_for_hours", "out_of_range")],
        )
    if paused is not None and pause_for_hours is not None:
        raise ValidationFailed(
            "Send paused or pause_for_hours, not both",
            [FieldProblem("pause_for_hours", "invalid")],
        )
    text = None if prompt is None else normalised_prompt(prompt)
    if fediverse:
        await federation.make_followable(db, settings, link_id=link_id)
    until = None if pause_for_hours is None else now_us() + pause_for_hours * 3600 * _US
    row = await repository.update_link(
        db,
        link_id=link_id,
        user_id=user_id,
        prompt=text,
        paused=paused,
        follow_ups=follow_ups,
        paused_until=until,
        hide_dates=hide_dates,
        muted=muted,
        crosspost=crosspost,
        crosspost_cw=crosspost_cw,
        senders=senders,
        now=now_us(),
        fediverse=fediverse,
        language=language,
        card_theme=card_theme,
        federation_visibility=federation_visibility,
        fediverse_discoverable=fediverse_discoverable,
    )
    if row is None:
        raise NotFound(NO_LINK)
    return _link_out(row)


async def delete_link(db: Database, *, link_id: str, user_id: str) -> None:
    """Delete the link with every message and reply under it; its id is never reused, and
    from now on answers 404 ``link_gone`` (a 410 page) to senders and creator alike."""
    async with db.transaction() as tx:
        if not await repository.delete_link(tx, link_id=link_id, user_id=user_id, now=now_us()):
            raise NotFound(NO_LINK)


async def resume_ended(db: Database) -> int:
    """Resume links whose timed pause has ended; how many. A chore of every instance, every
    ``RESUME_SECONDS`` (``core.chores``): the update is the same whoever runs it."""
    return await repository.resume_ended_pauses(db, now_us())
