"""Deleting whole documents from an index on a Chroma server.

The header is marked ``writing`` first (readers keep their state meanwhile), then
the chunks and the manifest entries go, then the header is written ``ready`` with
a new version marker: the BM25 side index every reader caches is rebuilt on its
next look, as after an ingest. Every id is checked first
(:func:`thresher.index.ingest.common.checked_deletion`): one that is not indexed
deletes nothing. The embedded backend's deletion is :mod:`thresher.index.embedded.delete`.
"""

from __future__ import annotations

from collections.abc import Sequence

from thresher._version import __version__
from thresher.errors import IndexNotFoundError, InputError
from thresher.index.ingest import common
from thresher.index.server import layout as sl
from thresher.index.server.ingest import _mark_ready
from thresher.index.store import IngestReport

__all__ = ["delete_server"]


def delete_server(location: str, doc_ids: Sequence[str]) -> IngestReport:
    """Delete documents from the thresher index in a Chroma server collection.

    Raises:
        BackendUnavailableError: no server answers there.
        IndexNotFoundError: the collection holds no thresher index.
        UnknownIdError: an id is not indexed (nothing is deleted).
        InputError: no id given, every document named, or an ingest is mid-run.
    """
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
        gone = common.checked_deletion(doc_ids, known, where.url)
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
    return common.deletion_report(known, gone)
