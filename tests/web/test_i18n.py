"""Pages, mails and times in the reader's language, over HTTP as a browser gets them: the
public pages by ``Accept-Language`` and the footer's switcher, the creator's pages and
mail by their own setting, plural forms, an error page, ``<time>`` elements in the
creator's zone; and the catalogs themselves (extraction up to date, compiled, loadable).
Mail is read from a real SMTP server on loopback. Each test runs on SQLite and on
PostgreSQL."""

from __future__ import annotations

import html
import re
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest
from babel.messages.pofile import read_po

from anonbox.account.avatar import AvatarRef, picture
from anonbox.core.i18n import translations
from anonbox.web.cards.draw import CardLabels, render_link_card
from tests.actions import post_message, post_reply
from tests.conftest import Creator
from tests.server import Server
from tests.support.db import execute, query
from tests.support.forms import csrf_of, submitted
from tests.support.http import loopback_client
from tests.support.mail import SMTPServer, smtp_server, text_of  # noqa: F401 - fixture
from tests.support.servers import own_server
from tests.support.signin import signed_in

ROOT = Path(__file__).resolve().parents[2]
LOCALE = ROOT / "src" / "anonbox" / "locale"
HTML = {"Accept": "text/html"}


server = own_server("server", {"ANONBOX_MAIL_FROM": "anonbox <me@anonbox.test>"}, mail=True)


@pytest.fixture
def browser(server: Server, creator: Creator) -> Iterator[httpx.Client]:
    with signed_in(server, creator.user_id) as client:
        yield client


def lang_of(page: str) -> str:
    found = re.search(r'<html lang="([^"]+)"', page)
    assert found
    return found.group(1)


def choose(browser: httpx.Client, language: str, time_zone: str = "UTC") -> None:
    """The account page's form, as the creator fills it."""
    page = browser.get("/dashboard/account")
    assert page.status_code == 200, page.text
    assert 'id="preferences"' in page.text
    saved = browser.post(
        "/dashboard/account/preferences",
        data={"csrf_token": csrf_of(page.text), "language": language, "time_zone": time_zone},
    )
    assert saved.status_code == 303, saved.text


def email_of(server: Server, creator: Creator) -> str:
    [row] = query(server.database_url, "SELECT email FROM users WHERE id = $1", creator.user_id)
    return str(row["email"])


# --- public pages: Accept-Language and the switcher ---------------------------------------

SEND_PAGE = {
    "ja": ("匿名メッセージ", "送信"),
    "ko": ("익명 메시지", "보내기"),
    "id": ("Pesan anonimmu", "Kirim"),
    "es": ("Tu mensaje anónimo", "Enviar"),
}


@pytest.mark.parametrize("language", sorted(SEND_PAGE))
def test_the_send_page_speaks_the_browsers_language(
    api: httpx.Client, creator: Creator, language: str
) -> None:
    wanted = f"xx-YY, {language}-ZZ;q=0.9, en;q=0.5"  # an unknown first, then this one
    page = api.get(f"/{creator.link_id}", headers={"Accept-Language": wanted})

    assert page.status_code == 200
    assert lang_of(page.text) == language
    label, button = SEND_PAGE[language]
    assert f'<label for="message">{label}</label>' in page.text
    assert f">{button}</button>" in page.text
    assert "Your anonymous message" not in page.text
    assert "Accept-Language" in page.headers["vary"]


def test_english_is_the_default_and_unknown_languages_get_it(
    api: httpx.Client, creator: Creator
) -> None:
    for wanted in (None, "de-DE, fr;q=0.8"):
        headers = {"Accept-Language": wanted} if wanted else {}
        page = api.get(f"/{creator.link_id}", headers=headers)
        assert lang_of(page.text) == "en"
        assert '<label for="message">Your anonymous message</label>' in page.text


def test_the_switcher_remembers_a_choice_over_accept_language(
    server: Server, creator: Creator
) -> None:
    with loopback_client(base_url=server.url, timeout=30) as visitor:
        page = visitor.get(f"/{creator.link_id}", headers={"Accept-Language": "es"})
        switcher = re.findall(r'href="(/language/ko\?next=[^"]+)"', page.text)
        assert switcher, "the footer offers Korean"

        chosen = visitor.get(html.unescape(switcher[0]))

        assert chosen.status_code == 303
        assert chosen.headers["location"] == f"/{creator.link_id}"
        assert visitor.cookies.get("anonbox_lang") == "ko"
        again = visitor.get(f"/{creator.link_id}", headers={"Accept-Language": "es"})
        assert lang_of(again.text) == "ko"
        assert '<label for="message">익명 메시지</label>' in again.text
        home = visitor.get("/", headers={"Accept-Language": "es"})
        assert '<a href="/signin" id="nav-signin">로그인</a>' in home.text


