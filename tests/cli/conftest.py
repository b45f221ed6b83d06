"""Shared CLI fixtures: a small generated world indexed once, and a stderr that claims a TTY."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def demo_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder laid out as ``thresher demo --dir`` leaves it: ``world/``, ``index/``, a trace.

    The world is the small seed-0 one the demo builds, so ``thresher demo --dir``
    over this folder reuses the index (nothing to embed).
    """
    from thresher.api import search
    from thresher.config import Config
    from thresher.corpus.loaders import iter_documents
    from thresher.index.backends import ingest
    from thresher.synth.world import demo_question, generate_world

    root = tmp_path_factory.mktemp("cli-demo")
    generate_world(0, "small", root / "world")
    ingest(iter_documents([root / "world"]), root / "index", Config(), progress=False)
    search(demo_question(root / "world"), index=root / "index", trace=root / "trace.jsonl")
    return root


@pytest.fixture
def as_terminal(monkeypatch: pytest.MonkeyPatch) -> Callable[[], None]:
    """Call it first in a test: from then on the captured stderr claims to be a terminal.

    Progress bars (tqdm, ingest) and live views draw only on a terminal; after the
    call a test sees what a person at a terminal would see. (A call, not a fixture
    doing it on its own: a patch made while fixtures are set up lands on another
    stream object than the one ``sys.stderr`` is in the test body.)
    """
    return lambda: monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
