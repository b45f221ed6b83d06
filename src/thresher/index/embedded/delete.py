"""Deleting whole documents from an embedded index, with the discipline of an ingest.

Under the ingest lock, a new generation is written beside the live one (every
chunk of the other documents kept as it is, :mod:`thresher.index.embedded.writer`;
the manifest without them) and committed
by the same pointer switch an ingest uses: a killed run leaves the last committed
index as it was, and open stores switch to the new one as they do after an ingest.
Every id is checked first (:func:`thresher.index.ingest.common.checked_deletion`):
one that is not indexed deletes nothing. The server backend's deletion is
:mod:`thresher.index.server.delete`.
"""

from __future__ import annotations

import logging
import shutil
import sqlite3
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from thresher._version import __version__
from thresher.errors import InputError
from thresher.index.embedded import holds, layout
from thresher.index.embedded.vectors import ANN
from thresher.index.embedded.writer import NewChunks, OldGeneration, write_generation
from thresher.index.ingest import common
from thresher.index.store import IngestReport

__all__ = ["delete_embedded"]

_log = logging.getLogger("thresher.index")


def delete_embedded(index_dir: str | Path, doc_ids: Sequence[str]) -> IngestReport:
    """Delete documents from the embedded index in ``index_dir`` (see the module docs).

    Raises:
        IndexNotFoundError: no index there.
        UnknownIdError: an id is not indexed (nothing is deleted).
        InputError: no id given, every document named, or the folder cannot be written.
    """
    root = Path(index_dir)

    def waiting() -> None:
        _log.warning("another ingest into %s is running; waiting for it to finish", root)

    with layout.ingest_lock(root, on_wait=waiting):
        old_gen = layout.current_generation(root)
        old = layout.read_manifest(old_gen)
        gone = common.checked_deletion(doc_ids, old.documents, root)
        name = layout.next_generation_name(root)
        holds.remove_stale_generations(root, keep=old_gen)
        generation = layout.new_generation(root, name)
        try:
            manifest = _rewrite(generation, old_gen, old, gone)
            layout.write_manifest(generation, manifest)
            layout.commit_generation(root, generation)
        except (OSError, sqlite3.Error) as exc:
            shutil.rmtree(generation, ignore_errors=True)
            raise InputError(
                f"cannot write the index at {root} ({exc}); the last committed index is unchanged"
            ) from exc
        except BaseException:
            shutil.rmtree(generation, ignore_errors=True)
            raise
        holds.remove_stale_generations(root, keep=generation)
    return common.deletion_report(old.documents, gone)


def _rewrite(
    generation: Path, old_gen: Path, old: layout.Manifest, gone: Sequence[str]
) -> layout.Manifest:
    """The new generation's files without ``gone``; its manifest."""
    from thresher.index.embedded.ingest import _sum_sanitized

    previous = OldGeneration(old_gen, old.chunk_ids())
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
    ann = (old_gen / ANN).is_file()  # as the ingest that wrote the live one decided
    write_generation(generation, ids, NewChunks(), previous, old.dimension, ann=ann)
    return manifest
