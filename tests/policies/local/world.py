"""A small generated fictional world (seed 7) indexed with the real embedder.

The fixture ``world_index`` is shared by the local-policy and its training tests (a
plugin named in ``tests/conftest.py``; ``tests/tasks/generate`` has its own).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from thresher.config import Config


@pytest.fixture(scope="session")
def world_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small generated fictional world indexed with the real embedder."""
    from thresher.corpus.loaders import iter_documents
    from thresher.index.backends import ingest
    from thresher.synth.world import generate_world

    out = tmp_path_factory.mktemp("world")
    generate_world(7, "small", out / "corpus")
    index = out / "index"
    ingest(iter_documents([out / "corpus"]), index, Config())
    return index
