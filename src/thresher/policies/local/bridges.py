"""Bridge extraction: what retained chunks name that the question does not (pure).

In a multi-hop question the second document is named by the first, not by the
question ("the association which published *Journal X*": Journal X's page
names the American Psychological Association). So the follow-up queries come
from the retained chunks: titles of other documents they mention, capitalized
entity spans and quoted names absent from the question. The question's own
rare tokens (quoted names, codes with digits) become grep patterns.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from thresher.corpus.analyzer import NAME_CONNECTORS
from thresher.policies.local.constants import DEFAULT_CONSTANTS, DEFAULT_CONTROLS, Constants
from thresher.policies.local.decompose import link_words, links
from thresher.policies.local.text import (
    STOPWORDS,
    caseless,
    contains_phrase,
    content_words,
    sentence_words,
    stem,
    word_runs,
    words,
)

__all__ = [
    "Anchor",
    "Bridge",
    "BridgeReads",
    "DirectReads",
    "SentenceFacts",
    "question_patterns",
    "entity_spans",
    "names_in",
    "heads_of",
    "held_words_of",
    "sentence_tokens",
    "linked_titles",
    "residual_words",
    "bridge_queries",
]

_QUOTED = re.compile(r"[\"“”]([^\"“”]{3,80})[\"“”]")
_CODE = re.compile(r"\b(?=[A-Za-z-]*\d)(?=\d*[A-Za-z])[A-Za-z0-9][A-Za-z0-9-]{2,}\b")
_CAP_WORD = r"(?:[A-Z][\w'’.-]*|\d{1,4})"
_GAP = r"[^\S\n]+"  # spaces within a line: a span never crosses a line break
_JOIN = rf"(?:{_GAP}(?:{'|'.join(sorted(NAME_CONNECTORS))})){{0,2}}"
_SPAN = re.compile(rf"{_CAP_WORD}(?:{_JOIN}{_GAP}{_CAP_WORD})*")
#: a possessive ending (both spellings have one length)
_POSSESSIVE = ("'s", "’s")
_MONTH = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?"
#: a calendar date ("16 Sep 2024", "July 25, 2011"): a value, rarely the next document's name
_DATE = re.compile(
    rf"(?:\d{{1,2}}\s+{_MONTH}(?:\s+\d{{4}})?|{_MONTH}\s+\d{{1,2}}(?:,?\s+\d{{4}})?)",
    re.IGNORECASE,
)


class SpansOf(Protocol):
    """A sentence's candidate phrases (:func:`entity_spans` or a span source's ``spans``);
    ``cased``: whether the sentence's document has capitals (``None``: read the sentence)."""

    def __call__(self, sentence: str, /, *, cased: bool | None = None) -> list[str]: ...


#: per sentence of a text: (the sentence lowercased, its content words, its candidate spans)
SentenceFacts = tuple[tuple[str, frozenset[str], tuple[str, ...]], ...]


