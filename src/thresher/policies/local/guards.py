"""Do no harm: what the retrievers agree on stays in view, and the best evidence is kept.

The learned models reorder and prune; these guards bound what that may cost
against the retrievers alone (pure functions over ids, ranks and probabilities):

- :func:`agreed_docs`: the documents the question's own search agrees on: its
  fused top (``agree_fused``), and any hit within both BM25's and dense's best
  ``agree_head``;
- :func:`show_agreed`: the question's search shows every agreed hit, whatever
  the utility model's order of the rest (a chunk a search shows is never
  returned by a later search: one left unshown is lost for the episode);
- :func:`keep_agreed`: the answer keeps the first ``agree_keep`` agreed documents
  among its best ``slots`` unless every document there is clearly likelier
  evidence (its probability ``agree_margin`` above the agreed one's);
- :func:`keep_best_evidence`: pruning never drops a chunk whose evidence
  probability is above every kept chunk's, nor a protected chunk (an agreed
  document's best) while a weaker chunk stays.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from thresher.index.store import Hit

__all__ = ["agreed_docs", "agreed_hits", "show_agreed", "keep_agreed", "keep_best_evidence"]


def agreed_hits(hits: Sequence[Hit], fused: int, head: int) -> list[int]:
    """Positions in ``hits`` (a fused list, best first) the retrievers agree on: within
    the fused best ``fused``, or within both BM25's and dense's best ``head``."""
    out = []
    for i, h in enumerate(hits):
        both = (
            h.bm25_rank is not None
            and h.dense_rank is not None
            and max(h.bm25_rank, h.dense_rank) <= head
        )
        if i < fused or both:
            out.append(i)
    return out


def agreed_docs(hits: Sequence[Hit], fused: int, head: int) -> list[str]:
    """The documents of :func:`agreed_hits`, each once, best fused first."""
    return list(dict.fromkeys(hits[i].chunk.doc_id for i in agreed_hits(hits, fused, head)))


def show_agreed(order: Sequence[int], agreed: Iterable[int], show: int) -> list[int]:
    """The ``show`` positions a search shows: ``order``'s best (the utility model's
    order), with every ``agreed`` position in, each taking the place of the
    lowest-ranked position shown that is not agreed; best first in ``order``'s
    order. At most ``show`` positions (agreed ones beyond that are left out, the
    best fused first kept)."""
    want = list(dict.fromkeys(agreed))[:show]
    rank = {p: r for r, p in enumerate(order)}
    shown = list(order[:show])
    missing = [p for p in want if p not in shown]
    if not missing:
        return shown
    wanted = set(want)
    for p in missing:
        # drop the lowest-ranked shown position that is not agreed
        for j in range(len(shown) - 1, -1, -1):
            if shown[j] not in wanted:
                del shown[j]
                break
        shown.append(p)
    return sorted(shown, key=lambda p: rank.get(p, len(rank)))


def keep_agreed(
    order: Sequence[str],
    prob: Mapping[str, float],
    agreed: Sequence[str],
    slots: int,
    keep: int,
    margin: float,
) -> list[str]:
    """``order`` (documents, best first) with the first ``keep`` of ``agreed`` that are in
    it moved up to the last of the best ``slots`` when below them, unless each of the
    best ``slots`` has a probability (``prob``) at least ``margin`` above the agreed
    document's (the learned scores clearly beat it). The others keep their order."""
    out = list(order)
    present = [d for d in agreed if d in prob and d in out][:keep]
    for d in present:
        if out.index(d) < slots:
            continue
        head = out[:slots]
        if head and all(prob.get(x, 0.0) >= prob[d] + margin for x in head):
            continue
        out.remove(d)
        out.insert(max(slots - 1, 0), d)
    return out


def keep_best_evidence(
    active: Sequence[str],
    pruned: Iterable[str],
    prob: Mapping[str, float],
    protected: Iterable[str] = (),
) -> list[str]:
    """``pruned`` (chunk ids among ``active``) less what must stay: a chunk whose
    probability of being evidence is above every kept chunk's, and a ``protected``
    chunk whose probability is above the weakest kept chunk's. Order kept."""
    out = list(dict.fromkeys(pruned))
    gone = set(out)
    kept = [c for c in active if c not in gone]
    if not out:
        return out
    p = [prob.get(c, 0.0) for c in kept]
    top = max(p, default=float("-inf"))
    low = min(p, default=float("-inf"))
    stay = set()
    best = max(out, key=lambda c: prob.get(c, 0.0))
    if prob.get(best, 0.0) > top:
        stay.add(best)
        low = min(low, prob.get(best, 0.0)) if kept else prob.get(best, 0.0)
    for c in protected:
        if c in gone and prob.get(c, 0.0) > low:
            stay.add(c)
    return [c for c in out if c not in stay]
