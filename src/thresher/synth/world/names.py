"""Fictional names built from syllables: people, companies, towns, products, patents.

Every invented word is drawn from a seeded ``random.Random`` and registered, so a
word is never handed out twice in one world (except on purpose, for look-alike
distractors that share a company stem). Full names are therefore rare strings: a
bridge entity's name occurs only in the documents that talk about it. Words are
plain ASCII letters so they survive any sanitizer or tokenizer unchanged.
"""

from __future__ import annotations

import random
import re

__all__ = ["NameFactory", "slugify"]

_ONSETS = (
    "b", "br", "d", "dr", "f", "g", "gr", "h", "k", "kr", "l", "m", "n", "p", "r",
    "s", "st", "t", "tr", "v", "vr", "z", "th", "sh", "qu", "c", "ch", "j", "w",
)  # fmt: skip
_VOWELS = ("a", "e", "i", "o", "u", "a", "e", "o", "i", "ai", "ei", "ou", "y")
_CODAS = ("", "", "", "", "", "n", "r", "l", "s", "th", "m", "x", "nd", "rk", "st", "v", "n", "l", "r")  # fmt: skip

_TOWN_ENDINGS = ("mere", "holt", "by", "wick", "stead", "vale", "dun", "haven", "moor", "lin")
_RIVER_ENDINGS = ("", "a", "en", "wy", "ett")
_UNIVERSITY_FORMS = (
    "{w} University",
    "{w} Institute of Technology",
    "{w} Polytechnic",
    "{w} College of Engineering",
)
_EVENT_FORMS = ("{w} {topic} Expo", "{w} {topic} Forum", "{w} {topic} Summit", "{w} {topic} Fair")
_MODEL_LETTERS = "ACDHKLMNPRSTVXZ"

# Invented words that happen to be real words or well-known names are refused.
_REFUSED = frozenset(
    ("baron", "linda", "toronto", "paris", "china", "india", "japan", "berlin", "london",
     "moscow", "dallas", "bravo", "delta", "omega", "sierra", "tango", "victor", "zulu", "hotel",
     "romeo", "oscar", "kilo", "lima", "dune", "star", "mars", "venus", "pluto", "apple",
     "amazon", "google", "tesla", "nokia", "sony", "intel", "oracle")
)  # fmt: skip
_TRIPLE_CONSONANT = re.compile(r"[^aeiouy]{3}")


def slugify(name: str) -> str:
    """``name`` lowercased with runs of non-alphanumerics turned into single hyphens."""
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


class NameFactory:
    """Hands out unique invented names for one world.

    Args:
        rng: the seeded generator every choice is drawn from.
    """

    def __init__(self, rng: random.Random) -> None:
        self._rng = rng
        self._words: set[str] = set()
        self._names: set[str] = set()
        self._patent_numbers: set[str] = set()
        self.given_names: list[str] = [self._word(2, 2) for _ in range(60)]

    # -- building blocks -------------------------------------------------------------

    def _syllable(self) -> str:
        rng = self._rng
        return rng.choice(_ONSETS) + rng.choice(_VOWELS) + rng.choice(_CODAS)

    def _word(self, lo: int = 2, hi: int = 3) -> str:
        """A new invented capitalized word of ``lo``..``hi`` syllables (fewer more likely),
        never seen before."""
        for _ in range(10_000):
            n = lo if hi == lo or self._rng.random() < 0.7 else self._rng.randint(lo + 1, hi)
            word = "".join(self._syllable() for _ in range(n))
            if not 4 <= len(word) <= 10 or _TRIPLE_CONSONANT.search(word):
                continue
            if word in self._words or word in _REFUSED:
                continue
            self._words.add(word)
            return word.capitalize()
        raise RuntimeError("name space exhausted; use a smaller world")

    def _claim(self, name: str) -> str:
        if name in self._names:
            raise RuntimeError(f"name {name!r} handed out twice")
        self._names.add(name)
        return name

    # -- entity names ----------------------------------------------------------------

    def person(self) -> str:
        """``Given Surname`` with a shared given name and a surname used once."""
        return self._claim(f"{self._rng.choice(self.given_names)} {self._word(2, 3)}")

    def company_stem(self) -> str:
        """A fresh company stem (the distinctive first word of a company name)."""
        return self._word(2, 3)

    def company(self, stem: str, suffix: str) -> str:
        """``Stem Suffix``, e.g. a stem and an industry suffix such as ``Materials``."""
        return self._claim(f"{stem} {suffix}")

    def town(self) -> str:
        """A one-word town name: an invented stem and a place ending."""
        for _ in range(1000):
            name = self._word(1, 2) + self._rng.choice(_TOWN_ENDINGS)
            if name not in self._names:
                return self._claim(name)
        raise RuntimeError("town names exhausted")

    def region(self) -> str:
        """``Word Province``."""
        return self._claim(f"{self._word(2, 3)} Province")

    def river(self) -> str:
        """``Word River``."""
        return self._claim(f"{self._word(1, 2)}{self._rng.choice(_RIVER_ENDINGS)} River")

    def university(self) -> str:
        """A university, institute or college name around an invented word."""
        form = self._rng.choice(_UNIVERSITY_FORMS)
        return self._claim(form.format(w=self._word(2, 3)))

    def product(self) -> str:
        """``Brand X-40``: an invented brand and a model code."""
        rng = self._rng
        code = f"{rng.choice(_MODEL_LETTERS)}{rng.choice(_MODEL_LETTERS)}-{rng.randint(2, 98) * 10}"
        return self._claim(f"{self._word(2, 2)} {code}")

    def event(self, topic: str) -> str:
        """A recurring trade event, e.g. ``Word Robotics Expo``."""
        form = self._rng.choice(_EVENT_FORMS)
        return self._claim(form.format(w=self._word(2, 3), topic=topic))

    def landmark(self, kind: str) -> str:
        """A landmark such as ``the Word Bridge`` (``kind`` is its last word)."""
        return self._claim(f"{self._word(2, 2)} {kind}")

    def country(self) -> str:
        """The fictional country the world is set in."""
        return self._claim(self._word(2, 3))

    def patent_number(self, code: str, year: int) -> str:
        """``CC-YYYY-NNNNNN``: an office code, the filing year and a serial number."""
        for _ in range(1000):
            number = f"{code}-{year}-{self._rng.randint(1000, 999_999):06d}"
            if number not in self._patent_numbers:
                self._patent_numbers.add(number)
                return self._claim(number)
        raise RuntimeError("patent numbers exhausted")
