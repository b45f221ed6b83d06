"""What an index records per document, on either backend: the entries of its
manifest, each backend's format version and the name of the chunk collection.

The embedded backend writes them in each generation's ``manifest.json``
(:mod:`thresher.index.embedded.layout`), the server backend in a manifest
collection beside the chunks (:mod:`thresher.index.server.layout`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["FOLDER_FORMAT", "SERVER_FORMAT", "COLLECTION", "DocEntry"]

#: The embedded index folder's format, bumped when a change to the folder makes
#: another thresher unable to read it (2: thresher's own files, no chromadb folder).
FOLDER_FORMAT = 2
#: The format of an index on a Chroma server (its header), bumped likewise.
SERVER_FORMAT = 1
#: The chromadb collection holding the chunks (server backend).
COLLECTION = "chunks"


@dataclass(slots=True)
class DocEntry:
    """What the index holds for one document.

    ``origin``: the absolute path of the file it was read from ('' when unknown:
    given as a record by a library caller, or indexed before origins were kept);
    an ingest scoped to some paths deletes only documents whose origin lies
    under one of them.
    """

    content_hash: str
    chunk_ids: list[str]
    ingested_at: str
    sanitized: dict[str, int] = field(default_factory=dict)
    origin: str = ""
