"""A real fediverse server follows a link: Fedify 2.3.6 (npm), on loopback.

The peer (``tests/support/fedify/peer.mjs``) is installed by this test from the npm
registry with the committed lockfile (``npm ci``) when it is missing, and never skipped:
no Node or no registry is a failure. Fedify's own inbox verifies every HTTP Signature
anonbox sends and refuses what does not verify; the test reads what reached the peer's
inbox, and how many of anonbox's requests it refused (none may be).
"""

from __future__ import annotations

import fcntl
import json
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.actions import answer_path, post_message, post_reply
from tests.conftest import Creator, make_creator_in
from tests.federation.conftest import AP, followable, wait_for
from tests.server import Server, free_port
from tests.support.http import loopback_client
from tests.support.processes import stop

PEER_DIR = Path(__file__).resolve().parent.parent / "support" / "fedify"
FEDIFY_VERSION = "2.3.6"
AS = "https://www.w3.org/ns/activitystreams"


# Written once ``npm ci`` has finished: the package's own package.json lands long before
# its dependencies do, so a worker that saw only that could start a half-installed peer.
_DONE = PEER_DIR / "node_modules" / ".anonbox-installed"


def _installed() -> bool:
    return _DONE.exists() and _DONE.read_text() == FEDIFY_VERSION


def install_peer() -> None:
    """``npm ci`` from the committed lockfile, once (kept in the ignored node_modules), by
    one xdist worker at a time: several modules start the peer, and ``npm ci`` empties
    node_modules first. The lock file is beside node_modules, which ``npm ci`` replaces."""
    if _installed():
        return
    npm = shutil.which("npm")
    if npm is None or shutil.which("node") is None:
        pytest.fail("Node and npm are needed for the Fedify peer (tests/support/fedify)")
    with open(PEER_DIR / ".install.lock", "w") as guard:
        fcntl.flock(guard, fcntl.LOCK_EX)
        if _installed():  # another worker installed it while this one waited
            return
        done = subprocess.run(
            [npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"],
            cwd=PEER_DIR,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        package = PEER_DIR / "node_modules" / "@fedify" / "fedify" / "package.json"
        if done.returncode != 0 or not package.exists():
            pytest.fail(f"npm ci of the Fedify peer failed:\n{done.stdout}\n{done.stderr}")
        if json.loads(package.read_text())["version"] != FEDIFY_VERSION:
            pytest.fail(f"npm ci did not install Fedify {FEDIFY_VERSION}")
        _DONE.write_text(FEDIFY_VERSION)


class Peer:
    def __init__(self, port: int) -> None:
        self.url = f"http://127.0.0.1:{port}"
        self.http = loopback_client(base_url=self.url, timeout=60)

    def received(self) -> dict[str, Any]:
        answer = self.http.get("/control/received")
        assert answer.status_code == 200, answer.text
        return dict(answer.json())

    def of_type(self, kind: str, actor: str) -> list[dict[str, Any]]:
        """What ``actor`` sent of ``kind`` (the peer serves both databases' servers)."""
        return [
            item
            for item in self.received()["received"]
            if item["type"] == kind and item["actor"] == actor
        ]

    def control(self, what: str, actor: str) -> None:
        answer = self.http.post(f"/control/{what}", json={"actor": actor})
        assert answer.status_code == 200, answer.text

    def lookup(self, url: str) -> tuple[str | None, str | None]:
        """What Fedify's ``lookupObject(url)`` finds: its id and type (the type's URI)."""
        answer = self.http.post("/control/lookup", json={"url": url})
        assert answer.status_code == 200, answer.text
        return answer.json()["id"], answer.json()["type"]


@pytest.fixture(scope="module")
def peer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Peer]:
    install_peer()
    port = free_port()
    log = tmp_path_factory.mktemp("fedify") / "peer.log"
    with log.open("w") as out:
        process = subprocess.Popen(
            ["node", "peer.mjs", str(port)], cwd=PEER_DIR, stdout=out, stderr=subprocess.STDOUT
        )
    try:
        deadline = time.monotonic() + 30
        while "listening" not in log.read_text():
            if process.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"the Fedify peer did not start:\n{log.read_text()}")
            time.sleep(0.1)
        running = Peer(port)
        yield running
        running.http.close()
    finally:
        stop(process)


