"""A server warms up before it says it is ready: its first request then costs what any
request costs (issue 27)."""

from __future__ import annotations

from typing import Any

from thresher.serve import app as app_module
from thresher.serve.service import SearchService
from thresher.serve.settings import ServeSettings
from thresher.serve.warm import warm_up


class _Spy:
    """A Store that counts hybrid searches and passes everything to the real one."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.searches = inner, 0

    def hybrid_search(self, *args: Any, **kwargs: Any) -> Any:
        self.searches += 1
        return self.inner.hybrid_search(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def pinned(self) -> Any:
        return self  # an episode reads through the spy (not the store's pinned view)


def test_warm_up_searches_the_index_and_runs_an_offline_episode(serve_index):
    from thresher.config import Config
    from thresher.index.backends import open_store

    with open_store(serve_index, Config()) as store:
        spy = _Spy(store)
        warm_up(spy, "local", Config())  # type: ignore[arg-type]
        assert spy.searches >= 2  # its own search, then the episode's search_corpus
        spy.searches = 0
        warm_up(spy, "some-llm", Config())  # type: ignore[arg-type]
        assert spy.searches == 1  # no episode: that policy would call a model


def test_serve_says_ready_only_after_the_indexes_are_warm(serve_index, monkeypatch):
    said: list[str] = []
    warmed = SearchService.warm_all

    def warm_all(self: SearchService) -> None:
        warmed(self)
        said.append("warm")

    monkeypatch.setattr(SearchService, "warm_all", warm_all)
    monkeypatch.setattr("uvicorn.run", lambda *a, **k: said.append("listening"))
    settings = ServeSettings({"idx": str(serve_index)})
    app_module.run_http(settings, on_ready=lambda: said.append("ready"))
    assert said == ["warm", "ready", "listening"]
