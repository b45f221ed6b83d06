"""The followed chain: which follow-up found each chunk and which documents led there (pure)."""

from __future__ import annotations

from thresher.corpus.document import Chunk
from thresher.policies.local.bridges import Bridge
from thresher.policies.local.candidate import Candidate
from thresher.policies.local.chain import Chain, chain_order


def cand(doc: str, text: str, subquery: str = "Q?", rank: int = 1) -> Candidate:
    chunk = Chunk(f"{doc}#0", doc, 0, doc, text, 0, len(text), doc)
    return Candidate(chunk, subquery=subquery, rank=rank)


PATENT = cand("patent", "Lead inventor: Grabra Krepym.")
EMAIL = cand("email", "Grabra Krepym has joined Vratain Microsystems.", "Grabra Krepym town")
FILING = cand("filing", "Vratain Microsystems is headquartered in Lebruthholt.", "Vratain town")
STRAY = cand("stray", "Nothing about the bridge.", "Grabra Krepym town")
VIA = {
    "Grabra Krepym town": Bridge("Grabra Krepym town", "Grabra Krepym", "entity", "patent#0", 1.0),
    "Vratain town": Bridge("Vratain town", "Vratain Microsystems", "entity", "email#0", 1.0),
}
CANDS = {c.chunk.chunk_id: c for c in (PATENT, EMAIL, FILING, STRAY)}


def test_links_walk_back_through_chunks_that_hold_their_bridge() -> None:
    chain = Chain(VIA, CANDS)
    assert chain.continues(EMAIL) and chain.continues(FILING)
    assert not chain.continues(STRAY) and not chain.continues(PATENT)
    assert chain.links(FILING) == ["email", "patent"]
    assert chain.links(STRAY) == [] and chain.links(None) == []
    assert chain.path("Vratain town") == (EMAIL.chunk.text, PATENT.chunk.text)


def test_a_document_found_first_by_the_question_links_through_a_later_follow_up() -> None:
    first = cand("filing", FILING.chunk.text)  # the question's own search found it
    pools = {"Vratain town": {"filing#0": cand("filing", FILING.chunk.text, "Vratain town", 1)}}
    assert Chain(VIA, CANDS).links(first) == []
    assert Chain(VIA, CANDS, pools).links(first) == ["email", "patent"]


def test_chain_order_places_links_beside_the_document_they_led_to() -> None:
    links = {"filing": ["email", "patent"]}
    order = ["filing", "a", "b", "c", "d", "email", "patent"]
    assert chain_order(order, 2, lambda d: links.get(d, [])) == [
        "filing",
        "email",
        "patent",
        "a",
        "b",
        "c",
        "d",
    ]


def test_chain_order_places_where_a_document_led_beside_it() -> None:
    """The patent brings the e-mail its inventor's name found, and the e-mail the filing
    its company's name found, ahead of documents ranked above them that lead nowhere."""
    links = {"email": ["patent"], "filing": ["email", "patent"]}
    order = ["patent", "x", "email", "y", "z", "filing"]
    prob = {"patent": 0.9, "x": 0.2, "email": 0.1, "y": 0.05, "z": 0.01, "filing": 0.08}
    assert chain_order(order, 5, lambda d: links.get(d, []), prob) == [
        "patent",
        "email",
        "x",
        "filing",
        "y",
        "z",
    ]
    # a continuation never pushes out of the best five a likelier document
    prob["filing"] = 0.005  # below z, which it would push out
    assert chain_order(order, 5, lambda d: links.get(d, []), prob)[:5] == [
        "patent",
        "email",
        "x",
        "y",
        "z",
    ]
