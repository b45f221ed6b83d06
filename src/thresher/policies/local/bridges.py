"""Bridge extraction: what retained chunks name that the question does not (pure).

In a multi-hop question the second document is named by the first, not by the
question ("the association which published *Journal X*": Journal X's page
names the American Psychological Association). So the follow-up queries come
from the retained chunks (:class:`Anchor`): titles of other documents they
mention, and the candidate phrases of their sentences absent from the question
(by default capitalized entity spans and quoted names,
:func:`~thresher.policies.local.entities.entity_spans`; the planner passes its
span sources', :mod:`.sources`). :func:`bridge_queries` scores each phrase and
makes it a follow-up query (:class:`Bridge`), reading anchor text and titles
through a :class:`~thresher.policies.local.reads.BridgeReads`. The question's
own rare tokens become grep patterns instead (:mod:`.entities`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

from thresher.policies.local.constants import DEFAULT_CONSTANTS, DEFAULT_CONTROLS, Constants
from thresher.policies.local.decompose import link_words, links
from thresher.policies.local.entities import entity_spans
from thresher.policies.local.reads import BridgeReads, DirectReads, SpansOf, ask_words
from thresher.policies.local.text import (
    contains_folded,
    contains_phrase,
    content_words,
    fold,
)

__all__ = [
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

    kind: ``title`` (another document's title the source mentions) or ``entity``.
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
    """The heads (:func:`~.reads.heads_of`) of the open titles an anchor reads, as a set
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
        spans_of: a sentence's candidate phrases (default
            :func:`~.entities.entity_spans`; the planner passes its span sources':
            :mod:`.sources`).
        reads: how anchor text and titles are read (a session's memo, whose span
            source must be ``spans_of``'s); default :class:`~.reads.DirectReads` of
            ``spans_of``.

    Returns:
        Bridges whose phrase is not already in the question; each query is the
        phrase plus the question's words that neither the anchor nor the phrase covers.
    """
    c = constants
    read = reads if reads is not None else DirectReads(spans_of)
    q_folded = fold(question.lower())
    q_words = read.words(question)
    chain = links(question)
    done = {a.lower().strip() for a in asked}
    done_docs = set(exclude_docs)  # their titles are not open
    owners, norms = read.title_index(known_titles)
    best: dict[str, Bridge] = {}
    for anchor in anchors:
        title_lower = _norm(anchor.title)
        title_words = read.words(anchor.title)
        candidates: dict[str, tuple[str, float]] = {}
        cues: dict[str, frozenset[str]] = {}  # name -> the relation stems introducing it
        text_lower = anchor.text.lower()
        # the open titles the anchor names (:func:`linked_titles`, inlined: whether a text
        # names a title is kept per text, and the text is folded once)
        hits = read.title_hits(anchor.text)
        text_folded: str | None = None
        linked: dict[str, str] = {}
        for t, d in known_titles.items():
            if d in done_docs or d == anchor.doc_id:
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
        for key, title in linked.items():
            candidates[key] = (title, 1.0)
        heads = _HeadsOf(owners, known_titles, done_docs, anchor.doc_id, title_lower)
        held_words = read.held_words(anchor.title, anchor.text, anchor.path)
        # in a chain read from the question's form, an anchor reached through d bridges
        # resolves link d (its sentence stating that link names the bridge), and the
        # follow-up asks link d + 1
        depth = min(len(anchor.path) if anchor.clue is None else anchor.clue, len(chain) - 1)
        focus = chain[min(depth + 1, len(chain) - 1)] if len(chain) > 1 else ""
        solved_words = read.words(" ".join(link_words(chain[depth]))) if focus else frozenset()
        # the words a follow-up from this anchor may add (see :func:`residual_words`)
        asking = read.asking(" ".join(link_words(focus)) if focus else question)
        own: set[str] = set()  # the anchor's own name where a sentence links it onward
        # what the question still asks of this anchor: its words the anchor's name lacks
        relation = read.relation(q_words, title_words)
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
                    if x.lower() != anchor.via.lower() and read.words(x) <= title_words
                )
            # no name, or nothing the question still asks: no cue
            # (:func:`~.reads.cued_spans`)
            cued = (
                read.cued(sent_lower, spans, relation, c.cue_before, c.cue_after)
                if spans and relation
                else {}
            )
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
            named_words = read.words(phrase)
            if (
                not named_words
                or key in done
                or (anchor.passed and any(contains_phrase(key, p) for p in anchor.passed))
            ):
                continue  # "Patent SY-2005-965421" is the patent the chain came through
            if contains_folded(q_folded, phrase):
                continue
            if named_words <= q_words or (key not in own and named_words <= title_words):
                continue
            kind = "title" if key in linked else "entity"
            length = c.name_word_gain * min(len(named_words), c.name_word_cap)
            score = anchor.weight * (1.0 + bonus + length)
            if key not in best or best[key].score < score:
                # the question's words neither the chain nor the phrase holds
                # (:func:`residual_words`, its candidates read once per anchor)
                rest = [x for x in asking if x[1] not in held_words and x[1] not in named_words][
                    : c.residual_words
                ]
                # the relation that introduced the name is resolved by it ("directed by
                # Tim Burton" answers "director"): the follow-up asks the rest
                used = cues.get(key, frozenset())
                query = " ".join([phrase, *(w for w, _, s in rest if s not in used)])
                best[key] = Bridge(query, phrase, kind, anchor.chunk_id, score)
    ranked = sorted(best.values(), key=lambda b: (-b.score, b.phrase))
    return ranked[:limit]
