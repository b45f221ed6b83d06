"""Where the environment's index and tasks come from: a thresher index and a tasks file, or
a seeded fictional world built once into a cache folder.

``world_source(seed, size)`` generates the world (``thresher synth world``), indexes all of it
and returns the index folder and its planted chains (``.world/chains.jsonl``) as the tasks
file. A world already built there is reused (a ``READY`` file marks a finished build).
``load_thresher_tasks(path)`` reads any task format thresher reads: ``thresher synth tasks``
output, a world's chains, HotpotQA/MuSiQue/BEIR files.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from thresher.config import Config
from thresher.corpus.loaders import iter_documents
from thresher.index.backends import ingest
from thresher.paths import cache_root
from thresher.synth.world import generate_world
from thresher.tasks.readers import load_tasks
from thresher.tasks.task import Task

__all__ = ["WORLD_CACHE", "world_source", "load_thresher_tasks"]

#: the folder under thresher's cache root holding the built worlds
WORLD_CACHE = "verifiers-worlds"


def world_source(seed: int = 7, size: str = "small", root: Path | None = None) -> tuple[Path, Path]:
    """The index folder and tasks file of the seeded world ``seed``/``size``, built under
    ``root`` (default ``<thresher cache>/verifiers-worlds/seed<seed>-<size>``) if absent.

    Raises:
        InputError: an unknown world size (from :func:`thresher.synth.world.generate_world`).
    """
    where = root if root is not None else cache_root() / WORLD_CACHE / f"seed{seed}-{size}"
    index, chains = where / "index", where / "corpus" / ".world" / "chains.jsonl"
    if (where / "READY").is_file():
        return index, chains
    if where.exists():  # an interrupted build: start again
        shutil.rmtree(where)
    where.mkdir(parents=True)
    generate_world(seed, size, where / "corpus")
    ingest(iter_documents([where / "corpus"]), index, Config(), progress=False)
    (where / "READY").write_text(f"seed {seed} size {size}\n")
    return index, chains


def load_thresher_tasks(path: Path, limit: int | None = None) -> list[Task]:
    """The tasks of ``path`` (any format thresher reads) that name gold documents (the
    reward needs them), the first ``limit`` of them when given.

    Raises:
        InputError: an unreadable tasks file, or none of its tasks names a gold document.
    """
    from thresher.errors import InputError

    tasks = [t for t in load_tasks(path) if t.gold_doc_ids]
    if not tasks:
        raise InputError(f"{path}: no task names gold documents; the reward needs them")
    return tasks if limit is None else tasks[:limit]
