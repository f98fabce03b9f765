"""How long the muted-word matcher takes per post, with an empty list and a full one.

    python bench/muted_words.py [--number N]

Times ``Matcher.found_in`` in CPU time (normalising the post and a pass of the automaton,
what the gate does on every anonymous post) on 500-character posts (the most a message holds) in
English, Japanese, Korean and mixed scripts, and on a post built to make the automaton
report a match at every character (each one then checked for its boundaries), with 0
muted words, 1,000, and 1,000 plus 1,000 site phrases; and how long building a list of
1,000 takes (once per change of the list, per process).
"""

from __future__ import annotations

import argparse
import random
import time
import timeit
from collections.abc import Callable

from anonbox.safety.matching import NOTHING, Matcher

random.seed(32)
LETTERS = "abcdefghijklmnopqrstuvwxyz"
KANA = "".join(chr(c) for c in range(0x3042, 0x3094))
HANGUL = "".join(chr(c) for c in range(0xAC00, 0xAC00 + 400, 7))


def latin_word() -> str:
    return "".join(random.choices(LETTERS, k=random.randint(3, 10)))


def muted_list(count: int) -> list[str]:
    """A plausible full list: Latin words and phrases, kana and hangul words."""
    words: list[str] = []
    for n in range(count):
        kind = n % 4
        if kind == 0:
            words.append(latin_word())
        elif kind == 1:
            words.append(f"{latin_word()} {latin_word()}")
        elif kind == 2:
            words.append("".join(random.choices(KANA, k=random.randint(2, 5))))
        else:
            words.append("".join(random.choices(HANGUL, k=random.randint(2, 4))))
    return words


def posts() -> dict[str, str]:
    english = " ".join(latin_word() for _ in range(80))[:500]
    japanese = "".join(random.choices(KANA + "、。漢字東京", k=500))
    korean = " ".join("".join(random.choices(HANGUL, k=3)) for _ in range(125))[:500]
    mixed = " ".join(random.choice([latin_word(), "ばかwww", "바보야", "ÍDIOT"]) for _ in range(70))
    return {
        "english": english,
        "japanese": japanese,
        "korean": korean,
        "mixed": mixed[:500],
        "a match at every character": "a" * 500,
    }


def cpu(run: Callable[[], object], number: int) -> list[float]:
    """Five rounds' CPU time (not wall time: the machine may be shared)."""
    return timeit.Timer(run, timer=time.process_time).repeat(repeat=5, number=number)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--number", type=int, default=2000)
    number = parser.parse_args().number
    words, site = muted_list(1000), muted_list(1000)
    # The worst list for the last post: "a" to "a" * 100 all muted, each found everywhere.
    matchers = {
        "0 words": NOTHING,
        "1,000 words": Matcher.of(words),
        "1,000 words + 1,000 site phrases": Matcher.of(words).joined(Matcher.of(site)),
        "1,000 words with a..a*100": Matcher.of(words[:900] + ["a" * n for n in range(1, 101)]),
    }
    build = min(cpu(lambda: Matcher.of(words), number=5)) / 5
    print(f"building a list of 1,000 words: {build * 1e3:.2f} ms")
    for post_name, text in posts().items():
        for matcher_name, matcher in matchers.items():
            per = min(cpu(lambda m=matcher, t=text: m.found_in(t), number=number))
            found = matcher.found_in(text)
            print(
                f"{post_name:28} {matcher_name:34} {per / number * 1e6:8.1f} µs/post"
                f"  (found: {found})"
            )


if __name__ == "__main__":
    main()
