"""The name and summary a followable link's actor shows on the fediverse (issue 39, item 6):
plain text (``name``) and HTML that servers clean of ``<bdi>`` (``summary``), so what the
creator wrote is isolated with FSI … PDI and an override in it closed. Fetched as a
fediverse server fetches the actor, on SQLite and PostgreSQL."""

from __future__ import annotations

import httpx

from tests.conftest import Creator
from tests.federation.conftest import AP, followable

RLO, PDF, FSI, PDI = "\u202e", "\u202c", "\u2068", "\u2069"


def actor_of(api: httpx.Client, creator: Creator) -> dict[str, object]:
    got = api.get(f"/ap/links/{creator.link_id}", headers=AP)
    assert got.status_code == 200, got.text
    document: dict[str, object] = got.json()
    return document


def test_an_override_in_the_name_and_prompt_is_closed_in_the_actor(
    fed_api: httpx.Client, fed_creator: Creator
) -> None:
    followable(fed_api, fed_creator)
    named = fed_api.patch(
        "/account/profile",
        json={"display_name": f"{PDI}{RLO}Mallory"},
        headers=fed_creator.headers,
    )
    assert named.status_code == 200, named.text
    asked = fed_api.patch(
        f"/links/{fed_creator.link_id}",
        json={"prompt": f"Ask {RLO}me <anything>"},
        headers=fed_creator.headers,
    )
    assert asked.status_code == 200, asked.text

    actor = actor_of(fed_api, fed_creator)

    # The stray PDI (it would close the isolate early) is dropped; the override is closed.
    assert actor["name"] == f"{FSI}{RLO}Mallory{PDF}{PDI}"
    assert actor["summary"] == f"<p>{FSI}Ask {RLO}me &lt;anything&gt;{PDF}{PDI}</p>"


def test_a_name_with_nothing_directional_is_shown_as_written(
    fed_api: httpx.Client, fed_creator: Creator
) -> None:
    followable(fed_api, fed_creator)
    named = fed_api.patch(
        "/account/profile", json={"display_name": "Hanako"}, headers=fed_creator.headers
    )
    assert named.status_code == 200, named.text
    actor = actor_of(fed_api, fed_creator)
    assert actor["name"] == "Hanako"
