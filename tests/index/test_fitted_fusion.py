"""Fusion weights kept with an embedded index (``fusion.json``): used by hybrid search when
they fit the live generation, ignored with a warning when the index changed a lot since,
and no file means today's plain RRF, hit for hit."""

from __future__ import annotations

import hashlib
import json
import logging
from dataclasses import replace
from pathlib import Path

import pytest

from thresher.index.backends import ingest
from thresher.index.embedded import fitted
from thresher.index.embedded.layout import current_generation
from thresher.index.embedded.store import EmbeddedStore
from thresher.index.fusion import FusionWeights, fuse_retrievers

QUERIES = ("river town harbour", "orbital habitats", "sourdough starter", "moon")
LEANING = FusionWeights(bm25=3.0, dense=1.0, rrf_k=2)


@pytest.fixture
def index_dir(tmp_path, documents, minilm, small_config) -> Path:
    where = tmp_path / "index"
    ingest(documents[:20], where, small_config, embedder=minilm, progress=False)
    return where


def _open(index_dir: Path, config, minilm) -> EmbeddedStore:
    return EmbeddedStore(index_dir, config, embedder=minilm)


def _fuse(store: EmbeddedStore, query: str, w: FusionWeights, k: int = 50) -> list[str]:
    """What a hybrid search returns under ``w``, fused here from the two retrievers."""
    depth = max(store.config.retrieval.per_retriever, k)
    bm25 = [(h.chunk.chunk_id, h.score) for h in store.bm25_search(query, k=depth)]
    dense = [(h.chunk.chunk_id, h.score) for h in store.dense_search(query, k=depth)]
    return [f.key for f in fuse_retrievers(bm25, dense, w.rrf_k, k, weights=(w.bm25, w.dense))]


def _save(index_dir: Path, w: FusionWeights = LEANING) -> Path:
    return fitted.save_fusion(index_dir, w, fitted.fingerprint(current_generation(index_dir)))


def test_without_a_file_hybrid_search_is_plain_rrf_hit_for_hit(index_dir, small_config, minilm):
    with _open(index_dir, small_config, minilm) as store:
        assert store.fusion_weights() == FusionWeights(rrf_k=small_config.retrieval.rrf_k)
        assert store.stats().extra["fusion_weights"]["source"] == "config"
        for q in QUERIES:
            hits = store.hybrid_search(q, k=10)
            # the scores are the plain RRF sums, to the last bit
            depth = small_config.retrieval.per_retriever
            bm25 = [(h.chunk.chunk_id, h.score) for h in store.bm25_search(q, k=depth)]
            dense = [(h.chunk.chunk_id, h.score) for h in store.dense_search(q, k=depth)]
            plain = fuse_retrievers(bm25, dense, small_config.retrieval.rrf_k, limit=10)
            assert [(h.chunk.chunk_id, h.score) for h in hits] == [(f.key, f.score) for f in plain]


def test_a_saved_file_round_trips_and_hybrid_search_fuses_with_it(index_dir, small_config, minilm):
    path = _save(index_dir)
    body = fitted.read_fitted(index_dir)
    assert body is not None and path == index_dir / fitted.FUSION_FILE
    assert FusionWeights.from_dict(body["weights"]) == LEANING
    again = fitted.Fingerprint.from_dict(body["fitted_on"])
    assert again == fitted.fingerprint(current_generation(index_dir))
    assert again.documents == 20 and again.generation == current_generation(index_dir).name
    with _open(index_dir, small_config, minilm) as store:
        assert store.fusion_weights() == LEANING
        assert store.stats().extra["fusion_weights"] == {
            **LEANING.to_dict(),
            "source": "fusion.json",
        }
        changed = 0
        for q in QUERIES:
            got = [h.chunk.chunk_id for h in store.hybrid_search(q, k=50)]
            assert got == _fuse(store, q, LEANING)
            changed += got != _fuse(store, q, FusionWeights())
        assert changed  # the weights do change some order on this corpus
        assert store.pinned().fusion_weights() == LEANING


def test_the_setting_turns_the_file_off(index_dir, small_config, minilm):
    _save(index_dir)
    off = small_config.override({"retrieval.fitted_fusion": "false"})
    with _open(index_dir, off, minilm) as store:
        assert store.fusion_weights() == FusionWeights(rrf_k=off.retrieval.rrf_k)
        q = QUERIES[0]
        assert [h.chunk.chunk_id for h in store.hybrid_search(q, k=50)] == _fuse(
            store, q, FusionWeights(rrf_k=off.retrieval.rrf_k)
        )


def test_a_small_change_keeps_the_weights(index_dir, documents, small_config, minilm):
    _save(index_dir)
    ingest(documents[:22], index_dir, small_config, embedder=minilm, progress=False)  # +2 of 22
    with _open(index_dir, small_config, minilm) as store:
        assert store.fusion_weights() == LEANING


