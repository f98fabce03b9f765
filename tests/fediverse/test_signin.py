"""Sign in with Mastodon or Misskey: the instance's address on the sign-in page, anonbox
registered with a Mastodon instance once, OAuth with PKCE (mastodon-mock) or MiAuth (the
Misskey stand-in), and the fediverse account as one more way into an anonbox account."""

from __future__ import annotations

import re
from pathlib import Path

import httpx
import pytest

from tests.actions import assert_error
from tests.conftest import Creator
from tests.fediverse.conftest import (
    back_at,
    browser,
    count_rows,
    instance_tokens,
    link_account,
    new_creator,
    session_of,
    signin_with_mastodon,
    signin_with_misskey,
    start_signin,
)
from tests.server import Server
from tests.support.mastodon import Mastodon
from tests.support.misskey import MisskeyServer
from tests.support.misskey_types import MIAUTH_CHECK, assert_types_hold


def accounts_of(server: Server, headers: dict[str, str]) -> list[dict[str, object]]:
    listed = browser(server).get("/account/fediverse", headers=headers)
    assert listed.status_code == 200, listed.text
    items: list[dict[str, object]] = listed.json()["data"]["items"]
    return items


def problem_of(page: httpx.Response) -> str:
    found = re.search(r'id="signin-problem"[^>]*>([^<]+)<', page.text)
    assert found, page.text
    return found.group(1)


def test_mastodon_signin_asks_with_pkce_and_makes_an_account(
    anonbox: Server, mastodon: Mastodon
) -> None:
    person = mastodon.new_account()
    client = browser(anonbox)

    started = start_signin(client, mastodon.url)

    assert started.status_code == 303, started.text
    where = httpx.URL(started.headers["location"])
    assert str(where).startswith(f"{mastodon.url}/oauth/authorize?")
    assert where.params["response_type"] == "code"
    assert where.params["code_challenge_method"] == "S256"
    assert len(where.params["code_challenge"]) == 43
    assert where.params["redirect_uri"] == f"{anonbox.url}/signin/fediverse/callback"
    back = back_at(client, mastodon.authorize(str(where), person))
    assert back.status_code == 303, back.text
    assert back.headers["location"] == "/dashboard"
    items = accounts_of(anonbox, session_of(client))
    assert [(i["software"], i["acct"], i["connected"]) for i in items] == [
        ("mastodon", f"{person.username}@127.0.0.1:{mastodon.port}", True)
    ]
    assert "token" not in str(items).lower()
    dashboard = client.get("/dashboard")
    assert dashboard.status_code == 200


def test_a_second_signin_reaches_the_same_account_and_registers_once(
    anonbox: Server, mastodon: Mastodon
) -> None:
    person = mastodon.new_account()
    first, _ = signin_with_mastodon(anonbox, mastodon, person)
    apps = count_rows(anonbox, "fediverse_apps")
    second, back = signin_with_mastodon(anonbox, mastodon, person)

    assert back.status_code == 303, back.text
    api = browser(anonbox)
    one = api.get("/user", headers=session_of(first)).json()["data"]
    two = api.get("/user", headers=session_of(second)).json()["data"]
    assert one["user_id"] == two["user_id"]
    assert count_rows(anonbox, "fediverse_apps") == apps == 1


def test_misskey_signin_goes_through_miauth(anonbox: Server, misskey: MisskeyServer) -> None:
    person = misskey.state.new_user()
    client = browser(anonbox)
    started = start_signin(client, misskey.state.url)

    assert started.status_code == 303, started.text
    where = httpx.URL(started.headers["location"])
    assert where.path.startswith("/miauth/")
    assert where.params["name"] == "anonbox"
    assert set(where.params["permission"].split(",")) == {
        "read:account",
        "write:notes",
        "write:drive",
    }
    back = back_at(client, misskey.state.allow(str(where), person))
    assert back.status_code == 303, back.text
    items = accounts_of(anonbox, session_of(client))
    assert [(i["software"], i["acct"]) for i in items] == [
        ("misskey", f"{person.username}@127.0.0.1:{misskey.state.url.rsplit(':', 1)[1]}")
    ]


