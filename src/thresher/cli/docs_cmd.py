"""``thresher docs list|delete --index DIR``: the documents an index holds.

``docs list`` prints one document a line (``id  (N chunks)  title``) in corpus order,
narrowed by ``--path GLOB`` and ``--where JSON`` as a search is; ``--json``
prints ``[{"doc_id", "title", "source", "chunks", "chunk_ids", "metadata"}]``.
``docs delete ID...`` removes whole documents from every part of the index (the
chunks, the BM25 and grep side indexes, the vectors) as one commit, the way an
ingest commits: an unknown id deletes nothing, and the error names the nearest
ids (the id of an indexed file named by its path first).
"""

from __future__ import annotations

import argparse
from typing import Any

from thresher.cli._common import (
    add_config_args,
    add_filter_args,
    add_index_arg,
    doc_filter,
    load_config,
    print_json,
    terminal_line,
)

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="docs_action", metavar="ACTION", required=True)
    listing = sub.add_parser("list", help="list the indexed documents")
    add_index_arg(listing)
    add_filter_args(listing)
    add_config_args(listing)
    delete = sub.add_parser("delete", help="delete documents by id")
    delete.add_argument("ids", nargs="+", metavar="ID", help="document ids")
    add_index_arg(delete)
    add_config_args(delete)


def _managing(store: Any) -> Any:
    from thresher.errors import InputError
    from thresher.index.store import ManagesDocuments

    if not isinstance(store, ManagesDocuments):
        raise InputError(f"this index backend ({type(store).__name__}) cannot list or delete")
    return store


def _delete_or_suggest(store: Any, ids: list[str]) -> Any:
    """Delete ``ids``; when one is unknown, the ``UnknownIdError`` also names the ids
    nearest to each unknown one (nothing is deleted)."""
    from thresher.cli._ids import id_of_path, near_ids
    from thresher.corpus.ids import doc_of
    from thresher.errors import UnknownIdError

    try:
        return store.delete_documents(ids)
    except UnknownIdError as exc:
        known = [d.doc_id for d in store.list_documents()]
        near: list[str] = []
        for ident in exc.ids:
            mapped = id_of_path(ident, known)
            near += [mapped] if mapped is not None else near_ids(doc_of(ident), known)
        if not near:
            raise
        hint = ", ".join(repr(n) for n in dict.fromkeys(near))
        raise UnknownIdError(f"{exc}; did you mean {hint}?", exc.ids) from exc


def run(args: argparse.Namespace) -> int:
    from thresher.index.backends import open_store

    where = doc_filter(args) if args.docs_action == "list" else None
    store = _managing(open_store(args.index, load_config(args)))
    try:
        if args.docs_action == "list":
            docs = store.list_documents(where)
        else:
            report = _delete_or_suggest(store, args.ids)
    finally:
        store.close()
    if args.docs_action == "delete":
        if args.json:
            print_json(report.to_dict())
        else:
            print(
                f"deleted {report.documents_deleted} of {report.documents_deleted + report.documents_kept}"
                f" documents ({report.chunks_deleted} chunks) from {terminal_line(str(args.index))}"
            )
        return 0
    if args.json:
        print_json([d.to_dict() for d in docs])
        return 0
    for d in docs:
        chunks = f"{len(d.chunk_ids)} chunk" + ("s" if len(d.chunk_ids) != 1 else "")
        print(terminal_line(f"{d.doc_id}  ({chunks})  {d.title}"))
    if not docs:
        print("no documents" + (" match" if where is not None else ""))
    return 0
