"""Small, pure text helpers the local policy shares: words, content words, sentences.

Tokens, the stop list, the sentence splitter, accent folding and the stemmer
are :mod:`thresher.corpus.analyzer`'s (the analyzer task synthesis reads
text with too), re-exported here; this module adds what only the policy
needs: the extractive justification (:func:`best_sentences`), a text's
sentence words, word-bounded phrase matching, and the candidate names of a
text whose case says nothing (:func:`word_runs`). No corpus statistics: cheap
enough to run on every candidate of every search.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from thresher.corpus.analyzer import (
    CALENDAR,
    NAME_CONNECTORS,
    STOPWORDS,
    caseless,
    content_words,
    fold,
    sentences,
    stem,
    words,
)
from thresher.policies.local.constants import DEFAULT_CONSTANTS

__all__ = [
    "STOPWORDS",
    "words",
    "content_words",
    "sentences",
    "sentence_words",
    "best_sentences",
    "contains_phrase",
    "contains_folded",
    "holds_folded",
    "fold_phrase",
    "fold",
    "stem",
    "caseless",
    "word_runs",
]

#: an initial (a lone letter and its dot before a space: "g. stanley hall"), a word
#: (inner apostrophes, hyphens and dots kept: "o'brien", "jean-luc", "u.s"), or one
#: character of punctuation
_TOKEN = re.compile(r"(?<![\w.])[^\W\d_]\.(?=\s)|[^\W_]+(?:['’.-][^\W_]+)*|[^\w\s]")
#: a possessive ending (both spellings have one length)
_POSSESSIVE = ("'s", "’s")


#: a text's sentences and each one's content words (:func:`sentence_words` or a memo of it)
SentenceWords = Callable[[str], tuple[tuple[str, ...], tuple[frozenset[str], ...]]]


def best_sentences(
    text: str,
    cues: Iterable[str],
    limit: int = 2,
    max_chars: int = 400,
    split: SentenceWords | None = None,
) -> str:
    """The ``limit`` sentences of ``text`` sharing most content words with ``cues``, in text order.

    Used as the extractive justification of a final document. Ties keep the
    earlier sentence; the result is cut to ``max_chars`` characters. ``split``: a
    memo of :func:`sentence_words`.
    """
    cue_words: set[str] = set()
    for cue in cues:
        cue_words |= content_words(cue)
    sents, sent_words = (split or sentence_words)(text)
    if not sents:
        return ""
    scored = sorted(range(len(sents)), key=lambda i: (-len(sent_words[i] & cue_words), i))
    chosen = sorted(scored[: max(1, limit)])
    out = " ".join(sents[i] for i in chosen)
    return out if len(out) <= max_chars else out[: max_chars - 1].rstrip() + "…"


def sentence_words(text: str) -> tuple[tuple[str, ...], tuple[frozenset[str], ...]]:
    """``text``'s :func:`sentences` and each one's :func:`content_words`."""
    sents = tuple(sentences(text))
    return sents, tuple(frozenset(content_words(x)) for x in sents)


def contains_phrase(haystack_lower: str, phrase: str) -> bool:
    """Whether ``phrase`` occurs in ``haystack_lower`` (already lowercased) on word
    boundaries, accents folded on both sides ("Akinoshu" meets "akinoshū")."""
    return contains_folded(fold(haystack_lower), phrase)


def contains_folded(haystack_folded: str, phrase: str) -> bool:
    """:func:`contains_phrase` of a haystack already lowercased and folded
    (``fold(text.lower())``; folding is idempotent, so the answer is the same): a
    chunk read against many phrases is folded once."""
    return holds_folded(haystack_folded, fold_phrase(phrase))


def fold_phrase(phrase: str) -> str:
    """``phrase`` as :func:`contains_phrase` looks for it: lowercased, stripped, folded."""
    return fold(phrase.lower().strip())


def holds_folded(haystack_folded: str, p: str) -> bool:
    """:func:`contains_folded` of a phrase already in its :func:`fold_phrase` form (a title
    tested against many chunks is folded once)."""
    haystack_lower = haystack_folded
    if len(p) < 3:
        return False
    start = haystack_lower.find(p)
    while start >= 0:
        end = start + len(p)
        before = haystack_lower[start - 1] if start > 0 else " "
        after = haystack_lower[end] if end < len(haystack_lower) else " "
        if not before.isalnum() and not after.isalnum():
            return True
        start = haystack_lower.find(p, start + 1)
    return False


def word_runs(text: str, max_words: int = DEFAULT_CONSTANTS.run_max_words) -> list[str]:
    """Candidate names of a text whose case says nothing (:func:`caseless`): the runs of
    one to ``max_words`` content words (the constant ``run_max_words``: longer runs
    describe rather than name) that stop words, calendar words, numbers,
    punctuation and line breaks delimit, a name's connectors allowed inside ("university
    of the arts"), in text order, deduplicated.

    An initial stays in its run ("g. stanley hall"). A run whose connectors follow a
    describing word is also offered from after them ("first president of the american
    psychological association" offers "american psychological association"), so a
    relation word of the question before the name ("president") can cue it.

    Without capitals every run is a candidate; which one is the next link is left to
    the evidence the bridges weigh (a relation word of the question beside it, a known
    title it opens, how often the text repeats it).
    """
    out: list[str] = []
    for line in text.splitlines():
        run: list[str] = []
        for tok in [*_TOKEN.findall(line.lower()), "."]:
            word = tok.rstrip("'’")
            if word.endswith(_POSSESSIVE):
                word = word[: -len(_POSSESSIVE[0])]
            if run and word in NAME_CONNECTORS:
                run.append(word)
                continue
            initial = len(word) == 2 and word.endswith(".")  # "g."
            wordlike = word.isalpha() or initial or any(c in word for c in "-'’")
            if wordlike and word not in STOPWORDS and word not in CALENDAR:
                run.append(word)
                if word == tok:
                    continue
                # a possessive ends the name it closes ("paul verhoeven's script")
            _close(run, out, max_words)
            run = []
    return list(dict.fromkeys(out))


def _close(run: list[str], out: list[str], max_words: int) -> None:
    """Add ``run`` (less connectors at its end) and each of its tails after a connector
    to ``out``, those of one to ``max_words`` named words (one word: 3+ letters)."""
    while run and run[-1] in NAME_CONNECTORS:
        run.pop()
    starts = [0] + [
        i
        for i in range(1, len(run))
        if run[i] not in NAME_CONNECTORS and run[i - 1] in NAME_CONNECTORS
    ]
    for start in starts:
        part = run[start:]
        named = [w for w in part if w not in NAME_CONNECTORS]
        if named and len(named) <= max_words and (len(named) > 1 or len(named[0]) >= 3):
            out.append(" ".join(part))