def test_instance_addresses_that_are_no_instance_get_the_page_saying_so(
    anonbox: Server, strict: Server, mastodon: Mastodon
) -> None:
    from tests.server import free_port

    cases = [
        (anonbox, "not an address", 400),
        (anonbox, "https://mastodon.example/about", 400),
        (anonbox, "http://mastodon.example:99999", 400),
        (anonbox, f"http://127.0.0.1:{free_port()}", 400),  # nothing listens there
        (strict, mastodon.url, 403),  # loopback, and this server may not reach it
        (strict, "http://10.1.2.3", 403),
    ]
    for server, typed, status in cases:
        page = start_signin(browser(server), typed)
        assert page.status_code == status, (typed, page.text)
        assert problem_of(page)
        assert 'id="signin-fediverse-form"' in page.text
    assert count_rows(strict, "fediverse_signins") == 0
    assert count_rows(strict, "fediverse_apps") == 0


def test_a_callback_is_spent_once_and_only_in_the_browser_that_started(
    anonbox: Server, mastodon: Mastodon
) -> None:
    person = mastodon.new_account()
    client = browser(anonbox)
    started = start_signin(client, mastodon.url)
    callback = mastodon.authorize(started.headers["location"], person)

    elsewhere = back_at(browser(anonbox), callback)
    assert elsewhere.status_code == 400, elsewhere.text
    assert "anonbox_session" not in elsewhere.cookies

    assert back_at(client, callback).status_code == 303
    replayed = back_at(client, callback)
    assert replayed.status_code == 400, replayed.text


def test_linking_adds_a_way_in_and_removing_it_keeps_the_account(
    anonbox: Server, mastodon: Mastodon
) -> None:
    creator: Creator = new_creator(anonbox)
    person = mastodon.new_account()
    back = link_account(anonbox, creator, mastodon.url, lambda u: mastodon.authorize(u, person))
    assert back.status_code == 303, back.text
    [linked] = accounts_of(anonbox, creator.headers)

    # Signing in with the linked account opens the same anonbox account.
    client, _ = signin_with_mastodon(anonbox, mastodon, person)
    who = browser(anonbox).get("/user", headers=session_of(client)).json()["data"]
    assert who["user_id"] == creator.user_id

    # The e-mail address is still a way in: the fediverse account may go.
    removed = browser(anonbox).delete(f"/account/fediverse/{linked['id']}", headers=creator.headers)
    assert removed.status_code == 200, removed.text
    assert accounts_of(anonbox, creator.headers) == []


def test_the_last_way_in_is_never_removed(anonbox: Server, misskey: MisskeyServer) -> None:
    client, _ = signin_with_misskey(anonbox, misskey, misskey.state.new_user())
    [only] = accounts_of(anonbox, session_of(client))

    refused = browser(anonbox).delete(
        f"/account/fediverse/{only['id']}", headers=session_of(client)
    )

    assert_error(refused, 409, "last_way_in")
    assert accounts_of(anonbox, session_of(client)) == [only]


def test_an_account_linked_elsewhere_is_not_taken(anonbox: Server, mastodon: Mastodon) -> None:
    person = mastodon.new_account()
    signin_with_mastodon(anonbox, mastodon, person)
    creator = new_creator(anonbox)

    back = link_account(anonbox, creator, mastodon.url, lambda u: mastodon.authorize(u, person))

    assert back.status_code == 409, back.text
    assert accounts_of(anonbox, creator.headers) == []


def test_tokens_stay_on_the_server(anonbox: Server, mastodon: Mastodon) -> None:
    client, _ = signin_with_mastodon(anonbox, mastodon, mastodon.new_account())
    tokens = instance_tokens(anonbox)
    assert tokens

    export = browser(anonbox).get("/account/export", headers=session_of(client))
    assert export.status_code == 200, export.text
    page = client.get("/dashboard/account")
    for token in tokens:
        assert token not in export.text
        assert token not in page.text
        assert token not in anonbox.log()


def test_a_miauth_the_person_did_not_allow_signs_nobody_in(
    anonbox: Server, misskey: MisskeyServer
) -> None:
    client = browser(anonbox)
    started = start_signin(client, misskey.state.url)
    session = httpx.URL(started.headers["location"]).path.rsplit("/", 1)[1]

    back = client.get("/signin/fediverse/callback", params={"session": session})

    assert back.status_code == 400, back.text
    assert "anonbox_session" not in back.cookies


# Last in the module (tests/fediverse/conftest.py moves it there), once per database.
@pytest.mark.usefixtures("backend")
def test_what_misskey_exchanged_is_misskeys_api(misskey: MisskeyServer, tmp_path: Path) -> None:
    """What anonbox sent the Misskey stand-in in this module's tests (signing in with
    MiAuth), and what the stand-in answered, type-check against misskey-js's endpoint
    types."""
    assert_types_hold(misskey.state.exchanges, tmp_path, {MIAUTH_CHECK})
