"""The creator's picture (issue 31): ``PUT /account/avatar`` takes a PNG, JPEG or WebP file
as the body, re-encodes it (square, 256 x 256, WebP, nothing but its pixels) and serves it
at a public address that names neither the account nor its e-mail; anything else is a 400
that changes nothing. Without an upload a generated picture stands in: a neutral one until
the creator has a name. The send page shows the picture; the account page uploads and
removes it without JavaScript. Each test runs on SQLite and on PostgreSQL."""

from __future__ import annotations

import contextlib
import io
import re
import struct
import zlib
from typing import Any

import httpx
import pytest
import segno
from PIL import Image, ImageCms

from tests.actions import assert_error, post_message, post_reply
from tests.conftest import Creator
from tests.server import Server
from tests.support.admin import make_account
from tests.support.cards import drawn_modules
from tests.support.forms import csrf_of
from tests.support.signin import signed_in_browser

AVATAR = "/account/avatar"
MAX_BYTES = 2 * 1024 * 1024
SECRET = "zqsecretplace"  # written into the uploads' metadata: it must not come out


def creator(server: Server) -> Creator:
    return make_account(server.database_url, admin=False).creator


def avatar_of(api: httpx.Client, who: Creator) -> dict[str, Any]:
    response = api.get(AVATAR, headers=who.headers)
    assert response.status_code == 200, response.text
    data: dict[str, Any] = response.json()["data"]
    return data


def upload(api: httpx.Client, who: Creator, body: bytes, kind: str = "image/png") -> httpx.Response:
    return api.put(AVATAR, content=body, headers={**who.headers, "Content-Type": kind})


def served(api: httpx.Client, url: str) -> Image.Image:
    response = api.get(url)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "image/webp"
    assert "immutable" in response.headers["cache-control"]
    assert response.headers["etag"]
    assert SECRET.encode() not in response.content
    image = Image.open(io.BytesIO(response.content))
    image.load()
    return image


def photo(kind: str) -> bytes:
    """A 600 x 400 picture, red on the left and blue on the right, that its EXIF says to
    turn a quarter clockwise (so upright, red is at the top), carrying a GPS position, a
    colour profile and text metadata."""
    image = Image.new("RGB", (600, 400), (220, 20, 20))
    image.paste((20, 20, 220), (300, 0, 600, 400))
    exif = Image.Exif()
    exif[0x0112] = 6  # orientation: rotate 90 degrees clockwise to show
    exif[0x010E] = SECRET  # ImageDescription
    gps = exif.get_ifd(0x8825)
    gps[1], gps[2] = "N", (35.0, 39.0, 29.0)
    gps[3], gps[4] = "E", (139.0, 41.0, 30.0)
    icc = ImageCms.ImageCmsProfile(ImageCms.createProfile("sRGB")).tobytes()
    out = io.BytesIO()
    if kind == "png":
        from PIL.PngImagePlugin import PngInfo

        text = PngInfo()
        text.add_text("Comment", SECRET)
        image.save(out, "PNG", exif=exif, icc_profile=icc, pnginfo=text)
    elif kind == "jpeg":
        image.save(out, "JPEG", exif=exif, icc_profile=icc, comment=SECRET.encode())
    else:
        xmp = f'<x:xmpmeta xmlns:x="adobe:ns:meta/">{SECRET}</x:xmpmeta>'.encode()
        image.save(out, "WEBP", exif=exif, icc_profile=icc, xmp=xmp, lossless=True)
    data = out.getvalue()
    assert SECRET.encode() in data  # the check below finds what is there
    return data


@pytest.mark.parametrize("kind", ["png", "jpeg", "webp"])
def test_an_upload_is_served_upright_square_256_and_without_its_metadata(
    api: httpx.Client, server: Server, kind: str
) -> None:
    who = creator(server)
    before = avatar_of(api, who)
    assert before == {"avatar_url": "/avatars/neutral.svg", "uploaded": False}

    # The declared type is not what decides: a JPEG sent as image/png is still a JPEG.
    response = upload(api, who, photo(kind), "image/png" if kind != "png" else "image/webp")

    assert response.status_code == 200, response.text
    data = response.json()["data"]
    assert data["uploaded"] is True
    assert re.fullmatch(r"/avatars/[A-Za-z0-9_-]{16,32}\.webp", data["avatar_url"])
    assert who.user_id not in data["avatar_url"]
    assert avatar_of(api, who) == data
    image = served(api, data["avatar_url"])
    assert (image.format, image.size) == ("WEBP", (256, 256))
    assert dict(image.getexif()) == {}
    assert not {"exif", "icc_profile", "xmp", "XML:com.adobe.xmp", "Comment"} & set(image.info)
    rgb = image.convert("RGB")
    red, blue = rgb.getpixel((128, 20)), rgb.getpixel((128, 235))
    assert (red[0] > 180, red[2] < 80) == (True, True), red  # turned upright: red on top
    assert (blue[2] > 180, blue[0] < 80) == (True, True), blue
    # On the public link, in the API and on the send page, with alt text.
    link = api.get(f"/links/{who.link_id}/public").json()["data"]
    assert link["creator_avatar_url"] == data["avatar_url"]
    page = api.get(f"/{who.link_id}", headers={"Accept": "text/html"}).text
    img = re.search(r'<img class="avatar" id="creator-avatar" [^>]*>', page)
    assert img, page
    assert f'src="{data["avatar_url"]}"' in img.group(0)
    assert 'alt="Picture of The creator"' in img.group(0)


