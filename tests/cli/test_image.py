"""The image, built and run: ``deploy/build-image.sh`` makes ``debian:bookworm-slim`` from
Debian's packages (debootstrap), builds the Dockerfile with podman, and runs the image
with buildah (docs/deployment.md says why not ``podman run`` here).

The tests then use it as a self-hoster would: ``anonbox serve`` from the image on its
SQLite default in the image's working directory (a mounted volume, as compose gives it),
and on PostgreSQL through ``ANONBOX_DATABASE_URL``; a creator made with the image's own
CLI; a message posted and read back over HTTP; a page in Japanese (the compiled
catalogs) and a share card (the fonts).

The first build on a machine takes minutes (debootstrap, then Debian's fonts and PyPI's
wheels); later ones reuse the base image and podman's layer cache (docs/deployment.md
has the times). Needs root; skipped without it, except under CI=true, where it fails.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from tests.server import free_port
from tests.support.http import loopback_client
from tests.support.services import IN_CI

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "deploy" / "build-image.sh"
IMAGE = "localhost/anonbox:test"
IMAGE_UID = 10001  # the Dockerfile's USER
BUILD_TIMEOUT = 45 * 60  # a first build on a loaded machine; docs/deployment.md has the times
SECRET = "image-test-secret-" + "k" * 32


def _script_env(**extra: str) -> dict[str, str]:
    """This process's environment without any ANONBOX_* of its own, plus ``extra``: the
    script hands every ANONBOX_* variable to the container."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANONBOX_")}
    env.pop("PGPASSWORD", None)
    return {**env, "ANONBOX_IMAGE": IMAGE, "ANONBOX_SECRET_KEY": SECRET, **extra}


@pytest.fixture(scope="module")
def image(tmp_path_factory: pytest.TempPathFactory) -> str:
    missing = [tool for tool in ("podman", "buildah", "debootstrap") if not shutil.which(tool)]
    reason = None
    if os.geteuid() != 0:
        reason = "building the image needs root (debootstrap, chroot isolation)"
    elif missing and not shutil.which("apt-get"):
        reason = f"no {', '.join(missing)} and no apt-get to install them"
    if reason:
        if IN_CI:
            pytest.fail(f"{reason} (required when CI=true)")
        pytest.skip(reason)
    log = tmp_path_factory.mktemp("image") / "build.log"
    started = time.monotonic()
    with log.open("w") as out:
        done = subprocess.run(
            [str(SCRIPT), "build"],
            env=_script_env(),
            stdout=out,
            stderr=subprocess.STDOUT,
            timeout=BUILD_TIMEOUT,
            check=False,
        )
    assert done.returncode == 0, log.read_text()[-6000:]
    # Printed for -rA / -s: how long the build took on this run (a cached one or not).
    print(f"image built in {time.monotonic() - started:.0f} s")
    return IMAGE


class Container:
    """``deploy/build-image.sh run``: ``anonbox serve`` from the image, on the host's
    loopback, in a process group of its own (stopped as a whole)."""

    def __init__(self, env: dict[str, str], log_path: Path) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = env
        self.log_path = log_path
        self.process: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 240.0) -> Container:
        with self.log_path.open("wb") as out:
            self.process = subprocess.Popen(
                [str(SCRIPT), "run", "--host", "127.0.0.1", "--port", str(self.port)],
                env=self.env,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                pytest.fail(f"the container ended ({self.process.returncode}):\n{self.log()}")
            try:
                if httpx.get(f"{self.url}/healthz", timeout=2).status_code == 200:
                    return self
            except httpx.TransportError:
                pass
            time.sleep(0.5)
        pytest.fail(f"/healthz did not answer within {timeout:.0f} s:\n{self.log()}")

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")[-6000:]

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=30)


@pytest.fixture
def container(tmp_path: Path) -> Iterator[Callable[..., Container]]:
    started: list[Container] = []

    def start(**env: str) -> Container:
        running = Container(_script_env(**env), tmp_path / f"serve-{len(started)}.log")
        started.append(running)
        return running.start()

    yield start
    for running in started:
        running.stop()


def in_image(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """A command in a throw-away container of the image (``build-image.sh exec``)."""
    return subprocess.run(
        [str(SCRIPT), "exec", *args],
        env=_script_env(**env),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def make_creator(**env: str) -> dict[str, str]:
    email = f"image-{uuid.uuid4().hex[:10]}@example.com"
    made = in_image("anonbox", "creator", "create", "--email", email, "--json", **env)
    assert made.returncode == 0, made.stderr[-4000:]
    creator = json.loads(made.stdout.strip().splitlines()[-1])
    assert isinstance(creator, dict)
    return creator


def post_and_read_back(base_url: str, creator: dict[str, str]) -> None:
    """What a sender and the creator notice: the post is taken, and is in the inbox."""
    inbox = f"/message/{creator['link_id']}"
    with loopback_client(base_url=base_url, timeout=30) as api:
        sent = api.post(inbox, json={"message_content": "hello from the image"})
        assert sent.status_code == 201, sent.text
        listed = api.get(inbox, headers={"X-API-Key": creator["api_key"]})
        assert listed.status_code == 200, listed.text
        items = listed.json()["data"]["items"]
        assert [m["message_content"] for m in items] == ["hello from the image"]


def test_image_serves_its_sqlite_default_as_a_non_root_user(
    image: str, container: Callable[..., Container], tmp_path: Path
) -> None:
    data = tmp_path / "data"  # the volume on the image's working directory
    data.mkdir()
    os.chown(data, IMAGE_UID, IMAGE_UID)
    running = container(ANONBOX_IMAGE_DATA=str(data))

    ready = httpx.get(f"{running.url}/readyz", timeout=10)
    assert ready.status_code == 200, ready.text
    database = data / "anonbox.db"
    assert database.is_file(), sorted(p.name for p in data.iterdir())
    assert database.stat().st_uid == IMAGE_UID  # written by the image's user, not root

    creator = make_creator(ANONBOX_IMAGE_DATA=str(data))
    post_and_read_back(running.url, creator)

    # The compiled catalogs: the send page in Japanese when asked for it.
    page = f"{running.url}/{creator['link_id']}"
    japanese = httpx.get(page, headers={"Accept-Language": "ja"}, timeout=10)
    english = httpx.get(page, headers={"Accept-Language": "en"}, timeout=10)
    assert japanese.status_code == english.status_code == 200
    assert "送信" in japanese.text
    assert "送信" not in english.text

    # The fonts: a card with Japanese text and an emoji draws without the warning that
    # says which fonts are missing.
    card = httpx.get(f"{page}/card.png", headers={"Accept-Language": "ja"}, timeout=30)
    assert card.status_code == 200
    assert card.headers["content-type"] == "image/png"
    assert card.content.startswith(b"\x89PNG")
    assert "fonts missing" not in running.log(), running.log()


def test_image_serves_postgresql_from_its_database_url(
    image: str,
    container: Callable[..., Container],
    database_url_factory: Callable[..., str],
) -> None:
    url = database_url_factory("postgresql", migrated=False)  # the image migrates it
    running = container(ANONBOX_DATABASE_URL=url)
    ready = httpx.get(f"{running.url}/readyz", timeout=10)
    assert ready.status_code == 200, ready.text
    post_and_read_back(running.url, make_creator(ANONBOX_DATABASE_URL=url))
