"""Planted chains, checked against the documents as the ingester reads them."""

from __future__ import annotations

from collections import Counter

import pytest
from _world_fixtures import WrittenWorld
from _world_fixtures import has as _has

WORLDS = ["small_world", pytest.param("medium_world", marks=pytest.mark.slow)]


@pytest.fixture(params=WORLDS)
def world(request: pytest.FixtureRequest) -> WrittenWorld:
    return request.getfixturevalue(request.param)


def test_chain_records(world: WrittenWorld) -> None:
    ids = [c["id"] for c in world.chains]
    assert len(set(ids)) == len(ids)
    for c in world.chains:
        assert c["question"].endswith("?") and c["answer"]
        assert 2 <= c["n_hops"] == len(c["hops"]) <= 4
        assert c["gold_docs"] == [h["doc"] for h in c["hops"]]
        assert len(set(c["gold_docs"])) == len(c["gold_docs"])  # distinct documents
        assert c["anchor"] in c["question"] and c["hops"][0]["subject"] == c["anchor"]
        assert c["hops"][-1]["object"] == c["answer"]
        for h, nxt in zip(c["hops"], c["hops"][1:], strict=False):
            assert h["bridge"] == h["object"] == nxt["subject"]
        assert c["hops"][-1]["bridge"] is None


def test_all_hop_counts_present(world: WrittenWorld) -> None:
    assert set(Counter(c["n_hops"] for c in world.chains)) == {2, 3, 4}


def test_fact_sentences_are_verbatim_in_the_cited_visible_text(world: WrittenWorld) -> None:
    for c in world.chains:
        for h in c["hops"]:
            assert h["doc"] in world.docs, h["doc"]  # the path is the ingester's doc id
            text = world.docs[h["doc"]].text
            assert h["fact"] in text, (c["id"], h["doc"])
            holders = [d for d, doc in world.docs.items() if h["fact"] in doc.text]
            assert holders == [h["doc"]], (c["id"], holders)  # in exactly the cited document
            assert _has(h["fact"], h["subject"]) and _has(h["fact"], h["object"])
            for alt in h["alt_docs"]:
                assert _has(world.docs[alt].text, h["subject"])


def test_every_recorded_fact_is_verbatim(small_world: WrittenWorld) -> None:
    for f in small_world.world["facts"]:
        assert f["sentence"] in small_world.docs[f["doc"]].text


def test_bridges_appear_in_both_linked_documents(world: WrittenWorld) -> None:
    for c in world.chains:
        for h, nxt in zip(c["hops"], c["hops"][1:], strict=False):
            assert _has(world.docs[h["doc"]].text, h["bridge"])
            assert _has(world.docs[nxt["doc"]].text, h["bridge"])


def test_bridges_are_rare(world: WrittenWorld) -> None:
    """Bridges are invented names found in a small share of the corpus (towns are the hubs)."""
    n = len(world.docs)
    for c in world.chains:
        for h in c["hops"][:-1]:
            df = len(world.holders(h["bridge"]))
            assert 2 <= df <= max(15, n // 5), (c["id"], h["bridge"], df)


def test_answer_not_in_first_hop_document(world: WrittenWorld) -> None:
    for c in world.chains:
        assert not _has(world.docs[c["hops"][0]["doc"]].text, c["answer"]), c["id"]


def test_no_single_document_links_entities_two_hops_apart(world: WrittenWorld) -> None:
    """No document names both the anchor and the answer (or skips any bridge)."""
    for c in world.chains:
        chain = [c["anchor"]] + [h["object"] for h in c["hops"]]
        for i in range(len(chain)):
            for j in range(i + 2, len(chain)):
                both = world.holders(chain[i]) & world.holders(chain[j])
                assert not both, (c["id"], chain[i], chain[j], sorted(both))


def test_distractors(world: WrittenWorld) -> None:
    """Near misses: same kind of document and a shared topic as a hop's, no answer, no bridge."""
    meta = {d["path"]: d for d in world.world["documents"]}
    with_distractors = 0
    for c in world.chains:
        gold = [meta[g] for g in c["gold_docs"]]
        names = [c["anchor"]] + [h["object"] for h in c["hops"]]
        for path in c["distractors"]:
            assert path not in c["gold_docs"]
            assert not any(_has(world.docs[path].text, n) for n in names)
            d = meta[path]
            assert any(
                (d["domain"], d["kind"]) == (g["domain"], g["kind"])
                and set(d["groups"]) & set(g["groups"])
                for g in gold
            ), (c["id"], path)
        with_distractors += bool(c["distractors"])
    assert with_distractors >= 0.8 * len(world.chains)


def test_hidden_html_is_in_the_file_but_not_in_the_visible_text(small_world: WrittenWorld) -> None:
    pages = [d for d in small_world.world["documents"] if d["hidden"]]
    assert len(pages) >= 5
    for page in pages:
        raw = (small_world.root / page["path"]).read_text(encoding="utf-8")
        assert "ignore previous instructions" in raw.lower()
        for snippet in page["hidden"]:
            assert snippet in raw
            assert snippet not in small_world.docs[page["path"]].text
    for d in small_world.docs.values():
        assert "ignore previous instructions" not in d.text.lower()


def test_world_json_lists_every_document(small_world: WrittenWorld) -> None:
    listed = [d["path"] for d in small_world.world["documents"]]
    assert listed == small_world.manifest.documents
    entities = small_world.world["entities"]
    assert {"towns", "companies", "people", "patents", "products", "events"} <= set(entities)


def test_facts_are_functional(medium_world: WrittenWorld) -> None:
    """One answer per question: every (relation, subject) has a single object."""
    objects: dict[tuple[str, str], set[str]] = {}
    for f in medium_world.world["facts"]:
        objects.setdefault((f["relation"], f["subject"]), set()).add(f["object"])
    assert all(len(v) == 1 for v in objects.values())
    twinned = [
        t
        for f in medium_world.world["facts"]
        if f["relation"] == "twin"
        for t in (f["subject"], f["object"])
    ]
    assert len(twinned) == len(set(twinned))  # a town has at most one twin


def test_answer_aliases(world: WrittenWorld) -> None:
    for c in world.chains:
        assert c["answer_aliases"][0] == c["answer"]
        if c["answer"].endswith(" Province"):
            assert c["answer"].removesuffix(" Province") in c["answer_aliases"]
