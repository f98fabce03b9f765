"""How long a share card takes to draw, for the most expensive texts we know of.

    python bench/cards.py [--rounds N] [--case NAME ...]

Each case fills every text a card draws (the prompt to its 300 characters, the message and
the reply to their 500, the name to its 80) with one kind of text: distinct emoji, flags,
emoji ZWJ sequences, stacked combining marks, scripts without spaces, right-to-left text,
mixes that change font at every character. Fonts are loaded and read once per process (as
a server does); everything that depends on the text (measured widths, scaled emoji) is
forgotten before every drawing, so a sender who varies the text gains nothing from a warm
cache. Prints the median and the slowest of ``--rounds`` drawings per case, and whether
the slowest stays under the floor: 0.5 s per card on this machine.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
import unicodedata
from collections.abc import Callable

import regex

from anonbox.web.cards import text as card_text
from anonbox.web.cards.draw import render_card, render_link_card

FLOOR = 0.5  # seconds per card, the most a card may take on this machine
MESSAGE, PROMPT, NAME = 500, 300, 80  # the longest texts the service accepts (code points)


def _points(pattern: str, stop: int = 0x20000) -> list[str]:
    compiled = regex.compile(pattern, regex.V1)
    return [chr(p) for p in range(0x20, stop) if compiled.fullmatch(chr(p))]


def _cut(graphemes: list[str], limit: int) -> str:
    """Whole graphemes, as many as fit in ``limit`` code points."""
    out, used = [], 0
    for grapheme in graphemes:
        if used + len(grapheme) > limit:
            break
        out.append(grapheme)
        used += len(grapheme)
    text = "".join(out) or graphemes[0][:limit]  # one grapheme longer than the limit
    return unicodedata.normalize("NFC", text)[:limit]


def _shuffled(items: list[str], seed: int, count: int) -> list[str]:
    rng = random.Random(seed)
    return (
        [rng.choice(items) for _ in range(count)]
        if count > len(items)
        else rng.sample(items, count)
    )


def emoji(seed: int) -> list[str]:
    return _shuffled(_points(r"\p{Emoji_Presentation}"), seed, MESSAGE)


def flags(seed: int) -> list[str]:
    letters = [chr(0x1F1E6 + i) for i in range(26)]
    rng = random.Random(seed)
    return [rng.choice(letters) for _ in range(MESSAGE)]


def zwj(seed: int) -> list[str]:
    people = ["\U0001f468", "\U0001f469", "\U0001f9d1"]
    tones = ["", *(chr(0x1F3FB + i) for i in range(5))]
    jobs = [
        "\U0001f680",
        "\U0001f4bb",
        "\U0001f52c",
        "\U0001f3a8",
        "\u2695\ufe0f",
        "\U0001f373",
        "\U0001f692",
        "\u2708\ufe0f",
        "\U0001f33e",
        "\U0001f3eb",
        "\U0001f527",
        "\U0001f3ed",
    ]
    families = [
        "\U0001f468\u200d\U0001f469\u200d\U0001f467\u200d\U0001f466",
        "\U0001f469\u200d\U0001f469\u200d\U0001f466\u200d\U0001f466",
        "\U0001f3f3\ufe0f\u200d\U0001f308",
        "\U0001f3f4\u200d\u2620\ufe0f",
    ]
    sequences = [p + t + "\u200d" + j for p in people for t in tones for j in jobs] + families
    return _shuffled(sequences, seed, MESSAGE)


def zalgo(seed: int) -> list[str]:
    marks = _points(r"\p{Mn}", 0x370)  # the combining diacritical marks
    rng = random.Random(seed)
    return [rng.choice("aeiouxyz") + "".join(rng.sample(marks, 24)) for _ in range(MESSAGE // 25)]


def one_grapheme(seed: int) -> list[str]:
    marks = _points(r"\p{Mn}", 0x370)
    rng = random.Random(seed)
    return ["a" + "".join(rng.choice(marks) for _ in range(MESSAGE - 1))]


def _script(pattern: str, spaces: bool) -> Callable[[int], list[str]]:
    def make(seed: int) -> list[str]:
        letters = _shuffled(_points(pattern), seed, MESSAGE)
        rng = random.Random(seed)
        if spaces:
            letters = [c + (" " if rng.random() < 0.18 else "") for c in letters]
        return regex.findall(r"\X", "".join(letters))

    return make


def mixed(seed: int) -> list[str]:
    """A font change at every grapheme: emoji, Arabic, Latin, Han, Thai, Hebrew, flags."""
    pools = [
        _points(r"\p{Emoji_Presentation}"),
        _points(r"[\p{Arabic}&&\p{L}]", 0x700),
        list("abcdefghijklmnopqrstuvwxyz"),
        _points(r"\p{Han}", 0x5000),
        _points(r"[\p{Thai}&&\p{Lo}]", 0xE80),
        _points(r"[\p{Hebrew}&&\p{L}]", 0x600),
        ["\U0001f1ef\U0001f1f5", "\U0001f1f0\U0001f1f7"],
    ]
    rng = random.Random(seed)
    return [rng.choice(pools[i % len(pools)]) for i in range(MESSAGE)]


def newlines(seed: int) -> list[str]:
    return ["x", "\n"] * (MESSAGE // 2)


def latin(seed: int) -> list[str]:
    words = ["the", "quick", "brown", "fox", "jumps", "over", "a", "lazy", "dog", "while"]
    rng = random.Random(seed)
    return list(" ".join(rng.choice(words) for _ in range(MESSAGE // 4)))


CASES: dict[str, Callable[[int], list[str]]] = {
    "latin words": latin,
    "latin, no spaces": lambda seed: ["a"] * MESSAGE,
    "distinct emoji": emoji,
    "regional indicators": flags,
    "emoji ZWJ sequences": zwj,
    "zalgo (24 marks each)": zalgo,
    "one letter, 499 marks": one_grapheme,
    "thai, no spaces": _script(r"[\p{Thai}&&\p{Lo}]", False),
    "arabic words": _script(r"[\p{Arabic}&&\p{L}]", True),
    "arabic, no spaces": _script(r"[\p{Arabic}&&\p{L}]", False),
    "hebrew words": _script(r"[\p{Hebrew}&&\p{L}]", True),
    "devanagari, no spaces": _script(r"[\p{Devanagari}&&[\p{L}\p{M}]]", False),
    "CJK ideographs": _script(r"\p{Han}", False),
    "hangul": _script(r"[\p{Hangul}&&\p{Lo}]", False),
    "font change per char": mixed,
    "250 line breaks": newlines,
}


def _forget() -> None:
    """Forget everything learnt from earlier texts (fonts stay loaded)."""
    card_text.forget()


def draw(make: Callable[[int], list[str]], seed: int) -> tuple[float, float]:
    """The slower of the two cards these texts make: (seconds, CPU seconds)."""
    graphemes = make(seed)
    texts = {  # stored as NFC, at most as many code points as the service takes
        "prompt": _cut(graphemes, PROMPT),
        "message": _cut(graphemes, MESSAGE),
        "reply": _cut(make(seed + 1), MESSAGE),
        "name": _cut(make(seed + 2), NAME),
    }
    times = []
    for card in (
        lambda: render_card(**texts, url="anonbox.example/l/01JABCDEFGHJKMNPQRSTVWXYZ0"),
        lambda: render_link_card(
            name=texts["name"], prompt=texts["prompt"], url="anonbox.example/l/x"
        ),
    ):
        _forget()
        start, cpu = time.perf_counter(), time.process_time()
        card()
        times.append((time.perf_counter() - start, time.process_time() - cpu))
    return max(times)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--case", action="append", choices=sorted(CASES))
    args = parser.parse_args()
    render_card(prompt="warm", message="up", reply="the fonts 🙂 عربى 漢字 ไทย", name="x")
    print(
        f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; floor {FLOOR} s a card"
    )
    print(f"{'case':<24} {'median s':>9} {'slowest s':>10} {'slowest CPU s':>14}")
    over = []
    for name in args.case or CASES:
        times = [draw(CASES[name], seed) for seed in range(args.rounds)]
        wall = [t for t, _ in times]
        cpu = max(c for _, c in times)
        verdict = "ok" if cpu < FLOOR else "OVER"
        if cpu >= FLOOR:
            over.append(name)
        print(
            f"{name:<24} {statistics.median(wall):>9.3f} {max(wall):>10.3f} {cpu:>14.3f}",
            verdict,
            flush=True,
        )
    if over:
        print(f"over the floor: {', '.join(over)}")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
