"""The chain an episode follows: which follow-up each chunk came from, and what led there.

Every follow-up query is a :class:`~thresher.policies.local.bridges.Bridge`
read in a source chunk. A chunk found by a follow-up *continues the chain*
when it holds that bridge's phrase; its chain links are then the source
chunk's document, that one's own source, and so on. The policy uses this to
read the next hop from the chain's leading edge, to drop question words the
chain already holds from the next query, to keep a kept document's links in
view, and to place them beside it in the answer. Pure: no store, no state of
its own beyond the maps it is given.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import NamedTuple

from thresher.policies.local.bridges import Bridge
from thresher.policies.local.candidate import Candidate
from thresher.policies.local.constants import DEFAULT_CONSTANTS, Constants
from thresher.policies.local.decompose import PLACEHOLDER, link_words, placeholders
from thresher.policies.local.text import contains_folded, contains_phrase, content_words, words

__all__ = ["Chain", "CluePick", "chain_order", "by_link", "clue_docs", "how_stated"]


class Chain:
    """Follow-up queries and the chunks they came from, for one episode.

    Args:
        via: follow-up query (stripped) -> the bridge it was made from.
        cands: chunk id -> the candidate record of every chunk seen.
        pools: query (stripped) -> chunk id -> candidate, every search's scored list:
            a document first found otherwise and listed again near the top of a
            follow-up that holds its phrase is linked through that follow-up too.
        constants: the policy's constants: ``chain_depth`` (the most links followed
            back from one chunk) and ``refound_rank`` (how near the top of a
            follow-up a document is linked again).
    """

    def __init__(
        self,
        via: Mapping[str, Bridge],
        cands: Mapping[str, Candidate],
        pools: Mapping[str, Mapping[str, Candidate]] | None = None,
        constants: Constants = DEFAULT_CONSTANTS,
    ) -> None:
        self.via = via
        self.cands = cands
        self.pools = pools or {}
        self.depth = constants.chain_depth
        self.refound_rank = constants.refound_rank

    def bridge_of(self, cand: Candidate) -> Bridge | None:
        """The bridge of the follow-up that found ``cand`` (None for the question's search)."""
        return self.via.get(cand.subquery.strip())

    def continues(self, cand: Candidate) -> bool:
        """Whether ``cand`` holds the phrase of the follow-up that found it."""
        bridge = self.bridge_of(cand)
        return bridge is not None and contains_folded(cand.folded, bridge.phrase)

    def path(self, query: str) -> tuple[str, ...]:
        """Texts of the chunks whose bridges led to a follow-up ``query``, nearest first."""
        out: list[str] = []
        bridge = self.via.get(query.strip())
        while bridge is not None and len(out) < self.depth:
            source = self.cands.get(bridge.source)
            if source is None:
                break
            out.append(source.chunk.text)
            bridge = self.via.get(source.subquery.strip())
        return tuple(out)

    def links(
        self, first: Candidate | None, refound: Mapping[str, Candidate] | None = None
    ) -> list[str]:
        """Documents that led to ``first``'s document, nearest first: each one's chunk
        named the phrase of the follow-up that found the next, which holds it.
        ``refound``: :meth:`refound` of the chain as it is now, when the caller reads
        many documents' links at once (else each is looked up)."""
        if first is None:
            return []
        doc = first.chunk.doc_id
        if not self.continues(first):
            again = self._refound(doc) if refound is None else refound.get(doc)
            first = again or first
        out: list[str] = []
        while len(out) < self.depth and self.continues(first):
            bridge = self.bridge_of(first)
            source = self.cands.get(bridge.source) if bridge is not None else None
            if source is None or source.chunk.doc_id in out or source.chunk.doc_id == doc:
                break
            out.append(source.chunk.doc_id)
            first = source
        return out

    def refound(self) -> dict[str, Candidate]:
        """Each document's candidate :meth:`links` goes on from when the chunk it is asked
        about does not continue the chain (its first within a follow-up's
        ``refound_rank`` best that holds its bridge), read in one pass over the
        follow-ups: valid while the maps the chain reads do not change."""
        out: dict[str, Candidate] = {}
        for query in sorted(self.pools):
            if query not in self.via:
                continue
            for cand in self.pools[query].values():
                if cand.rank > self.refound_rank:
                    continue
                doc = cand.chunk.doc_id
                if doc not in out and self.continues(cand):
                    out[doc] = cand
        return out

    def _refound(self, doc: str) -> Candidate | None:
        """A follow-up's candidate of ``doc`` within its ``refound_rank`` best that holds
        its bridge."""
        for query in sorted(self.pools):
            if query not in self.via:
                continue
            for cand in self.pools[query].values():
                if (
                    cand.chunk.doc_id == doc
                    and cand.rank <= self.refound_rank
                    and self.continues(cand)
                ):
                    return cand
        return None


def chain_order(
    order: Sequence[str],
    keep: int,
    links: Callable[[str], list[str]],
    prob: Mapping[str, float] | None = None,
) -> list[str]:
    """``order`` with each of the best ``keep`` documents' chain links moved up right
    after it, and, after those, its best continuation: the first document of ``order``
    whose nearest chain link it is, when it does not push out of the best ``keep`` a
    document more likely to be evidence (``prob``: each document's probability; without
    it, continuations are not moved).

    A document found through a chain is justified by the links that named it, and a
    document the chain passed through by where it led: the answer keeps both beside
    it (the patent's inventor's welcome e-mail, and the company filing the e-mail's
    name found).
    """
    linked = {d: links(d) for d in order}  # each document's links read once
    nearest = {d: next(iter(ls), None) for d, ls in linked.items()}
    out: list[str] = []
    for doc in order[:keep]:
        if doc not in out:
            out.append(doc)
        for link in linked[doc]:
            if link in order and link not in out:
                out.append(link)
        child = next((d for d in order if nearest[d] == doc and d not in out), None)
        if child is None or prob is None:
            continue
        now = out + [d for d in order if d not in out]
        if now.index(child) >= keep > len(out):
            pushed = now[keep - 1]  # the document the continuation would push out
            if prob.get(child, 0.0) <= prob.get(pushed, 0.0):
                continue
        out.append(child)
    return out + [d for d in order if d not in out]


#: a document's sentences: (content words, names and codes the question lacks) each
Sentences = Sequence[tuple[frozenset[str], frozenset[str]]]


def by_link(
    clues: Sequence[str],
    order: Sequence[str],
    words: Mapping[str, set[str] | frozenset[str]],
    parent: Mapping[str, list[str]],
    keep: int,
    sentences: Mapping[str, Sentences] | None = None,
    titles: Mapping[str, str] | None = None,
    constants: Constants = DEFAULT_CONSTANTS,
) -> list[str]:
    """``order`` with, first, the best document for each clue of a clue chain
    (:func:`clue_docs`, same arguments); the rest follow in their order."""
    picks = clue_docs(clues, order, words, parent, keep, sentences, titles, constants)
    out = [p.doc for p in picks]
    return out + [d for d in order if d not in out]


class CluePick(NamedTuple):
    """The document :func:`clue_docs` takes for one clue of a clue chain."""

    clue: int  #: the clue's index (0-based)
    doc: str
    #: whether it clearly continues the chain from the previous pick: one sentence
    #: holds the name the previous pick states and more than half the clue's words
    #: (see ``_states``)
    linked: bool
    #: the names the chain came through up to this pick (each pick's stated name):
    #: known already, they are not the next link
    passed: frozenset[str] = frozenset()


def clue_docs(
    clues: Sequence[str],
    order: Sequence[str],
    words: Mapping[str, set[str] | frozenset[str]],
    parent: Mapping[str, list[str]],
    keep: int,
    sentences: Mapping[str, Sentences] | None = None,
    titles: Mapping[str, str] | None = None,
    constants: Constants = DEFAULT_CONSTANTS,
) -> list[CluePick]:
    """The best document for each clue of a clue chain that one answers, in clue
    order (a clue none answers is skipped).

    A question stated as linked clues needs one document per clue. For each clue
    in order, among the best ``keep`` × ``clue_pool_factor`` documents of those in
    ``words`` (and any further one found through the previous clue's document or
    sharing a name with it), the one with a sentence holding most of the clue's
    words (share × ``clue_words_weight``; the whole document's ``words`` when
    ``sentences`` lack it) takes the next place. A document continues the chain and
    counts more, by its strongest evidence of the link: when it holds the name the
    previous clue's document gives in its sentence stating that clue
    (+``link_stated``: the clue's unknown, less the names the chain came through to
    it; the names of each sentence on a tie; ``sentences`` of each document), else
    when its nearest chain link (``parent``) is the previous clue's document
    (+``link_parent``), else when it holds any name that document holds but those
    the chain came through (+``link_shared``); +``link_about`` more when the stated
    name is in its title (``titles``, lowercased) and the clue opens with the
    placeholder it stands for: the document is about the clue's subject.
    A pick needs share plus bonus of at least ``clue_min_score``; ties go to the
    better ranked. The numbers are the ``constants``' (:mod:`.constants`).

    On ``clue_words_weight``: at 1, a patent citing the stated code with 3 of the
    clue's 5 words (0.6 + 1.5) beat the e-mail stating the whole clue (1.0 + a
    weaker link); at 2 a document stating the whole clue wins unless another
    continues the chain clearly better.
    """
    c = constants
    sents = sentences or {}
    heads = titles or {}
    names = {d: frozenset().union(*(n for _, n in ss)) for d, ss in sents.items()}
    pool = [d for d in order if d in words]
    out: list[str] = []
    answered: list[int] = []
    linked: list[bool] = []
    came: list[frozenset[str]] = []
    asked: set[str] = set()  # the previous clue's words
    passed: frozenset[str] = frozenset()  # names the chain came through: not its unknown
    for n, clue in enumerate(clues):
        # split as the documents' words are: a code "SY-2015-438482" is sy, 2015, 438482
        want = content_words(" ".join(link_words(clue)))
        if not want:
            continue
        prev = out[-1] if out else None
        # the document stating a clue is about its subject: the page about the name
        # the previous clue resolved only when the clue opens with it ("[A] has ...",
        # not "The [B] is held every year in [A]")
        opens = placeholders(clue)[:1]
        about_prev = bool(answered and opens and opens[0] in placeholders(clues[answered[-1]]))
        shared: frozenset[str] = frozenset()
        stated: frozenset[str] = frozenset()
        if prev is not None:
            shared = names.get(prev, frozenset()) - passed
            ss = sents.get(prev, ())
            if ss and asked:
                # the sentences holding most of the previous clue's words: on a tie
                # ("X (born 1951) is from Sypouthair", "X was born in Vrastby in
                # 1951"), the names of each
                most = max(len(w & asked) for w, _ in ss)
                stated = frozenset().union(*(n for w, n in ss if len(w & asked) == most))
                stated -= passed

        scored = [
            (
                _share(want, words[d], sents.get(d, ()), stated),
                _bonus(
                    d,
                    prev,
                    parent,
                    names,
                    stated,
                    shared,
                    heads.get(d, "") if about_prev else "",
                    c,
                ),
                -i,
                d,
            )
            for i, d in enumerate(pool)
            if d not in out
            and (
                i < keep * c.clue_pool_factor
                or prev in parent.get(d, [])
                or shared & names.get(d, frozenset())
            )
        ]
        if not scored:
            break
        weight = c.clue_words_weight
        share, extra, _, doc = max(scored, key=lambda s: (weight * s[0] + s[1], s[2]))
        if share + extra >= c.clue_min_score:
            out.append(doc)
            answered.append(n)
            held = sents.get(doc, ())
            linked.append(_states(want, held, stated, prev, parent.get(doc, []), c))
            asked = want
            passed = passed | stated
            came.append(passed)
    return [CluePick(*p) for p in zip(answered, out, linked, came, strict=True)]


def _share(
    want: set[str],
    words: frozenset[str] | set[str],
    sentences: Sentences,
    stated: frozenset[str] = frozenset(),
) -> float:
    """The share of a clue's words one sentence of a document holds (its best one),
    counting the name the previous clue's document states (``stated``) as one more
    word; with no sentences given, the share the document's words hold. A clue is
    one statement: a page naming the product in one sentence and a launch in
    another does not state "we will launch the product at ...", and of two e-mails
    naming the expo, the one launching something *at the expo* states "we will
    launch the [C] at the [B]"."""
    if sentences:
        extra = 1 if stated else 0
        return max(len(want & w) + (1 if stated & n else 0) for w, n in sentences) / (
            len(want) + extra
        )
    return len(want & words) / len(want)


def how_stated(
    clue: str,
    passed: frozenset[str],
    sentences: Sequence[tuple[str, frozenset[str], frozenset[str]]],
) -> tuple[int, int]:
    """How well a chunk states ``clue``, by its best sentence (text, content words,
    names): the clue's words it holds plus one for a name the chain came through
    (``passed``), then how much of the clue's phrasing it shares, function words
    included ("Re: Launch plans for the Grysnurk VP-220" holds the word and the
    name as well as "We will launch the Grysnurk VP-220 at the Waivrox Textile
    Forum", which also says "we will ... at the")."""
    want = content_words(" ".join(link_words(clue)))
    phrasing = set(words(PLACEHOLDER.sub(" ", clue)))
    return max(
        (
            (len(want & w) + bool(passed & n), len(phrasing & set(words(text))))
            for text, w, n in sentences
        ),
        default=(0, 0),
    )


def _states(
    want: set[str],
    sentences: Sentences,
    stated: frozenset[str],
    prev: str | None,
    links: list[str],
    constants: Constants,
) -> bool:
    """Whether a document clearly states a clue, so the chain goes on from it: one
    sentence holds the name the previous pick states and, with it, more than
    ``clue_state_share`` (half) of the clue's words (the name alone, "X" in a patent listing X as inventor, does
    not state "X is managed by [C]"; nor does a patent whose one sentence names the
    stated patent and another its lead inventor state "the lead inventor named on
    patent [B] is [C]"). With no stated name: half the clue's words, in the first
    pick or one found through the previous pick."""
    least = constants.clue_state_share
    if not stated:
        return (prev is None or prev in links) and _share(want, frozenset(), sentences) >= least
    held = [(w, n) for w, n in sentences if stated & n]
    return bool(held) and _share(want, frozenset(), held, stated) > least


def _bonus(
    doc: str,
    prev: str | None,
    parent: Mapping[str, list[str]],
    names: Mapping[str, frozenset[str]],
    stated: frozenset[str],
    shared: frozenset[str],
    title: str,
    constants: Constants,
) -> float:
    """How strongly ``doc`` continues the chain from ``prev`` (see :func:`clue_docs`)."""
    c = constants
    held = names.get(doc, frozenset())
    # the strongest evidence of the link counts, once: a document holding the name
    # the previous one states was usually also found by searching it
    link = max(
        c.link_stated if stated & held else 0.0,
        c.link_parent if prev in parent.get(doc, []) else 0.0,
        c.link_shared if shared & held else 0.0,
    )
    about = c.link_about if any(contains_phrase(title, n) for n in stated) else 0.0
    return link + about
