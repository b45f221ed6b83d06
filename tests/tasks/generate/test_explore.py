"""Exploration and chain building over a hand-made corpus with a known chain."""

from __future__ import annotations

import random

from _corpus import chunks

from thresher.tasks.generate.explore import (
    CorpusView,
    ExploreConfig,
    first_hops,
    is_fact,
    next_hops,
)
from thresher.tasks.generate.extend import build_chain, extend_chain
from thresher.tasks.generate.text import entities

PATENT = "patents/QX-1891-004.txt#0"


def view() -> CorpusView:
    return CorpusView.build(chunks())


def test_containing_and_doc_freq_are_exact_phrase_lookups() -> None:
    v = view()
    assert set(v.containing("Orvel Kestrin")) == {PATENT, "web/orvel-kestrin.html#0"}
    assert v.doc_freq("orvel  KESTRIN") == 2
    assert v.doc_freq("Kestrin Orvel") == 0
    assert v.titled("web/marrowick.html", "marrowick")


def test_fact_filter_refuses_headers_and_lists() -> None:
    assert is_fact(
        "Orvel Kestrin was born in Marrowick.", entities("Orvel Kestrin was born in Marrowick.")
    )
    for text in (
        "Inventors: Anna Berg; Carl Dahl",
        "Chief Financial Officer, Neimveirk Agritech",
        "To: anna@example.com, carl@example.com",
        "Date: Mon, 16 Dec 2024 16:58",
    ):
        assert not is_fact(text, entities(text)), text


def test_first_hops_name_an_anchor_and_a_rare_bridge() -> None:
    hops = first_hops(view(), PATENT, ExploreConfig(), random.Random(0))
    pairs = {(anchor, hop.out) for anchor, hop in hops}
    assert ("QX-1891-004", "Orvel Kestrin") in pairs
    for anchor, hop in hops:
        assert anchor in hop.sentence and hop.out in hop.sentence
        assert hop.link == ""


def test_build_chain_follows_bridges_to_new_documents() -> None:
    v = view()
    cfg = ExploreConfig()
    chain = None
    for seed in range(20):
        chain = build_chain(v, PATENT, 3, cfg, random.Random(seed))
        if chain is not None and chain.anchor == "QX-1891-004":
            break
    assert chain is not None
    assert [h.doc_id for h in chain.hops] == [
        "patents/QX-1891-004.txt",
        "web/orvel-kestrin.html",
        "web/marrowick.html",
    ]
    assert chain.bridges == ["Orvel Kestrin", "Marrowick"]
    assert chain.answer == "Tessaly Province"
    # every hop names its link, and the answer is in no earlier chunk
    for prev, hop in zip(chain.hops, chain.hops[1:], strict=False):
        assert hop.link == prev.out and prev.out in hop.sentence
    assert all("Tessaly" not in v.chunks[h.chunk_id].text for h in chain.hops[:-1])


def test_extend_chain_turns_the_answer_into_a_bridge() -> None:
    v = view()
    cfg = ExploreConfig()
    chain = None
    for seed in range(20):
        chain = build_chain(v, PATENT, 3, cfg, random.Random(seed))
        if chain is not None and chain.answer == "Tessaly Province":
            break
    assert chain is not None
    longer = extend_chain(v, chain, cfg, random.Random(0))
    assert longer is not None and len(longer.hops) == 4
    assert longer.hops[-1].doc_id == "web/tessaly-province.html"
    assert longer.answer == "Vennor Keep"


def test_next_hops_skip_used_documents_and_the_anchor() -> None:
    v = view()
    cfg = ExploreConfig()
    _anchor, first = next(
        (a, h) for a, h in first_hops(v, PATENT, cfg, random.Random(0)) if h.out == "Orvel Kestrin"
    )
    options = next_hops(v, (first,), "QX-1891-004", final=True, cfg=cfg, rng=random.Random(0))
    assert options and all(h.doc_id != "patents/QX-1891-004.txt" for h in options)
    assert {h.out for h in options} >= {"Marrowick"}
    # the titled document about the link comes first
    assert options[0].titled


def test_no_chain_from_a_chunk_without_bridges() -> None:
    assert (
        build_chain(view(), "web/caddow-ferry.html#0", 2, ExploreConfig(), random.Random(0)) is None
    )


def test_read_corpus_names_the_grep_timeout() -> None:
    import pytest

    from thresher.errors import PatternRejectedError
    from thresher.tasks.generate.explore import read_corpus

    class SlowStore:
        def grep(self, pattern: str, limit: int = 5, exclude=()):  # noqa: ANN001
            raise PatternRejectedError("the search ran longer than 2 s")

    with pytest.raises(PatternRejectedError, match="grep.timeout_s"):
        read_corpus(SlowStore())  # type: ignore[arg-type]
