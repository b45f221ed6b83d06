"""Extend: grow a chain from a seed chunk to 2, 3 or 4 hops through bridging items.

A chain starts with a first hop from :func:`~thresher.tasks.generate.explore.first_hops`
(the anchor the question names, and a bridge). Each further hop is found by
:func:`~thresher.tasks.generate.explore.next_hops`: the bridge of the previous hop
leads to a chunk of a new document whose sentence names the next bridge, or,
on the last hop, the answer. The search is depth-first with at most
``ExploreConfig.branch`` candidates per step, so a seed costs a bounded amount
of work; :func:`extend_chain` adds one more hop to a finished chain by turning
its answer into a bridge (when the answer is rare enough to be one).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from thresher.tasks.generate.explore import (
    CorpusView,
    ExploreConfig,
    Hop,
    first_hops,
    next_hops,
)

__all__ = ["Chain", "build_chain", "extend_chain"]


@dataclass(frozen=True, slots=True)
class Chain:
    """A candidate task's evidence: the anchor, one hop per document, and the answer.

    ``hops[i].out`` is the bridge to hop ``i + 1``; the last hop's ``out`` is the answer.
    """

    anchor: str
    hops: tuple[Hop, ...]

    @property
    def answer(self) -> str:
        return self.hops[-1].out

    @property
    def answer_kind(self) -> str:
        return self.hops[-1].out_kind

    @property
    def bridges(self) -> list[str]:
        return [h.out for h in self.hops[:-1]]

    @property
    def chunk_ids(self) -> list[str]:
        return [h.chunk_id for h in self.hops]


def build_chain(
    view: CorpusView,
    seed_chunk: str,
    n_hops: int,
    cfg: ExploreConfig,
    rng: random.Random,
) -> Chain | None:
    """A chain of exactly ``n_hops`` (>= 2) hops starting at ``seed_chunk``, or None.

    Tries up to ``cfg.branch`` first hops and, at each later step, up to
    ``cfg.branch`` continuations (depth-first, backtracking).
    """
    if n_hops < 2:
        raise ValueError(f"a chain needs at least 2 hops, got {n_hops}")
    for anchor, hop in first_hops(view, seed_chunk, cfg, rng)[: cfg.branch]:
        found = _grow(view, anchor, (hop,), n_hops, cfg, rng)
        if found is not None:
            return Chain(anchor, found)
    return None


def _grow(
    view: CorpusView,
    anchor: str,
    chain: tuple[Hop, ...],
    n_hops: int,
    cfg: ExploreConfig,
    rng: random.Random,
) -> tuple[Hop, ...] | None:
    final = len(chain) + 1 == n_hops
    options = next_hops(view, chain, anchor, final=final, cfg=cfg, rng=rng)
    for hop in options[: cfg.branch]:
        grown = (*chain, hop)
        if final:
            return grown
        deeper = _grow(view, anchor, grown, n_hops, cfg, rng)
        if deeper is not None:
            return deeper
    return None


def extend_chain(
    view: CorpusView, chain: Chain, cfg: ExploreConfig, rng: random.Random
) -> Chain | None:
    """``chain`` with one more hop: its answer becomes a bridge to a new answer, or None.

    The old answer must be a usable bridge (rare, not a number) that occurs in
    an unused document whose sentence names a new answer.
    """
    last = chain.hops[-1]
    if last.out_kind in ("year", "number"):
        return None
    options = next_hops(view, chain.hops, chain.anchor, final=True, cfg=cfg, rng=rng)
    for hop in options[: cfg.branch]:
        if hop.titled or cfg.min_df <= view.doc_freq(last.out) <= cfg.max_df:
            return Chain(chain.anchor, (*chain.hops, hop))
    return None
