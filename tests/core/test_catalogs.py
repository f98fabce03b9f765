# ruff: noqa: RUF001, RUF002 - Japanese text has its own full-width punctuation
"""The catalogs' wording holds to the rules a translator follows (docs/decisions.md,
"Issue 41: type set for CJK and the catalogs' wording"): Korean in one register, 해요체
(no 합니다체 or 해라체 endings), without 당신, and with one word for the inbox, 받은
메시지함; Japanese with full-width （ ）： ！？ wherever they touch Japanese text.
Read from the .po files themselves, so a merged or newly added translation is held too."""

from __future__ import annotations

import re
from pathlib import Path

from babel.messages.pofile import read_po

LOCALE = Path(__file__).resolve().parents[2] / "src" / "anonbox" / "locale"


def _translations(language: str) -> list[tuple[str, str]]:
    """Every (msgid, msgstr) of a catalog, each plural form on its own."""
    with (LOCALE / language / "LC_MESSAGES" / "messages.po").open("rb") as po:
        catalog = read_po(po)
    pairs: list[tuple[str, str]] = []
    for message in catalog:
        if not message.id:
            continue
        msgid = str(message.id if isinstance(message.id, str) else message.id[0])
        strings = message.string if isinstance(message.string, tuple) else (message.string,)
        pairs += [(msgid, str(text)) for text in strings if text]
    return pairs


# --- Korean ------------------------------------------------------------------------------

_FINAL_B = 17  # ㅂ as a syllable's final consonant (jongseong index)


def _ends_in_b(syllable: str) -> bool:
    code = ord(syllable) - 0xAC00
    return 0 <= code < 11172 and code % 28 == _FINAL_B


def formal_endings(text: str) -> list[str]:
    """합니다체 in ``text``: -ㅂ니다/-습니다, -ㅂ니까/-습니까, -ㅂ시다, -십시오; and 해라체's
    sentence-final 다 (…한다. …없다.), the other register that is not 해요체."""
    found = [
        text[i : i + 3]
        for i in range(len(text) - 2)
        if _ends_in_b(text[i]) and text[i + 1 : i + 3] in {"니다", "니까", "시다"}
    ]
    found += re.findall(r"십시오", text)
    found += [
        m.group(0)
        for m in re.finditer(r"[가-힣]다(?=[.!?)\"]|$)", text)
        if m.group(0) not in {"니다", "시다"}  # the tail of -ㅂ니다, -ㅂ시다, found above
    ]
    return found


_OTHER_INBOX_WORDS = re.compile(r"편지함|수신함|메일함|인박스|(?<!받은 )메시지함")


def test_korean_is_in_one_register_without_a_pronoun_and_one_word_for_the_inbox() -> None:
    wrong: list[str] = []
    for msgid, text in _translations("ko"):
        if formal := formal_endings(text):
            wrong.append(f"합니다체/해라체 {formal}: {text!r} (for {msgid!r})")
        if "당신" in text:
            wrong.append(f"당신: {text!r} (for {msgid!r})")
        if other := _OTHER_INBOX_WORDS.findall(text):
            wrong.append(f"inbox as {other}, not 받은 메시지함: {text!r} (for {msgid!r})")
    assert not wrong, "\n".join(wrong)


def test_the_korean_checks_catch_what_they_name() -> None:
    assert formal_endings("주소를 복사했습니다.") == ["습니다"]
    assert formal_endings("다시 시도하십시오") == ["십시오"]
    assert formal_endings("계정이 없습니까?") == ["습니까"]
    assert formal_endings("표시됩니다") == ["됩니다"]
    assert formal_endings("삭제된다.") == ["된다"]
    assert formal_endings("주소를 복사했어요. 다시 시도해 주세요! 바다 같아요") == []
    assert _OTHER_INBOX_WORDS.findall("← 받은편지함 · 메시지함") == ["편지함", "메시지함"]
    assert _OTHER_INBOX_WORDS.findall("받은 메시지함으로 돌아가기") == []


# --- Japanese ----------------------------------------------------------------------------

# Kana, kanji, the long-vowel mark, Japanese punctuation and full-width forms.
_JAPANESE = re.compile(r"[\u3000-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uff01-\uff60]")
# What is code rather than text: placeholders (%(name)s, {count}) and HTML tags.
_PLACEHOLDER = re.compile(r"%\(\w+\)[sd]|%[sd]|\{\w+\}")
_TAG = re.compile(r"<[^>]*>")


def half_width_beside_japanese(text: str) -> list[str]:
    """Each half-width ( ) : ! ? whose nearest neighbour on either side (past spaces) is
    Japanese, shown with three characters either side ("OBS(または", "の質問: A")."""
    plain = _TAG.sub("", _PLACEHOLDER.sub("A", text))
    found = []
    for i, char in enumerate(plain):
        if char not in "():!?":
            continue
        before = plain[:i].rstrip()[-1:]
        after = plain[i + 1 :].lstrip()[:1]
        if _JAPANESE.match(before) or _JAPANESE.match(after):
            found.append(plain[max(0, i - 3) : i + 4])
    return found


def test_japanese_punctuation_is_full_width_in_japanese_text() -> None:
    wrong = [
        f"{found}: {text!r} (for {msgid!r})"
        for msgid, text in _translations("ja")
        if (found := half_width_beside_japanese(text))
    ]
    assert not wrong, "half-width （ ）： ！？ in Japanese text:\n" + "\n".join(wrong)


def test_the_japanese_check_leaves_code_names_and_addresses_alone() -> None:
    assert half_width_beside_japanese("OBS(または他の配信アプリ)") == ["OBS(または", "アプリ)"]
    assert half_width_beside_japanese("匿名の質問: %(question)s") == ["の質問: A"]
    assert half_width_beside_japanese("送信しました!") == ["ました!"]
    assert half_width_beside_japanese("閲覧注意 (任意)") == ["注意 (任意)", "(任意)"]
    assert half_width_beside_japanese("匿名の質問：%(question)s、%(name)sさん") == []
    assert half_width_beside_japanese('<a href="https://x.example/?a=1">リンク</a>') == []
    assert half_width_beside_japanese("（OpenAPI 3.1）の定義：https://example.org") == []
