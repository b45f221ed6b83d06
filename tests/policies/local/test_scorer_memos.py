"""The candidate scorer's episode memos give what computing afresh gives.

The link-row memo reads a chunk's row back only against the same anchors (key,
document and weight) and question words; the map of titles made from each
search's kept titles is the map ``setdefault`` over every candidate makes, keys
in the same order.
"""

from __future__ import annotations

import numpy as np

from thresher.corpus.document import Chunk
from thresher.policies.local.candidate import AnchorView, Candidate, QuestionContext
from thresher.policies.local.features import LinkRowMemo, PairMemo, link_matrix
from thresher.policies.local.memory import EpisodeMemory
from thresher.policies.local.pool import pool_titles

Q = "In which province is the town where the Halvard Glassworks was founded?"


def chunk(doc: str, title: str, text: str, n: int = 0) -> Chunk:
    return Chunk(f"{doc}#{n}", doc, n, title, text, 0, len(text), f"{doc}{n}")


GLASS = chunk(
    "glassworks",
    "Halvard Glassworks",
    "The Halvard Glassworks was founded in 1891 in the river town of Marrowick.",
)
TOWN = chunk("marrowick", "Marrowick", "Marrowick is a small town in the province of Tessaly.")
PROVINCE = chunk("tessaly", "Tessaly", "Tessaly is a province whose capital is Marrowick.")


def test_link_rows_read_back_only_against_the_same_anchors() -> None:
    q = QuestionContext.of(Q)
    cands = [Candidate(c, subquery=Q) for c in (GLASS, TOWN, PROVINCE)]
    pairs: PairMemo = {}
    rows: LinkRowMemo = {}
    for weights in ((0.9, 0.4), (0.9, 0.4), (0.8, 0.4), (0.9, 0.4)):
        anchors = [AnchorView.of(cands[0], weights[0]), AnchorView.of(cands[2], weights[1])]
        fresh = link_matrix(cands, q, anchors)
        kept = link_matrix(cands, q, anchors, pairs, None, rows)
        assert kept.tobytes() == fresh.tobytes()
    assert len(rows) == 2  # two signatures: the anchors weighted (0.9, 0.4) and (0.8, 0.4)
    # the source's utility is not kept in the row: each call reads its own
    town = Candidate(TOWN, hop=1, subquery="Marrowick", via="Marrowick", via_source=GLASS.chunk_id)
    anchors = [AnchorView.of(cands[0], 0.9), AnchorView.of(cands[2], 0.4)]
    for utility in ({GLASS.chunk_id: 0.7}, {GLASS.chunk_id: 0.2}):
        kept = link_matrix([town], q, anchors, pairs, utility, rows)
        assert kept.tobytes() == link_matrix([town], q, anchors, None, utility).tobytes()


def test_a_hand_made_anchor_keeps_no_row() -> None:
    q = QuestionContext.of(Q)
    glass = Candidate(GLASS, subquery=Q)
    town = Candidate(TOWN, subquery=Q)
    anchors = [
        AnchorView("glassworks", GLASS.title, GLASS.text.lower(), frozenset(glass.words), 0.9)
    ]
    rows: LinkRowMemo = {}
    x = link_matrix([glass, town], q, anchors, {}, None, rows)
    assert rows == {}
    assert np.array_equal(x, link_matrix([glass, town], q, anchors))


def test_pool_titles_is_setdefault_over_every_candidate_in_sorted_query_order() -> None:
    memory = EpisodeMemory(QuestionContext.of(Q))
    other = chunk("glassworks-2", "Halvard Glassworks", "Another page of that name.")
    second = chunk("marrowick", "Marrowick", "Marrowick lies on the river.", 1)

    def pool(*chunks: Chunk) -> dict[str, Candidate]:
        return {c.chunk_id: Candidate(c, subquery=Q) for c in chunks}

    def reference() -> dict[str, str]:
        titles: dict[str, str] = {}
        for q in sorted(memory.pools):
            for c in memory.pools[q].values():
                titles.setdefault(c.chunk.title, c.chunk.doc_id)
        return titles

    memory.pools["b query"] = pool(TOWN, other, PROVINCE)
    memory.pools["a query"] = pool(second, GLASS)
    got = pool_titles(memory)
    assert list(got.items()) == list(reference().items())
    assert got["Halvard Glassworks"] == "glassworks"  # "a query" sorts first
    # a search run again replaces its list: its titles are read again
    memory.pools["a query"] = pool(other)
    assert list(pool_titles(memory).items()) == list(reference().items())
    assert pool_titles(memory)["Halvard Glassworks"] == "glassworks-2"
