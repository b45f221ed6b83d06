"""One root for every cache, named by ``THRESHER_CACHE``; the old root variable still
works for one release, with a warning."""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import pytest

from thresher import paths

KINDS = ("eval-index", "models", "server-bm25")
OLD = ("THRESHER_CACHE", "THRESHER_CACHE_DIR")


@pytest.fixture
def env(monkeypatch):
    for name in OLD:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(paths, "_warned", set())
    return monkeypatch


def test_every_cache_is_a_folder_under_the_one_root(env, tmp_path: Path) -> None:
    env.setenv("THRESHER_CACHE", str(tmp_path))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert [paths.cache_dir(k) for k in KINDS] == [tmp_path / k for k in KINDS]


@pytest.mark.skipif(sys.platform != "linux", reason="XDG_CACHE_HOME is the Linux convention")
def test_without_the_variable_the_root_is_the_user_cache_folder(env, tmp_path: Path) -> None:
    env.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert paths.cache_root() == tmp_path / "thresher"
    env.delenv("XDG_CACHE_HOME")
    assert paths.cache_root() == Path.home() / ".cache" / "thresher"


def test_the_old_root_variable_works_with_a_warning(env, tmp_path: Path) -> None:
    env.setenv("THRESHER_CACHE_DIR", str(tmp_path / "old"))
    with pytest.warns(FutureWarning, match="THRESHER_CACHE_DIR is deprecated.*THRESHER_CACHE"):
        assert paths.cache_dir("eval-index") == tmp_path / "old" / "eval-index"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # said once per process
        assert paths.cache_dir("models") == tmp_path / "old" / "models"
    env.setenv("THRESHER_CACHE", str(tmp_path / "new"))  # the new one wins
    assert paths.cache_dir("eval-index") == tmp_path / "new" / "eval-index"


def test_each_cache_user_asks_the_paths_module(env, tmp_path: Path) -> None:
    from thresher.index.server.layout import ServerLocation
    from thresher.index.server.store import default_cache_dir

    env.setenv("THRESHER_CACHE", str(tmp_path))
    location = ServerLocation("example.org", 8000, "docs")
    assert default_cache_dir(location) == tmp_path / "server-bm25" / "example.org_8000_docs"