def test_the_switcher_goes_back_only_to_this_site(api: httpx.Client) -> None:
    for elsewhere in ("//evil.example/", "https://evil.example/", "/\\evil.example"):
        chosen = api.get("/language/ja", params={"next": elsewhere})
        assert chosen.status_code == 303
        assert chosen.headers["location"] == "/"
    unknown = api.get("/language/xx", params={"next": "/"})
    assert unknown.status_code == 303
    assert "anonbox_lang" not in unknown.headers.get("set-cookie", "")


def test_an_error_page_is_translated(api: httpx.Client) -> None:
    missing = api.get("/no-such-link-here", headers={**HTML, "Accept-Language": "ja"})

    assert missing.status_code == 404
    assert lang_of(missing.text) == "ja"
    assert '<h1 id="error-title">見つかりません</h1>' in missing.text
    assert "このリンクは存在しません。受け取ったアドレスを確認してください。" in missing.text
    # The API's JSON stays English whatever the browser asks for.
    as_json = api.get("/links/no-such-link-here", headers={"Accept-Language": "ja"})
    assert as_json.status_code in (401, 404)
    assert as_json.json()["message"].isascii()


# --- the creator's pages and mail: their own setting ----------------------------------------


def test_the_creators_setting_wins_on_their_pages(
    server: Server, creator: Creator, browser: httpx.Client
) -> None:
    first = browser.get("/dashboard", headers={"Accept-Language": "id"})
    assert first.status_code == 200, first.text
    assert lang_of(first.text) == "id"  # no setting yet: the browser's, and it is kept
    assert '<h1 id="inbox-title">Kotak masuk</h1>' in first.text
    [row] = query(server.database_url, "SELECT language FROM users WHERE id = $1", creator.user_id)
    assert row["language"] == "id"

    choose(browser, "ko")
    dashboard = browser.get("/dashboard", headers={"Accept-Language": "es"})

    assert lang_of(dashboard.text) == "ko"
    assert '<h1 id="inbox-title">받은 메시지함</h1>' in dashboard.text
    assert "Cookie" in dashboard.headers["vary"]
    account = browser.get("/dashboard/account", headers={"Accept-Language": "es"})
    assert '<option value="ko" lang="ko" selected>한국어</option>' in account.text
    # A visitor's public page is still the visitor's language.
    public = browser.get(f"/{creator.link_id}", headers={"Accept-Language": "es"})
    assert lang_of(public.text) == "es"


def test_a_card_speaks_its_creators_language_to_every_visitor(
    server: Server, creator: Creator, browser: httpx.Client, api: httpx.Client
) -> None:
    """A card stands for its creator wherever it is shared: its words are in the creator's
    language whoever asks for it, and changing the language draws a new version."""
    english = api.get(f"/{creator.link_id}/card.png", headers={"Accept-Language": "ja"})
    assert english.status_code == 200
    choose(browser, "ja")
    japanese = api.get(
        f"/{creator.link_id}/card.png",
        headers={"Accept-Language": "en", "If-None-Match": english.headers["etag"]},
    )
    assert japanese.status_code == 200
    assert japanese.content != english.content
    catalog = translations("ja")
    invitation = catalog.gettext("Send me anonymous messages")
    assert invitation != "Send me anonymous messages"
    public = api.get(f"/links/{creator.link_id}/public").json()["data"]
    assert japanese.content == render_link_card(
        # Issue 31: no chosen name yet, so the card draws the neutral one, translated.
        name=public["creator_name"] if public["creator_named"] else catalog.gettext("The creator"),
        prompt=public["prompt"],
        url=f"{server.url.split('://', 1)[1]}/{creator.link_id}",
        qr=f"{server.url}/{creator.link_id}",
        avatar=picture(AvatarRef("neutral")),
        labels=CardLabels(
            anonymous_message=catalog.gettext("Anonymous message"),
            replied=catalog.gettext("%(name)s replied"),
            invitation=invitation,
        ),
    )


def webhook_problem(browser: httpx.Client) -> str:
    """Adds a webhook the notifications domain refuses (not http): the problem the page
    shows, as written in its markup."""
    page = browser.get("/dashboard/notifications")
    refused = browser.post(
        "/dashboard/webhooks",
        data={"csrf_token": csrf_of(page.text), "url": "ftp://example.org/hook"},
    )
    assert refused.status_code == 400
    problem = re.search(r'id="webhook-problem" role="alert">([^<]+)<', refused.text)
    assert problem, refused.text
    return problem.group(1)


