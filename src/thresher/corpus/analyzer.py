"""One English text analyzer for every reader of text above the index (pure).

The local policy (``policies.local``) and task synthesis (``synth.tasks``)
read the same corpora and must agree on what a word, a stop word, a sentence
and a match are; both use this module:

- :func:`fold` removes accents and compatibility forms ("Akinoshū" → "Akinoshu",
  "ﬁ" → "fi"), so a query typed without them meets the text;
- :func:`words` / :func:`content_words`: lowercased, folded word tokens (letters
  and digits, an inner apostrophe kept), without :data:`STOPWORDS` and
  one-character tokens for the latter;
- :data:`STOPWORDS`: English function and question words, the one stop list;
  :data:`NAME_CONNECTORS`: the short words that join the capitalized words of
  one name ("University *of the* Arts", "Ludwig *van* Beethoven");
  :data:`CALENDAR`: month and weekday names and their abbreviations;
- :func:`sentences`: sentences and lines (a line break always ends one; a
  ``.!?`` ends one before a capital or a digit, not after an initial:
  "directed by Erle C. Kenton" stays whole; in a text without capitals, such
  as one lowercased, before any word, still not after a one-letter word);
- :func:`caseless`: whether a text has letters but no capital (its case tells
  nothing: names must be found by other evidence);
- :func:`stem`: the Snowball English stemmer (PyStemmer, the one the BM25
  index uses) with agent nouns joined to their verb: Snowball keeps
  "director" apart from "directed", so a stem ending in "er"/"or" loses it
  when at least four letters remain ("director", "directors", "directed",
  "direction" → "direct"; "player", "played" → "play"; "station" stays apart
  from "stated");
- :func:`normalize`: lowercase, folded accents, quotes and dashes, punctuation
  to spaces, whitespace collapsed: the form two strings are compared in.

Nothing here holds state across calls but PyStemmer's own per-thread cache.
"""

from __future__ import annotations

import re
import threading
import unicodedata

__all__ = [
    "STOPWORDS",
    "NAME_CONNECTORS",
    "CALENDAR",
    "fold",
    "words",
    "content_words",
    "sentences",
    "caseless",
    "stem",
    "normalize",
]

_STOPWORDS_TEXT = (
    "a about after again against all also am an and another any are as at be because been "
    "before being between both but by called can could d did do does done down during each "
    "either else every few first for from further had has have having he her here hers him "
    "his how i if in into is it it's its just known least less ll m many may me might more "
    "most much must my name named neither no nor not o of off on once one ones only onto or "
    "other our out over own re s same second shall she should so some such t than that the "
    "their theirs them then there these they third this those through to too under until up "
    "us ve very was we were what when where whether which while who whom whose why will with "
    "without would y year years yes you your "
)
#: English function words and question words (lowercase): the one stop list
STOPWORDS: frozenset[str] = frozenset(_STOPWORDS_TEXT.split())

#: lowercase words that join the capitalized words of one name
NAME_CONNECTORS: frozenset[str] = frozenset(
    ["of", "the", "de", "del", "der", "van", "von", "la", "le", "du", "da", "&"]
)

_CALENDAR_TEXT = (
    "january february march april may june july august september october november december "
    "jan feb mar apr jun jul aug sep sept oct nov dec "
    "monday tuesday wednesday thursday friday saturday sunday "
    "mon tue tues wed thu thur fri sat sun"
)
#: month and weekday names and abbreviations (lowercase)
CALENDAR: frozenset[str] = frozenset(_CALENDAR_TEXT.split())

