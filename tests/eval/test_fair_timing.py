"""The paired protocol times both sides alike: side B meets none of side A's query caches."""

from __future__ import annotations

from index.helpers import CountingEmbedder
from thresher.config import Config
from thresher.eval.protocol import load_run_config, run_config
from thresher.index.embedded.store import EmbeddedStore
from thresher.tasks.readers import load_tasks


def test_each_side_embeds_its_own_queries(tiny_hotpot) -> None:
    task_file, _cache, index = tiny_hotpot
    tasks = load_tasks(task_file)
    plain = EmbeddedStore(index, Config())
    counting = CountingEmbedder(plain.embedder)  # the embedder the index was built with
    plain.close()
    store = EmbeddedStore(index, Config(), embedder=counting)
    try:
        run = load_run_config("single-shot")
        embedded: list[list[str]] = []
        for side in ("a", "b"):
            counting.texts.clear()
            run_config(tasks, store, run, side=side)
            embedded.append(list(counting.texts))
    finally:
        store.close()
    questions = [t.question for t in tasks]
    # side A: a warm-up search (the first load is nobody's episode time), then each
    # episode's question; side B: each question again, not A's cached vectors
    assert embedded[0] == [questions[0], *questions]
    assert embedded[1] == questions