class BridgeReads(Protocol):
    """What :func:`bridge_queries` reads from anchor text and titles: a session gives
    its memo (:class:`~thresher.policies.local.memo.TextMemo`), since the same anchors
    and titles come back on every hop; :class:`DirectReads` computes each anew."""

    def facts(self, text: str) -> SentenceFacts:
        """:func:`_sentence_facts` of ``text`` with the reads' span source."""
        ...

    def heads_map(self, titles: Iterable[str]) -> dict[str, tuple[str, ...]]:
        """:func:`heads_of` of each of ``titles``, by title."""
        ...

    def tokens(self, sent_lower: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """The words of a lowercased sentence and their stems (:func:`sentence_tokens`)."""
        ...

    def held_words(self, title: str, text: str, path: tuple[str, ...]) -> frozenset[str]:
        """Content words of an anchor and the chain that led to it (:func:`held_words_of`)."""
        ...


@dataclass(frozen=True, slots=True)
class DirectReads:
    """:class:`BridgeReads` computed on every call, spans from ``spans_of``."""

    spans_of: SpansOf

    def facts(self, text: str) -> SentenceFacts:
        return _sentence_facts(text, self.spans_of)

    def heads_map(self, titles: Iterable[str]) -> dict[str, tuple[str, ...]]:
        return {t: heads_of(t) for t in titles}

    def tokens(self, sent_lower: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
        return sentence_tokens(sent_lower)

    def held_words(self, title: str, text: str, path: tuple[str, ...]) -> frozenset[str]:
        return held_words_of(title, text, path)


@dataclass(frozen=True, slots=True)
class Anchor:
    """A retained chunk bridges are read from.

    weight: how much the policy trusts it (its predicted utility, 0..1).
    """

    chunk_id: str
    doc_id: str
    title: str
    text: str
    weight: float = 1.0
    #: texts of the chain that led here (earlier hops' chunks): the question words
    #: they hold are resolved and leave the follow-up query
    path: tuple[str, ...] = ()
    #: the phrase of the follow-up that found this chunk ("" for the question's search):
    #: names in a sentence beside it state the chain's next link
    via: str = ""
    #: for a clue chain, the clue this chunk's document answers (0-based) when the
    #: policy knows it (:func:`~thresher.policies.local.chain.clue_docs`); else the
    #: clue is read from how many bridges led here (``path``)
    clue: int | None = None
    #: names (lowercased) the chain came through to this chunk: known already, none is
    #: the next link ("We will launch the Zagraith DZ-170 at the Pigreis Drone Expo",
    #: reached through the Zagraith DZ-170, goes on from the expo)
    passed: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class Bridge:
    """A follow-up query: ``query`` to search, found in ``source`` (a chunk id).

    kind: ``title`` (another document's title the source mentions) or ``entity``.
    phrase: the bridging phrase itself. score: its priority (higher first).
    """

    query: str
    phrase: str
    kind: str
    source: str
    score: float


def question_patterns(
    question: str,
    limit: int = DEFAULT_CONSTANTS.grep_patterns,
    min_chars: int = DEFAULT_CONSTANTS.grep_min_chars,
) -> list[str]:
    """Grep patterns for the question's rare tokens: quoted names, then codes with digits.

    Returns regex-escaped patterns of at least ``min_chars`` characters, longest
    first, at most ``limit``.
    """
    found = [m.group(1).strip() for m in _QUOTED.finditer(question)]
    found += [m.group(0) for m in _CODE.finditer(question) if not m.group(0).isdigit()]
    unique = list(dict.fromkeys(f for f in found if len(f) >= min_chars))
    unique.sort(key=lambda s: -len(s))
    return [re.escape(s) for s in unique[:limit]]


def entity_spans(text: str, *, cased: bool | None = None) -> list[str]:
    """Capitalized multi-word spans and quoted names in ``text``, in order, deduplicated.

    A span starts and ends with a capitalized word (or a number), may hold short
    joining words ("University of the Arts"), stays within one line, and is
    dropped when it is a single stopword ("The"), an all-capitals heading of
    several words, a calendar date, or a single word opening the text (a
    sentence's capital, not a name's); a field label before a colon
    ("Assignee:") and leading stopwords ("The") are cut off. A text
    without capitals gives its :func:`~.text.word_runs` instead (``cased``: whether
    the document ``text`` comes from has capitals, when ``text`` is a piece of it).
    """
    spans = [m.group(1).strip() for m in _QUOTED.finditer(text)]
    if caseless(text) if cased is None else not cased:
        return list(dict.fromkeys([*spans, *word_runs(text)]))
    for m in _SPAN.finditer(text):
        parts = m.group(0).rstrip(".").split()
        if text[m.end() : m.end() + 1] == ":":  # a field label ("Assignee:") is no name
            parts = parts[:-1]
        if len(parts) > 1 and all(p.isupper() or p.isdigit() for p in parts):
            continue  # an all-capitals heading ("PATENT REGISTRY"), not a name
        while parts and parts[-1].lower() in NAME_CONNECTORS:
            parts.pop()
        if parts and parts[-1].endswith(_POSSESSIVE):  # "Paul Verhoeven's": Paul Verhoeven
            parts[-1] = parts[-1][: -len(_POSSESSIVE[0])]
        before = text[: m.start()].rstrip(" \t")
        opening = not before or before[-1] in "\n.!?"
        while parts and parts[0].lower() in STOPWORDS:
            parts.pop(0)
            opening = False
        if not parts:
            continue
        if len(parts) == 1 and opening:
            continue  # one capitalized word opening the sentence or line: "Revenue", "Career"
        span = " ".join(parts)
        if len(span) < 3 or span.isdigit() or _DATE.fullmatch(span):
            continue
        spans.append(span)
    return list(dict.fromkeys(spans))


def names_in(text: str, *, cased: bool | None = None) -> set[str]:
    """The names and codes ``text`` holds, lowercased: its entity spans and code-like
    tokens ("GR-2012-012715", "VM-710"); ``cased`` as for :func:`entity_spans`."""
    return {s.lower() for s in entity_spans(text, cased=cased)} | {
        m.group(0).lower() for m in _CODE.finditer(text)
    }


def linked_titles(
    text: str,
    titles: Iterable[str],
    own_title: str = "",
    norms: Mapping[str, str] | None = None,
) -> list[str]:
    """The ``titles`` that occur in ``text`` on word boundaries (case-insensitive), but its
    own (``norms``: each title lowercased and stripped, when the caller has them)."""
    lower = text.lower()
    own = _norm(own_title)
    norm = norms.__getitem__ if norms is not None else _norm
    # the substring test first (in C): most titles are not in the text at all
    return [t for t in titles if (n := norm(t)) in lower and n != own and contains_phrase(lower, t)]


def residual_words(
    question: str,
    covered: Iterable[str],
    limit: int = DEFAULT_CONSTANTS.residual_words,
    seen: frozenset[str] = frozenset(),
) -> list[str]:
    """Question content words not in ``covered`` texts (nor in ``seen``, content words
    already known covered), in question order, at most ``limit``."""
    return list(_residual(question, tuple(covered), limit, seen))


def _residual(
    question: str, covered: tuple[str, ...], limit: int, seen: frozenset[str]
) -> tuple[str, ...]:
    known = set(seen)
    for text in covered:
        known |= content_words(text)
    out: list[str] = []
    for w in re.findall(r"[^\W_]+", question):
        lw = w.lower()
        if lw in known or lw in STOPWORDS or len(lw) < 2 or lw in (o.lower() for o in out):
            continue
        out.append(w)
    return tuple(out[:limit])


@dataclass(frozen=True, slots=True)
class _HeadsOf:
    """The heads (:func:`heads_of`) of the open titles an anchor reads, as a set
    answers ``in``: titles of the anchor's own document or with its own normal form
    left out, without building the set for every anchor."""

    owners: Mapping[str, list[tuple[str, str]]]
    doc_id: str
    title_norm: str

    def __contains__(self, head: object) -> bool:
        found = self.owners.get(head) if isinstance(head, str) else None
        return found is not None and any(
            d != self.doc_id and n != self.title_norm for d, n in found
        )


def heads_of(title: str) -> tuple[str, ...]:
    """Lowercased leading word runs (two words or more) of ``title``: the names it opens
    with ("Vratain Microsystems" of "Vratain Microsystems Annual Report 2019")."""
    parts = title.lower().split()
    return tuple(" ".join(parts[:n]) for n in range(2, len(parts)))


def _norm(title: str) -> str:
    return title.lower().strip()


def _words(text: str) -> frozenset[str]:
    """Content words of a short text (a phrase, a title, the question)."""
    return frozenset(content_words(text))


def held_words_of(title: str, text: str, path: tuple[str, ...]) -> frozenset[str]:
    """Content words of an anchor and the chain that led to it."""
    return frozenset(content_words(" ".join([title, text, *path])))


def _sentence_facts(text: str, spans: SpansOf = entity_spans) -> SentenceFacts:
    """Per sentence of ``text``: (lowercased, content words, candidate spans)."""
    sents, sent_words = sentence_words(text)
    cased = not caseless(text)
    return tuple(
        (sent.lower(), w, tuple(spans(sent, cased=cased)))
        for sent, w in zip(sents, sent_words, strict=True)
    )


def sentence_tokens(sent_lower: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The words of a lowercased sentence and the :func:`stem` of each, in order."""
    tokens = tuple(words(sent_lower))
    return tokens, tuple(stem(w) for w in tokens)


def cued_spans(
    sent_lower: str,
    spans: Sequence[str],
    relation: frozenset[str],
    before: int = DEFAULT_CONSTANTS.cue_before,
    after: int = DEFAULT_CONSTANTS.cue_after,
    tokens_of: Callable[[str], tuple[tuple[str, ...], tuple[str, ...]]] | None = None,
) -> dict[str, frozenset[str]]:
    """The ``spans`` of a sentence (lowercased) that a relation word stands beside, each
    with the stems that cue it: a word whose :func:`stem` is in ``relation`` (the stems
    of what the question still asks) at most ``before`` words before the span or
    ``after`` after it ("directed by Tim Burton", "born in the city of Hiroshima";
    "Tim Burton directed"; the constants ``cue_before`` and ``cue_after``).

    "Big Eyes is a 2014 film directed by Tim Burton, written by Scott Alexander and
    starring Amy Adams", asked for Big Eyes' director: Tim Burton, not Amy Adams.
    ``tokens_of``: a memo of :func:`sentence_tokens`.
    """
    of = tokens_of or sentence_tokens
    tokens, stems = of(sent_lower)
    at = [i for i, s in enumerate(stems) if s in relation]
    if not at:
        return {}
    out: dict[str, frozenset[str]] = {}
    for span in spans:
        part = of(span.lower())[0]
        n = len(part)
        if not n:
            continue
        for start in range(len(tokens) - n + 1):
            if tokens[start : start + n] != part:
                continue
            end = start + n - 1
            near = [i for i in at if 0 < start - i <= before or 0 < i - end <= after]
            if near:
                out[span.lower()] = frozenset(stems[i] for i in near)
                break
    return out


def bridge_queries(
    question: str,
    anchors: Sequence[Anchor],
    known_titles: Mapping[str, str],
    *,
    exclude_docs: Iterable[str] = (),
    asked: Iterable[str] = (),
    limit: int = int(DEFAULT_CONTROLS["bridges_per_hop"]),
    constants: Constants = DEFAULT_CONSTANTS,
    spans_of: SpansOf = entity_spans,
    reads: BridgeReads | None = None,
) -> list[Bridge]:
    """Follow-up queries from ``anchors``, best first.

    Args:
        question: the user's question.
        anchors: retained chunks to read bridges from, most trusted first.
        known_titles: title -> doc id of documents seen as candidates so far
            (a title an anchor mentions is a strong bridge).
        exclude_docs: documents already retained (their titles are not bridges).
        asked: queries or phrases already searched (not repeated).
        limit: the most bridges returned.
        constants: the policy's constants: how a phrase's score adds up (a sentence's
            question and resolved words, the phrase that led to the anchor, a relation
            cue, a known title's head, repetitions, its length; :mod:`.constants`).
        spans_of: a sentence's candidate phrases (default :func:`entity_spans`; the
            planner passes its span sources': :mod:`.sources`).
        reads: how anchor text and titles are read (a session's memo, whose span
            source must be ``spans_of``'s); default :class:`DirectReads` of ``spans_of``.

    Returns:
        Bridges whose phrase is not already in the question; each query is the
        phrase plus the question's words that neither the anchor nor the phrase covers.
    """
    c = constants
    read = reads if reads is not None else DirectReads(spans_of)
    q_lower = question.lower()
    q_words = _words(question)
    chain = links(question)
    done_docs = set(exclude_docs)
    done = {a.lower().strip() for a in asked}
    # each known title's heads and normal form read once per call (every anchor reads them)
    heads_map = read.heads_map(known_titles)
    norms = {t: _norm(t) for t in known_titles}
    open_titles = [(t, d, norms[t]) for t, d in known_titles.items() if d not in done_docs]
    # head -> (doc id, normal form) of each open title it opens: an anchor's heads are
    # those of the titles neither its document's nor its own (see ``heads_for``)
    owners: dict[str, list[tuple[str, str]]] = {}
    for t, d, n in open_titles:
        for head in heads_map[t]:
            owners.setdefault(head, []).append((d, n))
    best: dict[str, Bridge] = {}
    for anchor in anchors:
        title_lower = _norm(anchor.title)
        candidates: dict[str, tuple[str, float]] = {}
        cues: dict[str, frozenset[str]] = {}  # name -> the relation stems introducing it
        titles = [t for t, d, n in open_titles if d != anchor.doc_id and n != title_lower]
        linked = {t.lower(): t for t in linked_titles(anchor.text, titles, anchor.title, norms)}
        for key, title in linked.items():
            candidates[key] = (title, 1.0)
        heads = _HeadsOf(owners, anchor.doc_id, title_lower)
        text_lower = anchor.text.lower()
        held_words = read.held_words(anchor.title, anchor.text, anchor.path)
        # in a chain read from the question's form, an anchor reached through d bridges
        # resolves link d (its sentence stating that link names the bridge), and the
        # follow-up asks link d + 1
        depth = min(len(anchor.path) if anchor.clue is None else anchor.clue, len(chain) - 1)
        focus = chain[min(depth + 1, len(chain) - 1)] if len(chain) > 1 else ""
        solved_words = _words(" ".join(link_words(chain[depth]))) if focus else frozenset()
        own: set[str] = set()  # the anchor's own name where a sentence links it onward
        # what the question still asks of this anchor: its words the anchor's name lacks
        relation = frozenset(stem(w) for w in q_words - _words(anchor.title))
        for sent_lower, sent_words, spans in read.facts(anchor.text):
            solved = len(sent_words & solved_words)
            overlap = c.question_word_gain * len(sent_words & q_words) + c.solved_word_gain * solved
            beside = bool(anchor.via) and contains_phrase(sent_lower, anchor.via)
            if beside:
                # beside the phrase that led here: the next link (shared among the names
                # the sentence lists: one of five names in a header line says little)
                others = sum(1 for x in spans if x.lower() != anchor.via.lower())
                overlap += c.beside_via_gain / max(others, 1)
            states = anchor.clue is not None and 2 * solved >= len(solved_words) > 0
            if focus and (beside or states):
                # "patent B relies on patent A", found through A, or "the X Expo is held
                # in A" answering that clue: the document's own name is the unknown its
                # link resolved, and the chain's next link is whatever names it
                own.update(
                    x.lower()
                    for x in spans
                    if x.lower() != anchor.via.lower() and _words(x) <= _words(anchor.title)
                )
            cued = cued_spans(sent_lower, spans, relation, c.cue_before, c.cue_after, read.tokens)
            for key, by in cued.items():
                cues[key] = cues.get(key, frozenset()) | by
            for span in spans:
                key = span.lower()
                gain = overlap + (c.cue_bonus if key in cued else 0.0)
                if key in candidates:
                    candidates[key] = (candidates[key][0], candidates[key][1] + gain)
                    continue
                # a span that opens a known document's title ("Vratain Microsystems" of
                # "Vratain Microsystems Annual Report 2019") names that document; one the
                # chunk repeats is what it is about
                named = c.title_head_gain if key in heads else 0.0
                repeats = c.repeat_gain * min(text_lower.count(key) - 1, c.repeat_cap)
                candidates[key] = (span, named + repeats + gain)
        for key, (phrase, bonus) in candidates.items():
            named_words = _words(phrase)
            if (
                not named_words
                or key in done
                or any(contains_phrase(key, p) for p in anchor.passed)
            ):
                continue  # "Patent SY-2005-965421" is the patent the chain came through
            if contains_phrase(q_lower, phrase):
                continue
            if named_words <= q_words or (key not in own and named_words <= _words(anchor.title)):
                continue
            kind = "title" if key in linked else "entity"
            length = c.name_word_gain * min(len(named_words), c.name_word_cap)
            score = anchor.weight * (1.0 + bonus + length)
            if key not in best or best[key].score < score:
                asks = " ".join(link_words(focus)) if focus else question
                rest = residual_words(asks, [phrase], c.residual_words, held_words)
                # the relation that introduced the name is resolved by it ("directed by
                # Tim Burton" answers "director"): the follow-up asks the rest
                used = cues.get(key, frozenset())
                rest = [w for w in rest if stem(w.lower()) not in used]
                query = " ".join([phrase, *rest])
                best[key] = Bridge(query, phrase, kind, anchor.chunk_id, score)
    ranked = sorted(best.values(), key=lambda b: (-b.score, b.phrase))
    return ranked[:limit]
