"""A small generated world, indexed once per session, for the synthesis tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from thresher.config import Config


@pytest.fixture(scope="session")
def world_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small fictional world (seed 3) written to disk and ingested into a real index."""
    from thresher.corpus.loaders import iter_documents
    from thresher.index.backends import ingest
    from thresher.synth.world import generate_world

    root = tmp_path_factory.mktemp("synth-tasks")
    generate_world(3, "small", root / "world")
    ingest(iter_documents([root / "world"]), root / "index", Config(), progress=False)
    return root / "index"


@pytest.fixture(scope="session")
def world_store(world_index: Path):
    from thresher.index.embedded.store import EmbeddedStore

    store = EmbeddedStore(world_index, Config().override({"grep.timeout_s": 60.0}))
    yield store
    store.close()


@pytest.fixture(scope="session")
def world_view(world_store):
    from thresher.tasks.generate.explore import read_corpus

    return read_corpus(world_store)
