"""StoreRef: opened once per process through the backend registry, closed by its runner."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

from thresher.batch.runner import LocalRunner
from thresher.batch.stores import StoreRef, close_stores, open_keys, resolve_store
from thresher.config import Config
from thresher.index.backends import Backend, register_backend

_OPENED: list[Any] = []


class _Fake:
    def __init__(self, location: str) -> None:
        self.location, self.closed = location, False

    def close(self) -> None:
        self.closed = True


def _open(location: str, config: Config, embedder: Any) -> Any:
    store = _Fake(location)
    _OPENED.append(store)
    return store


def _ingest(*args: Any) -> Any:
    raise NotImplementedError


register_backend(Backend("batch-test", ("batch-test",), _open, _ingest))


def test_a_ref_opens_once_per_process_and_settings() -> None:
    ref = StoreRef("batch-test://one", Config())
    with ThreadPoolExecutor(4) as pool:
        stores = list(pool.map(lambda _: resolve_store(ref), range(8)))
    assert len({id(s) for s in stores}) == 1 and len(_OPENED) == 1
    other = StoreRef("batch-test://one", Config().override({"retrieval.rrf_k": 10}))
    assert resolve_store(other) is not stores[0]  # other settings: another store
    close_stores()
    assert all(s.closed for s in _OPENED) and not open_keys()


def test_a_runner_closes_only_what_its_jobs_opened() -> None:
    before = resolve_store(StoreRef("batch-test://before"))
    with LocalRunner(2) as runner:
        runner.map(lambda loc: resolve_store(StoreRef(loc)), ["batch-test://a", "batch-test://b"])
        assert len(open_keys()) == 3
    assert not before.closed and len(open_keys()) == 1
    close_stores()
    assert before.closed
