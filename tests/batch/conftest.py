"""Batch fixtures: one local Ray instance per session, and a small indexed world."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest


@pytest.fixture(scope="session")
def ray_local() -> Iterator[Any]:
    """A local Ray instance (2 CPUs, no dashboard) for the whole session, shut down after.

    A ``RayRunner`` made while it is up joins it and leaves it running, so every
    test pays Ray's start-up once.
    """
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, include_dashboard=False, logging_level=logging.ERROR, log_to_driver=False)
    try:
        yield ray
    finally:
        ray.shutdown()


@pytest.fixture(scope="session")
def small_world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A small generated world (seed 7): six chains' tasks, their documents indexed.

    Keys: ``tasks`` (the chains as a task file), ``index``, ``narrow`` (a config:
    single-shot returning 2 documents from 3 results), ``root``.
    """
    from thresher.corpus.loaders import iter_documents
    from thresher.index.backends import ingest
    from thresher.synth.world.generate import generate_world
    from thresher.tasks.readers import load_tasks

    root = tmp_path_factory.mktemp("batch-world")
    generate_world(7, "small", root / "world")
    chains = root / "world" / ".world" / "chains.jsonl"
    lines = chains.read_text(encoding="utf-8").splitlines()[:6]
    tasks_file = root / "tasks.jsonl"
    tasks_file.write_text("\n".join(lines) + "\n", encoding="utf-8")
    tasks = load_tasks(tasks_file)
    keep = {d for t in tasks for d in t.gold_doc_ids + t.metadata["distractors"]}
    docs = [d for d in iter_documents([root / "world"]) if d.doc_id in keep]
    ingest(docs, root / "index", progress=False)
    narrow = root / "narrow.toml"
    narrow.write_text(
        'label = "narrow"\n[policy]\nname = "single-shot"\ntop_k = 2\n'
        "[episode]\nsearch_results = 3\n",
        encoding="utf-8",
    )
    return {"root": root, "tasks": tasks_file, "index": root / "index", "narrow": narrow}
