"""The chain an episode follows: which follow-up each chunk came from, and what led there.

Every follow-up query is a :class:`~thresher.policies.local.bridges.Bridge`
read in a source chunk. A chunk found by a follow-up *continues the chain*
when it holds that bridge's phrase (or, for a followed link, is a chunk of the
document the link names); its chain links are then the source
chunk's document, that one's own source, and so on. The policy uses this to
read the next hop from the chain's leading edge, to drop question words the
chain already holds from the next query, to keep a kept document's links in
view, and to place them beside it in the answer (:func:`chain_order`). A
question stated as linked clues is also read clue by clue, one document per
clue: :mod:`.clues`. Pure: no store, no state of its own beyond the maps it is
given.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from thresher.policies.local.bridges import Bridge
from thresher.policies.local.candidate import Candidate
from thresher.policies.local.constants import DEFAULT_CONSTANTS, Constants
from thresher.policies.local.text import contains_folded

__all__ = ["Chain", "chain_order"]


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
        """Whether ``cand`` holds the phrase of the follow-up that found it, or is a chunk
        of the document a followed link names (a bridge of kind ``link``, its query that
        document's id: :mod:`.pagelinks`)."""
        bridge = self.bridge_of(cand)
        if bridge is None:
            return False
        if bridge.kind == "link":
            return cand.chunk.doc_id == bridge.query
        return contains_folded(cand.folded, bridge.phrase)

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
