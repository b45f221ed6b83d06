"""The corpora a task file is evaluated on: pooled (one index, cached) or per question.

**Pooled** (HippoRAG's protocol): every question's paragraphs go into one corpus,
so each question is searched among every other question's paragraphs too.
:func:`pooled_index` builds that index once with :func:`thresher.index.backends.ingest`
and caches it under ``CACHE/<key>/``, the key hashing the files' contents, the
embedder and the chunking settings; a later run with the same inputs reuses it,
and a change to the files or those settings builds a new one (a folder is never
reused because it merely exists).

**Per question** (the datasets' own setting: a question sees only its own 10-20
paragraphs): building an index per question costs an embedding pass per task, so
instead the pooled index is searched through a filter admitting only the task's
documents (:func:`task_corpora` gives them; ``DocFilter.only`` and
:class:`~thresher.index.filtered.FilteredStore` apply them). BM25 statistics (IDF,
average length) are the pooled corpus's, the one difference from a true
per-question index.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Collection, Iterator, Sequence
from pathlib import Path
from typing import Any

from thresher.config import Config
from thresher.corpus.datasets import record_paragraphs
from thresher.corpus.document import Document
from thresher.corpus.ids import paragraph_doc_id
from thresher.errors import IndexNotFoundError, InputError
from thresher.paths import cache_dir as cache_folder
from thresher.tasks import browsecomp as bc
from thresher.tasks import readers as tk
from thresher.tasks import world as st
from thresher.tasks.beir import beir_source
from thresher.tasks.formats import SkipRecord

__all__ = [
    "task_documents",
    "corpus_key",
    "pooled_index",
    "task_corpora",
]

_PARAGRAPH_FORMATS = frozenset({"hotpotqa", "musique", "2wikimultihopqa"})
_KEY_VERSION = 1


def _format_of(path: Path) -> str:
    for _where, record in tk.iter_task_records(path):
        fmt = tk.detect_task_format(record)
        if fmt is None:
            from thresher.corpus.datasets import detect_format

            if detect_format(record) == "paragraph_corpus":
                return "paragraph_corpus"
            raise InputError(f"{path}: neither tasks nor a corpus of passages")
        return fmt
    raise InputError(f"{path}: no records; the file is empty")


def _corpus_sources(paths: Sequence[str | Path]) -> list[tuple[str, Path]]:
    """``(kind, path)`` to read: ``files`` (corpus loader), ``browsecomp``, ``world``."""
    out: list[tuple[str, Path]] = []
    for raw in paths:
        beir = beir_source(raw)
        if beir is not None:  # a BEIR dataset (folder, folder::split, qrels or queries file)
            out.append(("files", beir.corpus))
            continue
        p = Path(raw)
        if p.is_dir():
            out.append(("files", p))
            continue
        fmt = _format_of(p)
        if fmt in _PARAGRAPH_FORMATS or fmt == "paragraph_corpus":
            out.append(("files", p))
        elif fmt == "browsecomp":
            out.append(("browsecomp", p))
        elif fmt == "world_chains":
            out.append(("world", st.world_root(p)))
        else:
            raise InputError(
                f"{p}: {fmt} tasks carry no paragraphs to index; build an index of their "
                "corpus with 'thresher index' and pass it with --index"
            )
    return out


def task_documents(paths: Sequence[str | Path]) -> Iterator[Document]:
    """The pooled corpus of task files (and corpus files), each document once.

    HotpotQA / MuSiQue / 2Wiki files and HippoRAG ``{title, text}`` corpora: their
    paragraphs (:func:`thresher.corpus.loaders.iter_documents`, deduplicated by
    content id); a BrowseComp-Plus query file: the documents its records embed;
    a world's ``.world/chains.jsonl``: the world folder's documents; a folder:
    its files.

    Raises:
        InputError: a file with no corpus (``query``/``thresher`` tasks), or any
            loader error.
    """
    from thresher.corpus.loaders import iter_documents

    sources = _corpus_sources(paths)
    seen: set[str] = set()
    files = [p for kind, p in sources if kind in ("files", "world")]
    if files:
        for doc in iter_documents(files):
            seen.add(doc.doc_id)
            yield doc
    for kind, p in sources:
        if kind == "browsecomp":
            for doc in bc.iter_query_documents(p):
                if doc.doc_id not in seen:
                    seen.add(doc.doc_id)
                    yield doc


def _hash_tree(h: Any, root: Path) -> None:
    for f in sorted(q for q in root.rglob("*") if q.is_file()):
        rel = f.relative_to(root).as_posix()
        if rel.startswith(".") and not rel.startswith(".world/"):
            continue
        h.update(rel.encode() + b"\0" + f.read_bytes() + b"\0")


def corpus_key(paths: Sequence[str | Path], config: Config | None = None) -> str:
    """The cache key of a pooled index (24 hex digits of a sha256).

    It covers the files' contents (a folder: every file's path and bytes), the
    embedder, the chunking settings, the index folder's format and the thresher
    version (loaders and sanitization may change between versions).

    Raises:
        InputError: a path that does not exist.
    """
    config = config or Config()
    h = hashlib.sha256()
    from thresher._version import __version__
    from thresher.index.manifest import FOLDER_FORMAT

    settings = {
        "v": _KEY_VERSION,
        "format": FOLDER_FORMAT,
        "thresher": __version__,
        "embedder": config.retrieval.embedder,
        "chunking": [config.chunking.max_tokens, config.chunking.tokenizer],
    }
    h.update(json.dumps(settings, sort_keys=True).encode())
    for kind, p in _corpus_sources(paths):
        h.update(kind.encode() + b"\0")
        if p.is_dir():
            _hash_tree(h, p)
        else:
            h.update(hashlib.sha256(p.read_bytes()).digest())
    return h.hexdigest()[:24]


def pooled_index(
    paths: Sequence[str | Path],
    cache_dir: str | Path | None = None,
    config: Config | None = None,
    *,
    progress: bool = False,
    tasks: Collection[str] | None = None,
) -> Path:
    """The index of the pooled corpus of ``paths``, built once and cached.

    Args:
        paths: task files (and corpus files or folders) whose documents form the corpus.
        cache_dir: where cached indexes live (default: the ``eval-index`` cache,
            :func:`thresher.paths.cache_dir`).
        config: chunking and embedder settings.
        progress: show the embedding progress bar.
        tasks: the ids of the tasks that will run (``eval --limit``/``--sample``);
            None: all of them. When given, the paragraphs that only other questions
            of the HotpotQA / MuSiQue / 2Wiki files hold are left out, so only what
            these tasks need is embedded (a smaller pool of distractors); that index
            is cached under the full key plus a hash of the ids. A full index of
            ``paths`` already cached is used instead.

    Returns:
        The index folder ``cache_dir/<corpus_key>[-<tasks hash>]``; open it with ``open_store``.

    Raises:
        InputError: as :func:`task_documents`.
    """
    from thresher.index.backends import ingest
    from thresher.index.embedded.layout import current_generation

    config = config or Config()
    root = Path(cache_dir) if cache_dir is not None else cache_folder("eval-index")
    full = root / corpus_key(paths, config)
    drop = _other_tasks_paragraphs(paths, tasks) if tasks is not None else frozenset()
    target = full
    if drop:
        chosen = hashlib.sha256("\n".join(sorted(tasks or ())).encode()).hexdigest()[:12]
        target = root / f"{full.name}-{chosen}"
    for folder in dict.fromkeys((full, target)):
        try:
            current_generation(folder)
            return folder
        except IndexNotFoundError:
            pass
    documents = (d for d in task_documents(paths) if d.doc_id not in drop)
    ingest(documents, target, config, progress=progress)
    (target / "SOURCES.json").write_text(
        json.dumps([str(Path(p).resolve()) for p in paths], indent=1) + "\n", encoding="utf-8"
    )
    return target


def _other_tasks_paragraphs(paths: Sequence[str | Path], tasks: Collection[str]) -> frozenset[str]:
    """The paragraph ids of the dataset files in ``paths`` that no task of ``tasks`` holds.

    Only HotpotQA / MuSiQue / 2Wiki task files count: any other input (a corpus
    file, a folder, BrowseComp-Plus, a world) keeps every document.
    """
    wanted = set(tasks)
    held: set[str] = set()
    needed: set[str] = set()
    for raw in paths:
        p = Path(raw)
        if beir_source(raw) is not None or p.is_dir() or _format_of(p) not in _PARAGRAPH_FORMATS:
            continue
        for task_id, doc_ids in task_corpora(p).items():
            held.update(doc_ids)
            if task_id in wanted:
                needed.update(doc_ids)
    return frozenset(held - needed)


def task_corpora(path: str | Path) -> dict[str, frozenset[str]]:
    """Each task's own documents: ``{task_id: doc ids}`` (the per-question corpus).

    HotpotQA / MuSiQue / 2Wiki: the question's context paragraphs; BrowseComp-Plus:
    its evidence, gold and negative documents.

    Raises:
        InputError: a format without per-question documents (world chains, ``query``
            or ``thresher`` tasks), or any reader error.
    """
    if beir_source(path) is not None:
        raise InputError(f"{path}: BEIR tasks have no per-question documents; use --corpus pooled")
    p = Path(path)
    out: dict[str, frozenset[str]] = {}
    fmt: str | None = None
    for where, record in tk.iter_task_records(p):
        fmt = fmt or tk.detect_task_format(record)
        if fmt == "browsecomp":
            task = bc.browsecomp_task(record, where)
            out[task.task_id] = frozenset(
                task.gold_doc_ids + list(task.metadata.get("negative_doc_ids", []))
            )
            continue
        if fmt not in _PARAGRAPH_FORMATS:
            raise InputError(
                f"{p}: {fmt} tasks have no per-question documents; use the pooled corpus"
            )
        try:
            task = tk._CONVERTERS[fmt](record, where)
        except SkipRecord:
            continue
        paragraphs = record_paragraphs(fmt, record) or []
        out[task.task_id] = frozenset(paragraph_doc_id(t, x) for t, x in paragraphs)
    return out
