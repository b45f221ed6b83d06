"""Task files and their indexes for training and benchmarking the local policy (I/O).

A *corpus group* is a list of dataset files indexed together (the pooled
setting: every question's paragraphs in one index), e.g. both HotpotQA files,
or the MuSiQue questions file plus its corpus file. Files that hold no
questions (a corpus file) contribute documents only.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

from thresher.config import Config
from thresher.errors import InputError
from thresher.tasks.task import Task

__all__ = ["group_tasks", "ensure_index", "index_dir_for"]


def group_tasks(files: Sequence[str | Path]) -> list[Task]:
    """The tasks of every file of a group, in order (files without questions add none).

    Raises ``InputError`` when no file of the group holds a question.
    """
    from thresher.tasks.readers import read_tasks

    tasks: list[Task] = []
    for f in files:
        try:
            tasks.extend(read_tasks(f).tasks)
        except InputError:  # a corpus-only file: documents, no questions
            continue
    if not tasks:
        raise InputError(
            f"no questions in {', '.join(str(f) for f in files)}; "
            "give at least one HotpotQA / MuSiQue / 2Wiki / thresher task file"
        )
    return tasks


def index_dir_for(files: Sequence[str | Path], cache: str | Path) -> Path:
    """A stable cache folder under ``cache`` for this group of files (named by their paths;
    :func:`ensure_index` keys the index inside it by their contents)."""
    key = "\n".join(str(Path(f).resolve()) for f in files)
    stem = Path(files[0]).stem.split("_")[0] if files else "corpus"
    return Path(cache) / f"{stem}-{hashlib.sha256(key.encode()).hexdigest()[:10]}"


def ensure_index(
    files: Sequence[str | Path],
    index_dir: str | Path,
    config: Config | None = None,
    *,
    progress: bool = True,
) -> Path:
    """The index of ``files`` (pooled), built once and cached under ``index_dir``.

    The index lives in ``index_dir/<key>``, the key hashing the files' contents,
    the embedder, the chunking settings and the thresher version
    (:func:`thresher.tasks.corpus.corpus_key`; built by
    :func:`thresher.tasks.corpus.pooled_index`), so a change to the data or the
    settings builds a new index instead of reusing a stale one.

    Args:
        files: the dataset files of one corpus group.
        index_dir: the cache folder of this group's indexes.
        config: chunking and embedder settings (default ``Config()``).
        progress: show the embedding progress bar (only on a terminal).

    Returns:
        The index folder; open it with :func:`thresher.index.backends.open_store`.

    Raises the loader's and ingest's typed errors (unreadable files, bad formats).
    """
    from thresher.tasks.corpus import pooled_index

    return pooled_index(files, index_dir, config or Config(), progress=progress)