def test_a_new_upload_is_a_new_address_and_the_old_one_is_gone(
    api: httpx.Client, server: Server
) -> None:
    who = creator(server)
    first = upload(api, who, photo("png")).json()["data"]["avatar_url"]
    second = upload(api, who, photo("jpeg"), "image/jpeg").json()["data"]["avatar_url"]
    assert first != second
    assert api.get(first).status_code == 404
    served(api, second)


def bomb(width: int, height: int) -> bytes:
    """A PNG of a few dozen bytes whose header declares ``width`` x ``height`` pixels."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    pixels = zlib.compress(b"\0" * 1024)  # far fewer than declared: never decoded anyway
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")
    )


def peak_memory_kib(server: Server) -> int:
    assert server.process is not None
    with open(f"/proc/{server.process.pid}/status") as status:
        found = re.search(r"VmHWM:\s+(\d+) kB", status.read())
    assert found
    return int(found.group(1))


REFUSED = {
    "over 2 MB": (b"\x89PNG\r\n\x1a\n" + b"\0" * (MAX_BYTES + 1 - 8), "image/png", "too_large"),
    "a GIF": (
        b"GIF89a\x01\x00\x01\x00\x80\x00\x00\xff\xff\xff\x00\x00\x00!\xf9\x04\x01\x00\x00"
        b"\x00\x00,\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02D\x01\x00;",
        "image/png",
        "unsupported_format",
    ),
    "an SVG": (
        b'<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>',
        "image/png",
        "unsupported_format",
    ),
    "text": (b"just some words", "application/octet-stream", "unsupported_format"),
    "a cut-off PNG": (b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0", "image/png", "unsupported_format"),
    "30000 x 30000 declared": (bomb(30_000, 30_000), "image/png", "too_many_pixels"),
    "5000 x 5000 declared": (bomb(5_000, 5_000), "image/png", "too_many_pixels"),
    "nothing": (b"", "image/png", "missing"),
}


@pytest.mark.parametrize("case", list(REFUSED))
def test_anything_but_a_picture_within_the_limits_is_a_400_that_changes_nothing(
    api: httpx.Client, server: Server, case: str
) -> None:
    body, kind, problem = REFUSED[case]
    who = creator(server)
    kept = upload(api, who, photo("png")).json()["data"]
    peak = peak_memory_kib(server)

    refused = upload(api, who, body, kind)

    answer = assert_error(refused, 400, "validation_failed")
    assert answer["error"]["fields"] == [{"field": "avatar", "problem": problem}]
    assert avatar_of(api, who) == kept
    served(api, kept["avatar_url"])
    # Refused from its header: a 30000 x 30000 picture would take 2.5 GB to decode.
    assert peak_memory_kib(server) - peak < 64 * 1024


def test_a_body_of_another_type_is_a_415_and_a_credential_is_needed(
    api: httpx.Client, server: Server
) -> None:
    who = creator(server)
    assert_error(upload(api, who, photo("png"), "application/json"), 415)
    assert_error(api.put(AVATAR, content=photo("png"), headers={"Content-Type": "image/png"}), 401)
    assert_error(api.delete(AVATAR), 401)
    assert avatar_of(api, who)["uploaded"] is False


def test_removing_it_returns_to_the_generated_picture(api: httpx.Client, server: Server) -> None:
    who = creator(server)
    uploaded = upload(api, who, photo("webp"), "image/webp").json()["data"]["avatar_url"]

    removed = api.delete(AVATAR, headers=who.headers)

    assert removed.status_code == 200, removed.text
    assert removed.json()["data"] == {"avatar_url": "/avatars/neutral.svg", "uploaded": False}
    assert api.get(uploaded).status_code == 404
    assert api.delete(AVATAR, headers=who.headers).status_code == 200  # twice is fine
    # With a name, a pattern of its own, the same for every one of the creator's links,
    # served as an SVG that runs nothing.
    named = api.patch("/account/profile", json={"display_name": "Zoë"}, headers=who.headers)
    assert named.status_code == 200, named.text
    generated = avatar_of(api, who)["avatar_url"]
    assert re.fullmatch(r"/avatars/generated/[0-9a-f]{20}\.svg", generated)
    second = api.post("/links", json={"prompt": "Another"}, headers=who.headers)
    assert second.status_code == 201, second.text
    other_link = api.get(f"/links/{second.json()['data']['id']}/public").json()["data"]
    assert other_link["creator_avatar_url"] == generated
    svg = api.get(generated)
    assert svg.status_code == 200
    assert svg.headers["content-type"].startswith("image/svg+xml")
    assert "default-src 'none'" in svg.headers["content-security-policy"]
    assert "<script" not in svg.text
    neutral = api.get("/avatars/neutral.svg")
    assert neutral.status_code == 200
    assert neutral.text != svg.text
    another = creator(server)
    api.patch("/account/profile", json={"display_name": "Zoë"}, headers=another.headers)
    assert avatar_of(api, another)["avatar_url"] != generated  # not drawn from the name
    assert api.get("/avatars/generated/nothex.svg").status_code == 404
    assert api.get("/avatars/0123456789abcdef0123.webp").status_code == 404


def test_a_deleted_account_shows_its_picture_to_no_one(api: httpx.Client, server: Server) -> None:
    who = make_account(server.database_url, admin=False)
    url = upload(api, who.creator, photo("png")).json()["data"]["avatar_url"]
    with contextlib.closing(signed_in_browser(server, who.email)) as browser:
        page = browser.get("/dashboard/account/delete")
        asked = browser.post(
            "/dashboard/account/delete",
            data={"csrf_token": csrf_of(page.text), "confirm": "yes"},
        )
        assert asked.status_code == 200, asked.text
    assert api.get(url).status_code == 404


# --- the account page ------------------------------------------------------------------------


def test_the_account_page_uploads_and_removes_the_picture_without_javascript(
    server: Server, api: httpx.Client
) -> None:
    who = make_account(server.database_url, admin=False)
    with contextlib.closing(signed_in_browser(server, who.email)) as browser:
        page = browser.get("/dashboard/account")
        assert page.status_code == 200
        assert 'enctype="multipart/form-data"' in page.text
        assert 'src="/avatars/neutral.svg"' in page.text
        token = csrf_of(page.text)
        files = {"avatar": ("me.jpg", photo("jpeg"), "image/jpeg")}

        # Without the page's token, nothing happens.
        forged = browser.post("/dashboard/account/avatar", data={"csrf_token": "x"}, files=files)
        assert forged.status_code == 403
        assert avatar_of(api, who.creator)["uploaded"] is False

        sent = browser.post("/dashboard/account/avatar", data={"csrf_token": token}, files=files)
        assert sent.status_code == 303, sent.text
        now = avatar_of(api, who.creator)
        assert now["uploaded"] is True
        page = browser.get("/dashboard/account")
        assert f'src="{now["avatar_url"]}"' in page.text
        assert 'id="avatar-remove"' in page.text
        assert served(api, now["avatar_url"]).size == (256, 256)

        # A GIF is refused on the page too, and the picture stays.
        gif = {"avatar": ("me.gif", REFUSED["a GIF"][0], "image/gif")}
        refused = browser.post("/dashboard/account/avatar", data={"csrf_token": token}, files=gif)
        assert refused.status_code == 400
        assert avatar_of(api, who.creator) == now

        removed = browser.post("/dashboard/account/avatar/delete", data={"csrf_token": token})
        assert removed.status_code == 303, removed.text
        assert avatar_of(api, who.creator)["uploaded"] is False
        assert 'id="avatar-remove"' not in browser.get("/dashboard/account").text


# --- the cards ---------------------------------------------------------------------------------


def card_etag(api: httpx.Client, path: str) -> str:
    response = api.get(path)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "image/png"
    return response.headers["etag"]


def test_the_cards_change_with_the_name_and_the_picture(api: httpx.Client, server: Server) -> None:
    who = creator(server)
    message_id = post_message(api, who.link_id, "Who are you?")
    post_reply(api, who, message_id, "Someone who likes lighthouses.")
    answer, link = f"/{who.link_id}/{message_id}/card.png", f"/{who.link_id}/card.png"
    seen = [(card_etag(api, answer), card_etag(api, link))]

    api.patch("/account/profile", json={"display_name": "Zoë"}, headers=who.headers)
    seen.append((card_etag(api, answer), card_etag(api, link)))  # named: a generated picture
    upload(api, who, photo("png"))
    seen.append((card_etag(api, answer), card_etag(api, link)))
    upload(api, who, photo("jpeg"))  # another upload, even of the same pixels
    seen.append((card_etag(api, answer), card_etag(api, link)))
    api.delete(AVATAR, headers=who.headers)
    seen.append((card_etag(api, answer), card_etag(api, link)))

    assert len({etag for pair in seen for etag in pair}) == 2 * (len(seen) - 1)
    assert seen[-1] == seen[1]  # removed: the generated picture's cards again


def test_the_link_cards_qr_code_is_the_links_address(api: httpx.Client, server: Server) -> None:
    who = creator(server)
    response = api.get(f"/{who.link_id}/card.png")
    assert response.status_code == 200, response.text

    address = f"{server.url}/{who.link_id}"  # with its scheme: a camera opens it
    expected = segno.make(address, error="m", micro=False, boost_error=False).matrix
    assert drawn_modules(response.content, address) == [[bool(c) for c in r] for r in expected]
    assert api.get(address, headers={"Accept": "text/html"}).status_code == 200