def test_a_large_change_makes_the_file_stale(index_dir, documents, small_config, minilm, caplog):
    _save(index_dir)
    with _open(index_dir, small_config, minilm) as store:  # opened before the ingest
        assert store.fusion_weights() == LEANING
        before = current_generation(index_dir).name
        ingest(documents[:32], index_dir, small_config, embedder=minilm, progress=False)
        assert current_generation(index_dir).name != before
        with caplog.at_level(logging.WARNING, logger="thresher.index.embedded.fitted"):
            # the open store switches to the new generation, and checks the file again
            assert store.fusion_weights() == FusionWeights(rrf_k=small_config.retrieval.rrf_k)
        assert "38% of the documents changed" in caplog.text  # 12 new of 32
        assert "thresher fit-fusion --index" in caplog.text


def test_a_file_fit_with_another_embedder_is_stale(index_dir, small_config, minilm, caplog):
    gen = current_generation(index_dir)
    other = replace(fitted.fingerprint(gen), generation="gen-999999", embedder="other-model")
    fitted.save_fusion(index_dir, LEANING, other)
    with (
        caplog.at_level(logging.WARNING, logger="thresher.index.embedded.fitted"),
        _open(index_dir, small_config, minilm) as store,
    ):
        assert store.fusion_weights() == FusionWeights(rrf_k=small_config.retrieval.rrf_k)
    assert "embedder other-model" in caplog.text


@pytest.mark.parametrize(
    "text",
    ["not json", "[]", '{"kind": "thresher-fitted", "version": 99}',
     '{"kind": "thresher-fitted", "version": 1, "weights": {"bm25": -1}, "fitted_on": {}}'],
)  # fmt: skip
def test_a_damaged_file_is_ignored_with_a_warning(index_dir, small_config, minilm, caplog, text):
    (index_dir / fitted.FUSION_FILE).write_text(text, encoding="utf-8")
    with (
        caplog.at_level(logging.WARNING, logger="thresher.index.embedded.fitted"),
        _open(index_dir, small_config, minilm) as store,
    ):
        assert store.fusion_weights() == FusionWeights(rrf_k=small_config.retrieval.rrf_k)
        assert store.hybrid_search(QUERIES[0], k=3)
    assert "fusion weights ignored" in caplog.text


def test_an_ingest_keeps_the_file(index_dir, documents, small_config, minilm):
    path = _save(index_dir)
    before = path.read_bytes()
    ingest(documents[:21], index_dir, small_config, embedder=minilm, progress=False)
    assert path.read_bytes() == before
    assert json.loads(before)["fitted_on"]["documents"] == 20


def _print(names: list[str], generation: str = "gen-000001") -> fitted.Fingerprint:
    hashes = sorted(hashlib.blake2b(n.encode(), digest_size=8).hexdigest() for n in names)
    return fitted.Fingerprint(
        generation, len(names), len(names), "e", tuple(hashes[: fitted.SKETCH])
    )


def test_changed_share_is_exact_on_small_indexes() -> None:
    a = [f"d{i}" for i in range(100)]
    assert fitted.changed_share(_print(a), _print(a)) == 0.0
    assert fitted.changed_share(_print(a), _print(a[:80])) == pytest.approx(0.2)
    assert fitted.changed_share(_print(a), _print([*a, *(f"n{i}" for i in range(25))])) == (
        pytest.approx(0.2)
    )
    assert fitted.changed_share(_print([]), _print([])) == 0.0
    assert fitted.changed_share(_print(a), _print(["x"])) == 1.0


def test_changed_share_estimates_a_large_index_from_its_sketch() -> None:
    a = [f"d{i}" for i in range(20_000)]
    b = a[:16_000] + [f"n{i}" for i in range(4_000)]  # Jaccard 16,000 / 24,000
    share = fitted.changed_share(_print(a), _print(b))
    assert share == pytest.approx(1 - 16_000 / 24_000, abs=0.05)


def test_a_caller_may_ask_for_plain_rrf(index_dir, small_config, minilm):
    """``fitted=False`` (what a policy declaring ``fitted_fusion = False`` gets through
    ``search_corpus``) fuses by plain RRF, also through a filtered view."""
    from thresher.harness.tools import fetch
    from thresher.index.filtered import FilteredStore
    from thresher.index.filters import DocFilter

    _save(index_dir)
    plain = FusionWeights(rrf_k=small_config.retrieval.rrf_k)
    off = small_config.override({"retrieval.fitted_fusion": "false"})
    with _open(index_dir, small_config, minilm) as store:
        for q in QUERIES:
            want = _fuse(store, q, plain)
            assert [h.chunk.chunk_id for h in store.hybrid_search(q, k=50, fitted=False)] == want
            view = FilteredStore(store, DocFilter.parse("", "*"))
            assert [h.chunk.chunk_id for h in view.hybrid_search(q, k=50, fitted=False)] == want
            assert [h.chunk.chunk_id for h in view.hybrid_search(q, k=50)] == _fuse(
                store, q, LEANING
            )
            for config, weights in ((off, plain), (small_config, LEANING)):
                got = fetch("search_corpus", {"query": q}, store, config, seen=(), in_context=(),
                            current_query=q)  # fmt: skip
                assert [h.chunk.chunk_id for h in got.hits] == _fuse(store, q, weights)[:50]
