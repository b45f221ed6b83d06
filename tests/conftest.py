"""Fixtures for every test: the development data, markers by fixture and folder, and
each test starting with no index kept open.

Helpers (functions, data, classes) live in modules beside the tests that use them
(``devdata``, ``harness/small_corpus.py``, ``serve/helpers.py``...), never here.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from devdata import DEV_DATA

#: modules whose fixtures more than one folder uses (a folder's own fixture of the same
#: name takes precedence): the harness tests' small corpus and its index (``config``,
#: ``index_dir``, ``store``), the invented HotpotQA file (``tiny_hotpot``), a generated
#: world indexed for the local policy (``world_index``)
pytest_plugins = ("harness.small_corpus", "eval.tiny_hotpot", "policies.local.world")


@pytest.fixture
def dev_data() -> Path:
    """The development data folder; skips when absent."""
    if not DEV_DATA.is_dir():
        pytest.skip(f"development data not present: {DEV_DATA}")
    return DEV_DATA


# What a test needs, read from the fixtures it uses and the folder it is in: each such
# test gets the marker (registered in pyproject.toml), so `make test-fast` can leave it
# out. A test that needs one of these without such a fixture carries the marker itself.
_MARKER_OF_FIXTURE = {
    "ray_local": "ray",  # a local Ray cluster
    "serve_index": "server",  # `thresher serve` / `thresher mcp` processes over it
    "medium_world": "slow",  # a world bigger than small
    "world_index": "slow",  # a generated world indexed with the real embedder
    "world_store": "slow",
    "world_run": "slow",  # an evaluation run over a generated world
    "demo_dir": "slow",  # `thresher demo`, end to end
}
_MARKER_OF_FOLDER = {
    "hardening": "slow",  # attacks, faults, process kills and fuzzing, end to end
    "bench": "slow",  # every benchmark script, run
}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    tests = Path(__file__).parent
    for item in items:
        names = set(getattr(item, "fixturenames", ()))
        marks = {mark for fixture, mark in _MARKER_OF_FIXTURE.items() if fixture in names}
        parts = item.path.relative_to(tests).parts if item.path.is_relative_to(tests) else ()
        if parts and parts[0] in _MARKER_OF_FOLDER:
            marks.add(_MARKER_OF_FOLDER[parts[0]])
        for mark in sorted(marks):
            item.add_marker(mark)


@pytest.fixture(autouse=True, scope="session")
def _caches_in_a_temp_folder(tmp_path_factory: pytest.TempPathFactory):
    """Every cache (``THRESHER_CACHE``: pooled eval indexes; a server's BM25 side index) goes to a
    temporary folder, not the user's cache, except the derived model files, which
    are linked from the user's cache (built once, a few seconds each); a test may
    point any of them elsewhere."""
    from thresher.paths import CACHE_ENV, cache_dir

    models = cache_dir("models")
    root = tmp_path_factory.mktemp("cache")
    models.mkdir(parents=True, exist_ok=True)
    (root / "models").symlink_to(models, target_is_directory=True)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(CACHE_ENV, str(root))
        yield


@pytest.fixture(autouse=True)
def _close_kept_indexes():
    """``thresher.search(index=PATH)`` keeps the index open for the next call in the
    process: each test starts and ends with none kept, so no test sees another's."""
    from thresher.index.handles import close_indexes

    close_indexes()
    yield
    close_indexes()