def test_a_refusal_from_the_domain_reaches_the_page_in_the_creators_language(
    browser: httpx.Client,
) -> None:
    """A webhook URL the notifications domain refuses: an English creator reads why, a
    Japanese one reads the sentence for the refusal's code, never the English message."""
    english = webhook_problem(browser)
    choose(browser, "ja")
    japanese = webhook_problem(browser)
    assert japanese != english
    assert html.unescape(japanese) == translations("ja").gettext(
        "Check what you sent and try again."
    )


def test_an_error_without_its_own_translation_says_a_sentence_for_its_code(
    browser: httpx.Client,
) -> None:
    choose(browser, "ja")
    missing = browser.get("/dashboard/links/nolinkofmine", headers={"Accept-Language": "en"})

    assert missing.status_code == 404
    assert lang_of(missing.text) == "ja"
    assert '<h1 id="error-title">見つかりません</h1>' in missing.text
    assert "ここには何もありません。アドレスを確認してください。" in missing.text


def test_an_unknown_language_or_zone_is_refused(browser: httpx.Client) -> None:
    page = browser.get("/dashboard/account")
    for language, zone in (("xx", "UTC"), ("ja", "Mars/Olympus_Mons")):
        refused = browser.post(
            "/dashboard/account/preferences",
            data={"csrf_token": csrf_of(page.text), "language": language, "time_zone": zone},
        )
        assert refused.status_code == 400, refused.text


def test_plural_forms_follow_the_language(
    api: httpx.Client, creator: Creator, browser: httpx.Client
) -> None:
    choose(browser, "es")
    submitted(browser, "/dashboard/account", "/dashboard/muted-words", word="pineapple")
    confirm = f"/dashboard/links/{creator.link_id}/unanswered/delete"
    plain = (
        "Todos los mensajes de este enlace que no hayas respondido se eliminarán definitivamente."
    )

    post_message(api, creator.link_id, "one pineapple")
    one = browser.get(confirm).text
    post_message(api, creator.link_id, "two pineapple")
    two = browser.get(confirm).text

    assert f"{plain} Eso incluye 1 mensaje que está en la carpeta Filtrados." in one
    assert f"{plain} Eso incluye los 2 mensajes de la carpeta Filtrados." in two


def test_a_notice_mail_speaks_the_creators_language(
    server: Server,
    api: httpx.Client,
    creator: Creator,
    browser: httpx.Client,
    smtp_server: SMTPServer,  # noqa: F811
) -> None:
    choose(browser, "es")
    submitted(browser, "/dashboard/notifications", "/dashboard/email-notices", mode="immediately")

    post_message(api, creator.link_id, "¿qué tal?")
    mail = smtp_server.mailbox.wait_for(email_of(server, creator))

    assert mail["Subject"] == "Nuevo mensaje anónimo"
    body = text_of(mail)
    assert "¿qué tal?" in body
    assert "Lee y responde en tu buzón: " in body
    assert "Read and answer" not in body


def test_the_signin_mail_speaks_the_language_of_the_page_it_was_asked_from(
    server: Server,
    smtp_server: SMTPServer,  # noqa: F811
) -> None:
    address = f"i18n-{uuid.uuid4().hex[:8]}@example.com"
    with loopback_client(base_url=server.url, timeout=30) as visitor:
        form = visitor.get("/signin", headers={"Accept-Language": "ja"})
        assert lang_of(form.text) == "ja"
        asked = visitor.post(
            "/signin/email",
            data={"csrf_token": csrf_of(form.text), "email": address},
            headers={"Accept-Language": "ja"},
        )
        assert asked.status_code == 200, asked.text
    mail = smtp_server.mailbox.wait_for(address)
    assert mail["Subject"] == "anonbox のログインリンク"


# --- times -----------------------------------------------------------------------------------

LONG_AGO = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)  # 03:04:05 UTC is 12:04:05 in Tokyo


_MOVE = {
    "messages": "UPDATE messages SET created_at = $1 WHERE id = $2",
    "replies": "UPDATE replies SET created_at = $1 WHERE id = $2",
}


def _at(server: Server, table: str, row_id: str, moment: datetime) -> None:
    """What only time would do: the row written at ``moment``."""
    microseconds = int(moment.timestamp() * 1_000_000)
    assert execute(server.database_url, _MOVE[table], microseconds, row_id) == 1


def times_in(page: str) -> list[tuple[str, str, str]]:
    return [
        (html.unescape(a), html.unescape(b), html.unescape(c))
        for a, b, c in re.findall(r'<time datetime="([^"]*)" title="([^"]*)">([^<]*)</time>', page)
    ]


