"""Deleting whole documents from an index, with the discipline of an ingest.

* **Embedded folder**: under the ingest lock, a new generation is written beside
  the live one (its chroma folder copied, the documents' chunks deleted from it,
  the BM25 and grep side indexes rebuilt from what remains, the manifest without
  them) and committed by the same pointer switch an ingest uses: a killed run
  leaves the last committed index as it was, and open stores switch to the new
  one as they do after an ingest.
* **Chroma server**: the header is marked ``writing`` first (readers keep their
  state meanwhile), then the chunks and the manifest entries go, then the header
  is written ``ready`` with a new version marker: the BM25 side index every
  reader caches is rebuilt on its next look, as after an ingest.

Either way every id is checked first: one that is not indexed deletes nothing.
"""

from __future__ import annotations

import logging
import shutil
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from thresher import __version__
from thresher.errors import InputError, UnknownIdError
from thresher.index import grep_index, layout
from thresher.index import ingest_common as common
from thresher.index import server_layout as sl
from thresher.index.bm25 import Bm25Index
from thresher.index.chroma import open_client
from thresher.index.grep_index import GrepIndex
from thresher.index.records import indexed_text
from thresher.index.store import IngestReport

__all__ = ["delete_embedded", "delete_server"]

_log = logging.getLogger("thresher.index")


def _checked(doc_ids: Sequence[str], known: Any, location: object) -> list[str]:
    """``doc_ids`` without repeats; raises when one is unknown or none would be left."""
    wanted = list(dict.fromkeys(doc_ids))
    if not wanted:
        raise InputError("name at least one document id to delete")
    unknown = [d for d in wanted if d not in known]
    if unknown:
        shown = ", ".join(repr(d) for d in unknown[:10])
        raise UnknownIdError(
            f"not in the index at {location}: {shown}; nothing was deleted "
            "(`thresher docs list` shows the ids)",
            unknown,
        )
    if len(wanted) >= len(known):
        raise InputError(
            f"deleting {len(wanted)} documents would leave the index at {location} empty; "
            "remove the index itself instead"
        )
    return wanted


def _report(known: Any, gone: Sequence[str], seconds: float = 0.0) -> IngestReport:
    report = IngestReport(documents_deleted=len(gone), documents_kept=len(known) - len(gone))
    report.chunks_deleted = len(common.stale_chunk_ids(known, gone))
    report.seconds = seconds
    return report


def delete_embedded(index_dir: str | Path, doc_ids: Sequence[str]) -> IngestReport:
    """Delete documents from the embedded index in ``index_dir`` (see the module docs).

    Raises:
        IndexNotFoundError: no index there.
        UnknownIdError: an id is not indexed (nothing is deleted).
        InputError: no id given, every document named, or the folder cannot be written.
    """
    from chromadb.errors import ChromaError

    root = Path(index_dir)

    def waiting() -> None:
        _log.warning("another ingest into %s is running; waiting for it to finish", root)

    with layout.ingest_lock(root, on_wait=waiting):
        old_gen = layout.current_generation(root)
        old = layout.read_manifest(old_gen)
        gone = _checked(doc_ids, old.documents, root)
        name = layout.next_generation_name(root)
        layout.remove_stale_generations(root, keep=old_gen)
        generation = layout.new_generation(root, name)
        try:
            manifest = _rewrite(generation, old_gen, old, gone)
            layout.write_manifest(generation, manifest)
            layout.commit_generation(root, generation)
        except (OSError, ChromaError) as exc:
            shutil.rmtree(generation, ignore_errors=True)
            raise InputError(
                f"cannot write the index at {root} ({exc}); the last committed index is unchanged"
            ) from exc
        except BaseException:
            shutil.rmtree(generation, ignore_errors=True)
            raise
        layout.remove_stale_generations(root, keep=generation)
    return _report(old.documents, gone)


def _rewrite(
    generation: Path, old_gen: Path, old: layout.Manifest, gone: Sequence[str]
) -> layout.Manifest:
    """The new generation's chroma folder and side indexes without ``gone``; its manifest."""
    from thresher.index.ingest import _chunk_texts, _sum_sanitized

    shutil.copytree(old_gen / "chroma", generation / "chroma")
    client = open_client(generation / "chroma")
    try:
        collection = client.get_collection(layout.COLLECTION, embedding_function=None)
        batch = client.get_max_batch_size()
        common.delete_ids(collection, common.stale_chunk_ids(old.documents, gone), batch)
        dropped = set(gone)
        documents = {d: e for d, e in old.documents.items() if d not in dropped}
        manifest = replace(
            old,
            thresher_version=__version__,
            documents=documents,
            sanitized=_sum_sanitized(documents.values()),
            updated_at=common.utc_now(),
        )
        ids = manifest.chunk_ids()
        texts = _chunk_texts(collection, ids, {}, batch)
    finally:
        client.close()
    Bm25Index.build(ids, [indexed_text(title, text) for title, text in texts]).save(
        generation / "bm25"
    )
    GrepIndex.build(generation / grep_index.FILE, (text for _, text in texts))
    return manifest


def delete_server(location: str, doc_ids: Sequence[str]) -> IngestReport:
    """Delete documents from the thresher index in a Chroma server collection.

    Raises:
        BackendUnavailableError: no server answers there.
        IndexNotFoundError: the collection holds no thresher index.
        UnknownIdError: an id is not indexed (nothing is deleted).
        InputError: no id given, every document named, or an ingest is mid-run.
    """
    from thresher.errors import IndexNotFoundError
    from thresher.index.server_ingest import _mark_ready

    where = sl.parse_location(location)
    client = sl.connect(where)
    try:
        collection = client.get_collection(where.collection, embedding_function=None)
        header = sl.ServerHeader.from_metadata(collection.metadata, where.url)
        if header is None:
            raise IndexNotFoundError(
                f"collection {where.collection!r} at {where.url} holds no thresher index"
            )
        if header.state == "writing":
            raise InputError(
                f"an ingest into {where.url} is running or stopped midway; let it finish "
                "(or run `thresher index` again), then delete"
            )
        manifest = client.get_collection(
            sl.manifest_name(where.collection), embedding_function=None
        )
        entries = sl.read_entries(manifest)
        known = {d: e for d, (e, _) in entries.items()}
        gone = _checked(doc_ids, known, where.url)
        header.state, header.thresher_version = "writing", __version__
        collection.modify(metadata=header.to_metadata())
        batch = client.get_max_batch_size()
        common.delete_ids(collection, common.stale_chunk_ids(known, gone), batch)
        common.delete_ids(manifest, gone, batch)
        dropped = set(gone)
        final = {d: e for d, e in known.items() if d not in dropped}
        _mark_ready(collection, header, final, common.utc_now())
    except sl.transport_errors() as exc:
        raise sl.unavailable(where, exc) from exc
    finally:
        client.close()
    return _report(known, gone)