def test_a_fedify_server_follows_receives_answers_and_unfollows(
    federating: Server, fed_api: httpx.Client, fed_creator: Creator, peer: Peer
) -> None:
    api, creator = fed_api, fed_creator
    followable(api, creator)
    host = federating.url.removeprefix("http://")
    found = api.get("/.well-known/webfinger", params={"resource": f"acct:{creator.link_id}@{host}"})
    assert found.status_code == 200, found.text
    actor_url = next(x["href"] for x in found.json()["links"] if x["rel"] == "self")
    actor = api.get(actor_url, headers=AP)
    assert actor.status_code == 200
    assert actor.headers["content-type"].startswith("application/activity+json")
    assert "@example.com" not in actor.text
    assert creator.user_id not in actor.text

    # Follow: Fedify signs it; anonbox checks it and answers with a signed Accept.
    peer.control("follow", actor_url)
    wait_for(lambda: peer.of_type("Accept", actor_url))
    assert peer.of_type("Accept", actor_url)[0]["actor"] == actor_url
    followers = api.get(f"{actor_url}/followers", headers=AP).json()
    assert followers["totalItems"] == 1

    # An answer: a Create of a Note with the question, the answer, the link and the card.
    message_id = post_message(api, creator.link_id, "Tea or coffee?")
    post_reply(api, creator, message_id, "Genmaicha, always")
    wait_for(lambda: peer.of_type("Create", actor_url))
    create = peer.of_type("Create", actor_url)[0]
    assert create["object_type"].endswith("#Note")
    assert "Tea or coffee?" in create["content"]
    assert "Genmaicha, always" in create["content"]
    assert f"/{creator.link_id}" in create["content"]
    [card] = create["attachments"]
    assert card["url"].endswith(f"{answer_path(api, creator.link_id, message_id)}/card.png")
    assert "Tea or coffee?" in card["name"]
    assert "Genmaicha, always" in card["name"]
    note = api.get(create["object_id"], headers=AP)
    assert note.status_code == 200
    assert note.json()["type"] == "Note"
    assert api.get(f"{actor_url}/outbox", headers=AP).json()["totalItems"] == 1

    # Deleting the answer sends Delete of that Note.
    reply_id = create["object_id"].rsplit("/", 1)[1]
    gone = api.delete(
        f"/message/{creator.link_id}/{message_id}/{reply_id}", headers=creator.headers
    )
    assert gone.status_code == 200, gone.text
    wait_for(lambda: peer.of_type("Delete", actor_url))
    assert peer.of_type("Delete", actor_url)[0]["object_id"] == create["object_id"]
    assert api.get(create["object_id"], headers=AP).status_code == 404

    # A changed prompt sends Update of the actor.
    changed = api.patch(
        f"/links/{creator.link_id}", json={"prompt": "Ask me about tea"}, headers=creator.headers
    )
    assert changed.status_code == 200
    wait_for(lambda: peer.of_type("Update", actor_url))
    update = peer.of_type("Update", actor_url)[0]
    assert update["object_id"] == actor_url
    assert "Ask me about tea" in (update["summary"] or "")

    # Unfollow.
    peer.control("unfollow", actor_url)
    wait_for(lambda: api.get(f"{actor_url}/followers", headers=AP).json()["totalItems"] == 0)
    assert peer.received()["refused"] == 0  # every signature anonbox sent verified


def test_fedify_looks_up_every_address_a_person_pastes(
    federating: Server, fed_api: httpx.Client, fed_creator: Creator, peer: Peer
) -> None:
    """``lookupObject()`` (a Fedify server's search) on the send page, the actor's address
    and an answer page finds the actor and the Note (issue 42, item 1); on a link that is
    not followable, nothing."""
    api, creator = fed_api, fed_creator
    followable(api, creator)
    actor_url = f"{federating.url}/ap/links/{creator.link_id}"
    peer.control("follow", actor_url)  # so that an answer is a Note
    wait_for(lambda: peer.of_type("Accept", actor_url))
    message_id = post_message(api, creator.link_id, "Tea or coffee?")
    reply_id = post_reply(api, creator, message_id, "Genmaicha, always")
    wait_for(lambda: peer.of_type("Create", actor_url))
    note_id = f"{actor_url}/answers/{reply_id}"
    assert peer.of_type("Create", actor_url)[0]["object_id"] == note_id
    service, note = f"{AS}#Service", f"{AS}#Note"
    assert peer.lookup(f"{federating.url}/{creator.link_id}") == (actor_url, service)
    assert peer.lookup(actor_url) == (actor_url, service)
    page = answer_path(api, creator.link_id, message_id)
    assert peer.lookup(f"{federating.url}{page}") == (note_id, note)

    # A link whose fediverse switch is off (Fedify keeps what it read, so another link).
    other = make_creator_in(federating.database_url)
    asked = post_message(api, other.link_id, "Cats or dogs?")
    post_reply(api, other, asked, "Both")
    other_page = answer_path(api, other.link_id, asked)
    for url in (
        f"{federating.url}/{other.link_id}",
        f"{federating.url}/ap/links/{other.link_id}",
        f"{federating.url}{other_page}",
    ):
        assert peer.lookup(url) == (None, None)
