"""The chain's edges: where each hop of the planner reads bridges first.

Each hop of the planner (:class:`~thresher.policies.local.planner.Planner`)
reads bridges from the chain's edges before the best retained chunks:

- the leading edge (:func:`frontier`): per follow-up of the last hop, the
  likeliest chunk it found that holds its bridge, which continues the followed
  chain (:class:`~thresher.policies.local.chain.Chain`);
- for a question stated as linked clues, the clue edge (:func:`clue_edge`): the
  chunk stating the furthest clue the clue chain has reached (:mod:`.clues`),
  with that clue's index and the names the chain came through to it.

Each edge is an :data:`Edge`: (its chunk, the clue it answers, the names passed).
"""

from __future__ import annotations

from thresher.policies.local.answer import AnswerRanker
from thresher.policies.local.clues import clue_docs, how_stated
from thresher.policies.local.constants import DEFAULT_CONSTANTS, Constants
from thresher.policies.local.decompose import links
from thresher.policies.local.memory import EpisodeMemory
from thresher.policies.local.scoring import Ranked

__all__ = ["Edge", "clue_edge", "frontier"]

#: a chain edge bridges are read from: (its chunk, the clue it answers, the names passed)
Edge = tuple[Ranked, int | None, frozenset[str]]


def clue_edge(
    memory: EpisodeMemory,
    ranked: list[Ranked],
    active: set[str],
    answer: AnswerRanker,
    constants: Constants = DEFAULT_CONSTANTS,
) -> Edge | None:
    """For a clue chain: the chunk stating its clue of the document answering the
    furthest clue the chain has reached (each pick continuing the previous one),
    that clue's index, and the names the chain came through to it, unless it is
    the last clue.

    The chain goes on from there whichever hop found that document (the question's
    own search often finds a later clue's document): the next follow-up asks the
    clue after it, from the name that document states. The chain's progress is
    read from ``answer``'s order (:func:`~.clues.clue_docs`, with ``constants``).
    """
    clues = links(memory.question.question)
    if len(clues) < 2 or not answer.chain_order:
        return None
    order, best, chunks = answer.order(memory, ranked, active, clue_first=False)
    links_of = answer.links_of(memory, ranked)
    words, parents, sents, titles = answer.clue_inputs(memory, order, best, chunks, links_of)
    picked = clue_docs(clues, order, words, parents, answer.keep_docs, sents, titles, constants)
    # the chain reaches as far as its picks continue one another: a later clue's
    # words alone ("launch") do not say its document is the one the chain leads to
    reach = next((i for i, p in enumerate(picked) if not p.linked), len(picked))
    if reach == 0 or picked[reach - 1].clue >= len(clues) - 1:
        return None
    last = picked[reach - 1]
    # of that document's chunks in view, the one stating the clue: its next link
    # is named there ("Patent X cites the earlier patent Y" sits in the record
    # notes of chunk 0, while chunk 1 may rank better)
    by_id = {r.chunk_id: r for r in ranked}

    def stating(cid: str) -> tuple[int, int]:
        text = by_id[cid].cand.chunk.text
        sents, _ = memory.text.sentence_words(text)
        names = memory.text.sentence_names(text)
        facts = [(x, w, n) for x, (w, n) in zip(sents, names, strict=True)]
        return how_stated(clues[last.clue], last.passed, facts)

    return by_id[max(chunks[last.doc], key=stating)], last.clue, last.passed


def frontier(
    memory: EpisodeMemory, ranked: list[Ranked], active: set[str], skip_docs: set[str], limit: int
) -> list[Ranked]:
    """The chain's leading edge: per follow-up of the last hop, the likeliest chunk it
    found that holds its bridge (at most ``limit``; none of ``skip_docs``' documents).

    A chunk that holds the phrase of the follow-up that found it continues the
    chain; the next hop reads it first (and the words its chain resolved leave
    the next query) rather than reading the same top chunks again.
    """
    chain = memory.chain()
    out: list[Ranked] = []
    followed: set[str] = set()  # one edge per bridge: each followed link goes on
    for r in sorted(ranked, key=lambda r: -r.prob):
        if r.chunk_id not in active or r.cand.hop != memory.hop or memory.hop == 0:
            continue
        if r.cand.chunk.doc_id in skip_docs or not chain.continues(r.cand):
            continue
        bridge = r.cand.subquery.strip()
        if bridge in followed:
            continue
        followed.add(bridge)
        out.append(r)
        skip_docs = skip_docs | {r.cand.chunk.doc_id}
        if len(out) >= limit:
            break
    return out