def test_times_read_how_long_ago_on_the_dashboard_and_as_dates_on_public_pages(
    server: Server, api: httpx.Client, creator: Creator, browser: httpx.Client
) -> None:
    message_id = post_message(api, creator.link_id, "when was this?")
    reply_id = post_reply(api, creator, message_id, "a while ago")
    _at(server, "messages", message_id, LONG_AGO)
    _at(server, "replies", reply_id, datetime.fromtimestamp(time.time() - 180, tz=UTC))
    choose(browser, "en", "Asia/Tokyo")

    dashboard = times_in(
        browser.get(f"/dashboard/links/{creator.link_id}/messages/{message_id}").text
    )

    [asked] = [t for t in dashboard if t[0] == "2026-01-02T03:04:05.000Z"]
    this_year = datetime.now(UTC).year == 2026
    assert asked[2] == ("Jan 2" if this_year else "Jan 2, 2026")  # over a week ago: the date
    assert asked[1] == ("Fri, Jan 2, 12:04 PM" if this_year else "Fri, Jan 2, 2026, 12:04 PM")
    [answered] = [t for t in dashboard if t[2].endswith("ago")]
    assert answered[2] == "3 minutes ago"

    # A visitor, in Spanish, sees the same moments in the creator's zone (no "UTC"), as
    # dates: the public pages are kept per change (issue 43), and "3 minutes ago" kept
    # would be wrong an hour later.
    page = api.get(f"/{creator.link_id}", headers={"Accept-Language": "es"}).text
    public = dict(re.findall(r'<time datetime="([^"]*)">([^<]*)</time>', page))
    asked_text = "vie, 2 ene, 12:04" if this_year else "vie, 2 ene 2026, 12:04"
    assert html.unescape(public["2026-01-02T03:04:05.000Z"]) == asked_text
    assert not any(html.unescape(text).startswith("hace") for text in public.values())


# --- the catalogs ------------------------------------------------------------------------------


def _msgids(pot: Path) -> set[str]:
    with pot.open("rb") as f:
        return {str(m.id if isinstance(m.id, str) else m.id[0]) for m in read_po(f) if m.id}


def test_every_marked_text_is_in_the_committed_template(tmp_path: Path) -> None:
    """``make messages`` was run after the last change to a marked text."""
    fresh = tmp_path / "messages.pot"
    subprocess.run(
        [
            str(Path(sys.executable).parent / "pybabel"),
            "-q",
            "extract",
            "-F",
            "babel.cfg",
            "-k",
            "N_",
            "-o",
            str(fresh),
            ".",
        ],
        cwd=ROOT,
        check=True,
    )
    committed = _msgids(LOCALE / "messages.pot")
    extracted = _msgids(fresh)
    assert extracted - committed == set(), "run make messages: new texts are missing"
    assert committed - extracted == set(), "run make messages: the template has stale texts"
    for language in ("ja", "ko", "id", "es"):
        catalog = _msgids(LOCALE / language / "LC_MESSAGES" / "messages.po")
        assert extracted - catalog == set(), f"{language}: run make messages"


def test_compiled_catalogs_load_and_translate() -> None:
    from babel.support import Translations

    from anonbox.core.i18n import LANGUAGES, translations

    assert set(LANGUAGES) >= {"en", "ja", "ko", "id", "es"}
    expected = {
        "ja": "受信箱",
        "ko": "받은 메시지함",
        "id": "Kotak masuk",
        "es": "Buzón",
    }
    for language, inbox in expected.items():
        assert (LOCALE / language / "LC_MESSAGES" / "messages.mo").is_file()
        catalog = translations(language)
        assert isinstance(catalog, Translations)
        assert catalog.gettext("Inbox") == inbox


_PLACEHOLDER = re.compile(r"%\((\w+)\)[sd]")


def test_translations_use_only_the_placeholders_of_their_text() -> None:
    """A translation naming a placeholder its text does not have would fail the page
    (KeyError while formatting): a catalog merged from a translator is checked here."""
    for language in ("ja", "ko", "id", "es"):
        with (LOCALE / language / "LC_MESSAGES" / "messages.po").open("rb") as f:
            catalog = read_po(f, locale=language)
        for message in catalog:
            if not message.id or not message.string:
                continue
            ids = message.id if isinstance(message.id, tuple) else (message.id,)
            strings = message.string if isinstance(message.string, tuple) else (message.string,)
            allowed = {name for text in ids for name in _PLACEHOLDER.findall(text)}
            if message.pluralizable:
                allowed.add("num")  # ngettext always gives it
            for text in strings:
                extra = set(_PLACEHOLDER.findall(text)) - allowed
                assert not extra, f"{language}: {ids[0]!r} is translated with {extra}"
                # Texts are %-formatted: a lone "%" must be written "%%".
                bare = _PLACEHOLDER.sub("", text).replace("%%", "")
                assert "%" not in bare, f"{language}: {ids[0]!r} has a lone %"
