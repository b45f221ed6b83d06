"""BEIR dataset folders: their layout, so a corpus is read without its queries.

A BEIR dataset (Thakur et al., 2021; ``beir-cellar/beir``) is a folder::

    corpus.jsonl             {"_id", "title", "text", "metadata"?} per line
    queries.jsonl            {"_id", "text", "metadata"?} per line
    qrels/{train,dev,test}.tsv   "query-id<TAB>corpus-id<TAB>score", one header line

The corpus loader (:mod:`thresher.corpus.loaders`) reads ``corpus.jsonl`` like any
JSONL file (each document keeps its ``_id``) and skips ``queries.jsonl`` of such a
folder, so ``thresher index scifact/`` indexes the corpus only. The queries and
qrels become evaluation tasks in :mod:`thresher.tasks.beir`.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["CORPUS_FILE", "QUERIES_FILE", "QRELS_DIR", "is_beir_folder"]

CORPUS_FILE = "corpus.jsonl"
QUERIES_FILE = "queries.jsonl"
QRELS_DIR = "qrels"


def is_beir_folder(path: str | Path) -> bool:
    """Whether ``path`` is a BEIR dataset folder: ``queries.jsonl`` and a ``qrels/`` folder."""
    p = Path(path)
    return (p / QUERIES_FILE).is_file() and (p / QRELS_DIR).is_dir()
