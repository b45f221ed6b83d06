"""Pure text helpers of task synthesis: sentences, candidate entities, normalized matching.

Nothing here knows about indexes or tasks; every function is a pure function of
its string arguments, so the explore, verify and distract stages agree on what
a sentence, an entity and a "match" are.

- :func:`sentences` splits a chunk into sentences (and lines: headings, table
  rows and list items are their own "sentences").
- :func:`entities` finds candidate entity strings in one sentence: runs of
  capitalized words (``Fallil Filtration``, ``University of Tessaly``), codes
  holding a digit (``GO-2021-138181``, ``NZ-750``), single capitalized words
  that do not open the sentence (``Lathlin``), and, as answer candidates only,
  years and other numbers (``2004``, ``1,975``).
- :func:`normalize` lowercases, folds accents, quotes and dashes, drops
  punctuation and collapses whitespace; :func:`contains` tests a normalized
  phrase against a normalized text on word boundaries. Quotes are checked with
  these.

Sentences, stop words, name connectors and normalization are
:mod:`thresher.corpus.analyzer`'s, the analyzer the local policy reads the same
text with; this module adds what synthesis alone needs (entity candidates).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from thresher.corpus import analyzer

__all__ = [
    "Mention",
    "sentences",
    "entities",
    "normalize",
    "normalize_short",
    "contains",
    "quote_matches",
    "mask",
]

_LINE_JUNK = re.compile(r"^[\s#>*|\-=_:+]+|[\s|]+$")
#: words that join the capitalized words of one name (the analyzer's, "&" aside)
_CONNECTORS = analyzer.NAME_CONNECTORS
_TOKEN = re.compile(
    r"[A-Z0-9][A-Za-z0-9]*(?:-[A-Za-z0-9]+)+"  # codes and hyphenated names
    r"|[A-Z][a-zA-Z'’]*[a-zA-Z]"  # capitalized words
    r"|\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"  # numbers
    rf"|\b(?:{'|'.join(sorted(c for c in _CONNECTORS if c != '&'))})\b|&"  # connectors
)
_GAP = re.compile(r"[ \t]*")
#: capitalized words of page layouts, greetings, counting and the worlds' record types
#: that open (or alone make) a capitalized run without naming anything
_LAYOUT_WORDS = """since yet above below among across along around within per via last next
    two three four five six seven eight nine ten mr mrs ms dr hi hello dear regards best
    thanks thank sincerely cheers fw fwd subject date sent cc bcc messages today yesterday
    tomorrow item part section chapter figure fig table page note notes see main contents
    help random article fiscal annual report abstract summary background claims introduction
    conclusion references type introduced warranty design reception history overview
    description detailed brief drawings record records total revenue employees customers
    products product company companies patent patents inventor inventors"""
#: lowercase words that never start (or alone make) an entity: the analyzer's stop words
#: and calendar words, and :data:`_LAYOUT_WORDS`
STOP = analyzer.STOPWORDS | analyzer.CALENDAR | frozenset(_LAYOUT_WORDS.split())
_YEAR = re.compile(r"^(1[5-9]|20)\d\d$")


@dataclass(frozen=True, slots=True)
class Mention:
    """A candidate entity in a sentence.

    Attributes:
        text: the string as written (verbatim in the sentence).
        kind: ``name`` (capitalized run), ``code`` (holds a digit), ``word``
            (one capitalized word), ``year`` or ``number``.
        start: character offset in the sentence.
    """

    text: str
    kind: str
    start: int

    @property
    def is_number(self) -> bool:
        return self.kind in ("year", "number")


def sentences(text: str) -> list[str]:
    """The sentences of ``text`` (:func:`thresher.corpus.analyzer.sentences`: lines first,
    then sentence ends inside each line), markdown and table decoration stripped from
    their ends, pieces shorter than three characters dropped.
    """
    out: list[str] = []
    for piece in analyzer.sentences(text):
        piece = _LINE_JUNK.sub("", piece).strip()
        if len(piece) >= 3:
            out.append(piece)
    return out


def _is_cap(token: str) -> bool:
    return token[0].isupper() or (token[0].isdigit() and "-" in token and _has_alpha(token))


def _has_alpha(token: str) -> bool:
    return any(ch.isalpha() for ch in token)


def _is_code(token: str) -> bool:
    return "-" in token and any(ch.isdigit() for ch in token) and _has_alpha(token)


def entities(sentence: str) -> list[Mention]:
    """Candidate entities of one sentence, in order of appearance (see module docs).

    A run of capitalized tokens (connectors such as ``of`` allowed inside)
    gives one ``name`` after leading stop words are dropped; every code inside a
    run is also given on its own. A lone capitalized word counts only when it is
    not the sentence's first word and not a stop word.
    """
    matches = list(_TOKEN.finditer(sentence))
    tokens = [(m.group(0), m.start()) for m in matches]
    # joined[k]: token k+1 follows token k with only spaces between them
    joined = [
        _GAP.fullmatch(sentence, matches[k].end(), matches[k + 1].start()) is not None
        for k in range(len(matches) - 1)
    ]
    found: list[Mention] = []
    i = 0
    while i < len(tokens):
        tok, start = tokens[i]
        if tok in _CONNECTORS:
            i += 1
            continue
        if not _is_cap(tok):
            if tok[0].isdigit():
                kind = "year" if _YEAR.match(tok) else "number"
                if kind == "year" or len(tok.replace(",", "").split(".")[0]) >= 2:
                    found.append(Mention(tok, kind, start))
            i += 1
            continue
        j = i + 1
        while j < len(tokens) and joined[j - 1]:
            nxt = tokens[j][0]
            if _is_cap(nxt) and not nxt[0].isdigit() or _is_code(nxt):
                j += 1
            elif (
                nxt in _CONNECTORS
                and j + 1 < len(tokens)
                and joined[j]
                and _is_cap(tokens[j + 1][0])
                and tokens[j + 1][0].lower() not in STOP
            ):
                j += 2
            else:
                break
        run = tokens[i:j]
        while run and (run[0][0].lower() in STOP or run[0][0] in _CONNECTORS):
            run = run[1:]
        while run and (run[-1][0] in _CONNECTORS or run[-1][0].lower() in STOP):
            run = run[:-1]
        if run:
            first_start = run[0][1]
            last_tok, last_start = run[-1]
            text = sentence[first_start : last_start + len(last_tok)]
            if len(run) > 1:
                found.append(Mention(text, "name", first_start))
                found.extend(Mention(t, "code", s) for t, s in run if _is_code(t))
            elif _is_code(text):
                found.append(Mention(text, "code", first_start))
            elif first_start > 0 and len(text) >= 3 and tokens[i][1] > 0:
                found.append(Mention(text, "word", first_start))
        i = j
    return found


@lru_cache(maxsize=200_000)
def normalize_short(text: str) -> str:
    """:func:`normalize`, memoized (for entity strings and other short, repeated text)."""
    return normalize(text)


def normalize(text: str) -> str:
    """:func:`thresher.corpus.analyzer.normalize`: lowercase, accents, quotes and dashes
    folded, punctuation dropped, whitespace collapsed."""
    return analyzer.normalize(text)


def contains(haystack_norm: str, needle: str) -> bool:
    """Whether ``needle`` (raw) occurs in ``haystack_norm`` (already normalized) on word bounds."""
    n = normalize_short(needle)
    if not n:
        return False
    return f" {n} " in f" {haystack_norm} "


def quote_matches(quote: str, text: str) -> bool:
    """Whether ``quote`` occurs in ``text`` after both are normalized (see :func:`normalize`)."""
    return contains(normalize(text), quote)


def mask(sentence: str, target: str, placeholder: str) -> str:
    """``sentence`` with every whole occurrence of ``target`` (case-insensitive) replaced.

    An occurrence inside a longer word or code (``Lath`` in ``Lathlin``) is kept.
    """
    if not target:
        return sentence
    pattern = r"(?<![\w-])" + re.escape(target) + r"(?![\w-])"
    return re.sub(pattern, lambda _m: placeholder, sentence, flags=re.IGNORECASE)