_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)?", re.UNICODE)
_SINGLE = frozenset("abcdefghijklmnopqrstuvwxyz0123456789")
#: combining marks (accents written as a second character)
_COMBINING_RANGES = ((0x0300, 0x036F), (0x1AB0, 0x1AFF), (0x1DC0, 0x1DFF), (0x20D0, 0x20FF))
_COMBINING = re.compile("[" + "".join(f"{chr(a)}-{chr(b)}" for a, b in _COMBINING_RANGES) + "]")
_SENTENCE = re.compile(
    r"(?:(?<=[.!?])(?<!\b[A-Z]\.)|(?<=[.!?][\"'”’)\]]))"  # an end, or an end and a closer
    r"\s+(?=[\"'“‘(\[]?[A-Z0-9])"  # before a capital or a digit
    r"|[^\S\n]*\n\s*"  # a line break
)
#: the sentence ends of a text without capitals: ``.!?`` (and a closer) before any word,
#: but not after a one-letter word ("erle c. kenton", "e.g. the")
_CASELESS_SENTENCE = re.compile(
    r"(?:(?<=[.!?])(?<!\b\w\.)|(?<=[.!?][\"'”’)\]]))\s+(?=[\"'“‘(\[]?\w)|[^\S\n]*\n\s*"
)
_QUOTES = str.maketrans({"“": '"', "”": '"', "‘": "'", "’": "'", "–": "-", "—": "-", "‑": "-"})
_PUNCT = re.compile(r"[^\w\s]")
_WS = re.compile(r"\s+")
#: Snowball stems ending like an agent noun ("director", "player")
_AGENT = ("er", "or")
_stemmers = threading.local()  # PyStemmer objects are not safe to share across threads


def fold(text: str) -> str:
    """``text`` in compatibility decomposition without combining marks: no accents or
    ligatures ("Akinoshū" → "Akinoshu", "ﬁ" → "fi"); ASCII text comes back unchanged."""
    if text.isascii():
        return text
    return _COMBINING.sub("", unicodedata.normalize("NFKD", text))


def words(text: str) -> list[str]:
    """Lowercased, folded word tokens of ``text`` (letters and digits, inner apostrophes kept)."""
    return _WORD.findall(fold(text.lower()))


def content_words(text: str) -> set[str]:
    """The distinct :func:`words` of ``text`` that are not stop words nor one character."""
    return set(words(text)) - STOPWORDS - _SINGLE


def caseless(text: str) -> bool:
    """Whether ``text`` has letters but not one capital (lowercased text, some code or
    chat): its case says nothing about where sentences start or which words name things."""
    return text.islower()


def sentences(text: str) -> list[str]:
    """``text`` cut into sentences: at every line break, and after ``.!?`` (and a closing
    quote or bracket) before a capital or a digit, but not after an initial
    ("directed by Erle C. Kenton" is one sentence). In a :func:`caseless` text, after
    ``.!?`` before any word, but not after a one-letter word ("erle c. kenton").
    Pieces are stripped; empty ones dropped.
    """
    splitter = _CASELESS_SENTENCE if caseless(text) else _SENTENCE
    parts = (p.strip() for p in splitter.split(text.strip()))
    return [p for p in parts if p]


def _snowball(word: str) -> str:
    stemmer = getattr(_stemmers, "english", None)
    if stemmer is None:
        import Stemmer

        stemmer = _stemmers.english = Stemmer.Stemmer("english")
    return str(stemmer.stemWord(word))


def stem(word: str) -> str:
    """The Snowball English stem of a lowercase word, an agent noun's "er"/"or" removed
    when at least four letters remain: "directors", "director", "directed" and
    "direction" give "direct"; "players" and "played" give "play"; "stated" and
    "states" give "state", apart from "station"; "country" stays apart from "county"."""
    s = _snowball(fold(word))
    if s.endswith(_AGENT) and len(s) - 2 >= 4:
        return s[:-2]
    return s


def normalize(text: str) -> str:
    """Lowercase, folded accents, straight quotes, ASCII dashes, punctuation to spaces,
    whitespace collapsed: the form in which two strings are compared."""
    text = fold(text.translate(_QUOTES)).lower()
    return _WS.sub(" ", _PUNCT.sub(" ", text)).strip()
