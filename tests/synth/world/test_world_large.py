"""The large world: over 2,000 chunks of at most 512 tokens, hundreds of planted chains."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from thresher.corpus.chunking import chunk_document
from thresher.corpus.loaders import iter_documents
from thresher.synth.world import WorldManifest, generate_world
from thresher.tokens import get_counter

pytestmark = pytest.mark.slow  # a large world


@pytest.fixture(scope="module")
def large(tmp_path_factory: pytest.TempPathFactory) -> tuple[WorldManifest, Path]:
    root = tmp_path_factory.mktemp("large") / "world"
    return generate_world(11, "large", root), root


def test_large_world_has_over_2000_chunks(large: tuple[WorldManifest, Path]) -> None:
    manifest, root = large
    counter = get_counter()
    chunks = [c for d in iter_documents([root]) for c in chunk_document(d, 512, counter)]
    assert len(chunks) >= 2000
    assert max(counter.count(c.text) for c in chunks) <= 512
    assert manifest.counts["documents"] >= 1500


def test_large_world_has_hundreds_of_chains(large: tuple[WorldManifest, Path]) -> None:
    manifest, _ = large
    assert len(manifest.chains) >= 600
    hops = Counter(len(c.hops) for c in manifest.chains)
    assert min(hops[2], hops[3], hops[4]) >= 150
    assert len({c.anchor for c in manifest.chains}) == len(manifest.chains)
    assert len({c.pattern for c in manifest.chains}) >= 30
