"""Bridge extraction: what retained chunks name that the question does not (pure).

In a multi-hop question the second document is named by the first, not by the
question ("the association which published *Journal X*": Journal X's page
names the American Psychological Association). So the follow-up queries come
from the retained chunks (:class:`Anchor`): titles of other documents they
mention, and the candidate phrases of their sentences absent from the question
(by default capitalized entity spans and quoted names,
:func:`~thresher.policies.local.entities.entity_spans`; the planner passes its
span sources', :mod:`.sources`). :func:`bridge_queries` scores each phrase and
makes it a follow-up query (:class:`Bridge`), reading anchor text, titles and
the question through the session's :class:`~thresher.policies.local.memo.TextMemo`
(a fresh one when none is given). The question's own rare tokens become grep
patterns instead (:mod:`.entities`).

:func:`bridge_queries` is made of the steps it takes per anchor: the open titles
the anchor names (:func:`_titles_named`), the link of the question's chain it
resolves (:func:`_chain_link`), its sentences read for phrases and scored
(:func:`_read_sentences`: :func:`_sentence_gain`, :func:`_own_names`,
:func:`_add_spans`), and each phrase that leads somewhere new (:func:`_is_lead`)
made a follow-up query (:func:`_follow_up`) when it beats the same phrase read in
an earlier anchor (:func:`_keep_best`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field

from thresher.policies.local.clues import link_words, links
from thresher.policies.local.constants import DEFAULT_CONSTANTS, DEFAULT_CONTROLS, Constants
from thresher.policies.local.memo import AskWords, TextMemo, TitleIndex, ask_words
from thresher.policies.local.sources import CapitalSpans, NamedSpans, SpanSource
from thresher.policies.local.text import (
    contains_folded,
    contains_phrase,
    content_words,
    fold,
)

__all__ = [
    "ENTITY_SPANS",
    "Anchor",
    "Bridge",
    "linked_titles",
    "residual_words",
    "bridge_queries",
]


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
    #: policy knows it (:func:`~thresher.policies.local.clues.clue_docs`); else the
    #: clue is read from how many bridges led here (``path``)
    clue: int | None = None
    #: names (lowercased) the chain came through to this chunk: known already, none is
    #: the next link ("We will launch the Zagraith DZ-170 at the Pigreis Drone Expo",
    #: reached through the Zagraith DZ-170, goes on from the expo)
    passed: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class Bridge:
    """A follow-up query: ``query`` to search, found in ``source`` (a chunk id).

    kind: ``title`` (another document's title the source mentions), ``entity``, or
    ``ref`` (a documentation cross-reference the source makes, followed by a grep of
    where it is defined: :mod:`.references`; ``query`` is then the reference), or
    ``link`` (a link to another page the source makes, followed by reading that page:
    :mod:`.pagelinks`; ``query`` is then the page's document id).
    phrase: the bridging phrase itself. score: its priority (higher first).
    """

    query: str
    phrase: str
    kind: str
    source: str
    score: float


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
    known = set(seen)
    for text in covered:
        known |= content_words(text)
    return [w for w, lw, _ in ask_words(question) if lw not in known][:limit]


@dataclass(frozen=True, slots=True)
class _HeadsOf:
    """The heads (:func:`~.memo.heads_of`) of the open titles an anchor reads, as a set
    answers ``in``: titles of the anchor's own document or with its own normal form
    left out, without building the set for every anchor."""

    owners: Mapping[str, Sequence[str]]  # head -> titles (open or not)
    titles: Mapping[str, str]  # known title -> doc id
    done_docs: AbstractSet[str]  # documents whose titles are not open
    doc_id: str
    title_norm: str

    def __contains__(self, head: object) -> bool:
        found = self.owners.get(head) if isinstance(head, str) else None
        if not found:
            return False
        for t in found:
            d = self.titles.get(t)
            if (
                d is not None
                and d not in self.done_docs
                and d != self.doc_id
                and _norm(t) != self.title_norm
            ):
                return True
        return False


def _norm(title: str) -> str:
    return title.lower().strip()


#: the span source :func:`bridge_queries` reads by default (:func:`~.entities.entity_spans`)
ENTITY_SPANS = CapitalSpans()


def bridge_queries(
    question: str,
    anchors: Sequence[Anchor],
    known_titles: Mapping[str, str],
    *,
    exclude_docs: Iterable[str] = (),
    asked: Iterable[str] = (),
    limit: int = int(DEFAULT_CONTROLS["bridges_per_hop"]),
    constants: Constants = DEFAULT_CONSTANTS,
    spans: SpanSource = ENTITY_SPANS,
    named: NamedSpans | None = None,
    memo: TextMemo | None = None,
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
        spans: where a sentence's candidate phrases come from (default
            :data:`ENTITY_SPANS`; the planner passes its span sources':
            :mod:`.sources`).
        named: names of known documents (other than titles) the anchors hold, read as
            candidate phrases after ``spans``' (as a :class:`~.sources.SpanUnion`).
        memo: the session's memo of what is read of text (a fresh one when None: the
            same bridges either way).

    Returns:
        Bridges whose phrase is not already in the question; each query is the
        phrase plus the question's words that neither the anchor nor the phrase covers.
    """
    memo = memo if memo is not None else TextMemo()
    call = _Call(
        question,
        fold(question.lower()),
        memo.short_words(question),
        links(question),
        {a.lower().strip() for a in asked},
        set(exclude_docs),  # their titles are not open
        known_titles,
        memo.title_index(known_titles),
        constants,
        memo,
        spans,
        named,
    )
    best: dict[str, Bridge] = {}
    for anchor in anchors:
        _keep_best(call, anchor, _read_sentences(call, anchor), best)
    ranked = sorted(best.values(), key=lambda b: (-b.score, b.phrase))
    return ranked[:limit]


@dataclass(frozen=True, slots=True)
class _Call:
    """What every anchor of one :func:`bridge_queries` call is read against."""

    question: str
    q_folded: str  # the question lowercased and folded
    q_words: frozenset[str]  # its content words
    chain: list[str]  # its chain's links (:func:`~.clues.links`)
    asked: set[str]  # queries and phrases searched, lowercased and stripped
    done_docs: set[str]  # documents whose titles are not open
    known_titles: Mapping[str, str]  # title -> doc id
    titles: TitleIndex  # heads and normal forms of the known titles
    constants: Constants
    memo: TextMemo
    spans: SpanSource
    named: NamedSpans | None


@dataclass(frozen=True, slots=True)
class _Link:
    """The link of the question's chain an anchor resolves, and what its follow-up asks."""

    focus: str  # the chain's next link ("" when the question states no chain)
    solved: frozenset[str]  # content words of the link the anchor resolves
    asking: AskWords  # the words a follow-up may add (:func:`residual_words`)


@dataclass(slots=True)
class _Phrases:
    """An anchor's candidate phrases, as its sentences are read."""

    link: _Link
    title_words: frozenset[str]  # content words of the anchor's title
    linked: dict[str, str]  # open title the anchor names (lowercased) -> as known
    #: phrase (lowercased) -> (as written, its bonus so far); the linked titles first
    found: dict[str, tuple[str, float]]
    #: phrase (lowercased) -> the relation stems introducing it
    cues: dict[str, frozenset[str]] = field(default_factory=dict)
    #: the anchor's own name where a sentence links it onward
    own: set[str] = field(default_factory=set)


def _titles_named(call: _Call, anchor: Anchor, text_lower: str, title_lower: str) -> dict[str, str]:
    """The open titles ``anchor`` names, lowercased -> as known (:func:`linked_titles`,
    inlined: whether a text names a title is kept per text in the memo, and the text
    is folded once)."""
    hits = call.memo.title_hits(anchor.text)
    norms = call.titles.norms
    text_folded: str | None = None
    linked: dict[str, str] = {}
    for t, d in call.known_titles.items():
        if d in call.done_docs or d == anchor.doc_id:
            continue
        hit = hits.get(t)
        if hit is None:
            hit = False
            if norms[t] in text_lower:
                if text_folded is None:
                    text_folded = fold(text_lower)
                hit = contains_folded(text_folded, t)
            hits[t] = hit
        if hit and norms[t] != title_lower:
            linked[t.lower()] = t
    return linked


def _chain_link(call: _Call, anchor: Anchor) -> _Link:
    """In a chain read from the question's form, an anchor reached through d bridges
    resolves link d (its sentence stating that link names the bridge), and the
    follow-up asks link d + 1; else the follow-up asks the question."""
    chain, memo = call.chain, call.memo
    depth = min(len(anchor.path) if anchor.clue is None else anchor.clue, len(chain) - 1)
    focus = chain[min(depth + 1, len(chain) - 1)] if len(chain) > 1 else ""
    solved = memo.short_words(" ".join(link_words(chain[depth]))) if focus else frozenset()
    asking = memo.ask_words(" ".join(link_words(focus)) if focus else call.question)
    return _Link(focus, solved, asking)


def _read_sentences(call: _Call, anchor: Anchor) -> _Phrases:
    """The candidate phrases of ``anchor``: the open titles it names, then the spans of
    its sentences, each with its bonus summed over the sentences that state it."""
    memo = call.memo
    text_lower = anchor.text.lower()
    title_lower = _norm(anchor.title)
    title_words = memo.short_words(anchor.title)
    linked = _titles_named(call, anchor, text_lower, title_lower)
    found = {key: (title, 1.0) for key, title in linked.items()}
    phrases = _Phrases(_chain_link(call, anchor), title_words, linked, found)
    heads = _HeadsOf(
        call.titles.owners, call.known_titles, call.done_docs, anchor.doc_id, title_lower
    )
    # what the question still asks of this anchor: its words the anchor's name lacks
    relation = memo.relation(call.q_words, title_words)
    c = call.constants
    for sent_lower, sent_words, spans in memo.facts(anchor.text, call.spans, call.named):
        overlap, onward = _sentence_gain(call, anchor, phrases.link, sent_lower, sent_words, spans)
        if onward:
            phrases.own.update(_own_names(memo, anchor, spans, title_words))
        # no name, or nothing the question still asks: no cue (:func:`~.memo.cued_spans`)
        cued = (
            memo.cued(sent_lower, spans, relation, c.cue_before, c.cue_after)
            if spans and relation
            else {}
        )
        cues = phrases.cues
        for key, by in cued.items():
            cues[key] = cues.get(key, frozenset()) | by
        _add_spans(c, phrases.found, spans, overlap, cued, heads, text_lower)
    return phrases


def _sentence_gain(
    call: _Call,
    anchor: Anchor,
    link: _Link,
    sent_lower: str,
    sent_words: frozenset[str],
    spans: tuple[str, ...],
) -> tuple[float, bool]:
    """What a sentence adds to each phrase it states (its question and resolved words,
    standing beside the phrase that led to the anchor), and whether it links the
    anchor onward (beside that phrase, or stating the clue the anchor answers)."""
    c = call.constants
    solved = len(sent_words & link.solved)
    overlap = c.question_word_gain * len(sent_words & call.q_words) + c.solved_word_gain * solved
    beside = bool(anchor.via) and contains_phrase(sent_lower, anchor.via)
    if beside:
        # beside the phrase that led here: the next link (shared among the names
        # the sentence lists: one of five names in a header line says little)
        others = sum(1 for x in spans if x.lower() != anchor.via.lower())
        overlap += c.beside_via_gain / max(others, 1)
    states = anchor.clue is not None and 2 * solved >= len(link.solved) > 0
    return overlap, bool(link.focus) and (beside or states)


def _own_names(
    memo: TextMemo, anchor: Anchor, spans: tuple[str, ...], title_words: frozenset[str]
) -> Iterable[str]:
    """The spans of a sentence linking the anchor onward that name the anchor itself:
    "patent B relies on patent A", found through A, or "the X Expo is held in A"
    answering that clue: the document's own name is the unknown its link resolved, and
    the chain's next link is whatever names it."""
    via = anchor.via.lower()
    return (x.lower() for x in spans if x.lower() != via and memo.short_words(x) <= title_words)


def _add_spans(
    c: Constants,
    found: dict[str, tuple[str, float]],
    spans: tuple[str, ...],
    overlap: float,
    cued: Mapping[str, frozenset[str]],
    heads: _HeadsOf,
    text_lower: str,
) -> None:
    """Add a sentence's ``spans`` to the anchor's phrases ``found``: each gains the
    sentence's ``overlap`` and a cue's bonus; a new one starts with what it names (a
    known title's head) and how often the anchor repeats it."""
    for span in spans:
        key = span.lower()
        gain = overlap + (c.cue_bonus if key in cued else 0.0)
        if key in found:
            found[key] = (found[key][0], found[key][1] + gain)
            continue
        # a span that opens a known document's title ("Vratain Microsystems" of
        # "Vratain Microsystems Annual Report 2019") names that document; one the
        # chunk repeats is what it is about
        named = c.title_head_gain if key in heads else 0.0
        repeats = c.repeat_gain * min(text_lower.count(key) - 1, c.repeat_cap)
        found[key] = (span, named + repeats + gain)


def _is_lead(
    call: _Call, anchor: Anchor, phrases: _Phrases, key: str, phrase: str, words: frozenset[str]
) -> bool:
    """Whether ``phrase`` (``key`` lowercased, ``words`` its content words) may lead on:
    not asked yet, not a name the chain came through, not in the question, and not
    the anchor's own name unless a sentence links it onward."""
    if (
        not words
        or key in call.asked
        or (anchor.passed and any(contains_phrase(key, p) for p in anchor.passed))
    ):
        return False  # "Patent SY-2005-965421" is the patent the chain came through
    if contains_folded(call.q_folded, phrase):
        return False
    return not (words <= call.q_words or (key not in phrases.own and words <= phrases.title_words))


def _follow_up(
    c: Constants,
    phrase: str,
    asking: AskWords,
    held: frozenset[str],
    words: frozenset[str],
    used: frozenset[str],
) -> str:
    """The follow-up query of ``phrase``: it and the question's words neither the chain
    (``held``) nor the phrase (``words``) holds (:func:`residual_words`, its candidates
    ``asking`` read once per anchor), less those of the relation that introduced the
    name (``used``: "directed by Tim Burton" answers "director"; the follow-up asks
    the rest)."""
    rest = [x for x in asking if x[1] not in held and x[1] not in words][: c.residual_words]
    return " ".join([phrase, *(w for w, _, s in rest if s not in used)])


def _keep_best(call: _Call, anchor: Anchor, phrases: _Phrases, best: dict[str, Bridge]) -> None:
    """Score each of the anchor's phrases that may lead on, and keep it in ``best``
    (phrase -> bridge) when no earlier anchor read it with a score as high."""
    c, memo = call.constants, call.memo
    held = memo.held_words(anchor.title, anchor.text, anchor.path)
    for key, (phrase, bonus) in phrases.found.items():
        words = memo.short_words(phrase)
        if not _is_lead(call, anchor, phrases, key, phrase, words):
            continue
        kind = "title" if key in phrases.linked else "entity"
        length = c.name_word_gain * min(len(words), c.name_word_cap)
        score = anchor.weight * (1.0 + bonus + length)
        if key not in best or best[key].score < score:
            used = phrases.cues.get(key, frozenset())
            query = _follow_up(c, phrase, phrases.link.asking, held, words, used)
            best[key] = Bridge(query, phrase, kind, anchor.chunk_id, score)
