"""The Chroma server store: the ``Store`` protocol over ``chromadb.HttpClient``.

Talks to a Chroma server (``chroma run``, or Chroma's distributed deployment)
holding an index written by :func:`thresher.index.server.ingest.ingest_server`
(layout in :mod:`thresher.index.server.layout`). Dense search, grep (``$regex``,
server-side, behind the same guard as the embedded store) and reads go to the
server; the BM25 side index is built from the collection (every id and text,
read in pages) and cached in a local folder keyed by the collection's version
marker and chunk count, so it is rebuilt only when the index changed.

Hybrid search: at open, a capability probe runs one minimal server-side
``search`` (:func:`thresher.index.server.search.probe_search`). When the server
runs it (distributed Chroma, Chroma Cloud) and the collection has the sparse
BM25 key an ingest into such a server writes (``header.sparse_key``), hybrid
search runs on the server: ``Rrf`` over the dense and the sparse ``Knn``, with
the same RRF contract and per-retriever depth as here, and the per-retriever
ranks and scores read from the same request (:mod:`~thresher.index.server.search`).
Otherwise (``chroma run`` answers "Search operation is not implemented for
local executor") it is fused here, by :func:`thresher.index.fusion.fuse_retrievers`
with ``config.retrieval.rrf_k``, from the BM25 side index and the server's dense
query, exactly as the embedded store does. ``stats().extra["fusion"]`` names the
path (``server`` or ``client``), ``extra["fusion_reason"]`` why (the server's
refusal word for word), and ``extra["bm25_cache"]`` the folder of the side index.

A long-running store re-reads the header at most every ``refresh_s`` seconds
and switches to the new state once an ingest has finished (never mid-run).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import threading
import time
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from thresher.config import Config
from thresher.errors import (
    IndexNotFoundError,
)
from thresher.index.bm25 import Bm25Index
from thresher.index.embed.embedder import Embedder, check_built_with, get_embedder
from thresher.index.filters import DocFilter
from thresher.index.records import indexed_text
from thresher.index.server import layout as sl
from thresher.index.server.search import (
    hybrid_searches,
    probe_search,
    read_hybrid,
    sparse_unavailable,
)
from thresher.index.server.source import ChromaSource
from thresher.index.store import Hit, IngestReport, StoreStats
from thresher.index.view import IndexView
from thresher.index.view_store import ViewStore, check_query
from thresher.paths import cache_dir

__all__ = ["ServerStore", "open_server_store", "default_cache_dir", "fusion_path"]

_CACHE_FORMAT = 1


def fusion_path(
    refusal: str | None, sparse_key: str, rrf_k: int, local_problem: str | None = None
) -> tuple[str, str]:
    """Where hybrid search is fused, ``("server" | "client", why)``.

    Args:
        refusal: the server's answer to the capability probe (None: it ran the search).
        sparse_key: the collection's sparse BM25 key ('' when it has none).
        rrf_k: ``config.retrieval.rrf_k``.
        local_problem: why this machine cannot embed a sparse query (None: it can).
    """
    if refusal is not None:
        return "client", (
            f"server-side hybrid not offered by this server ({refusal}); fused client-side"
        )
    if not sparse_key:
        return "client", (
            "server-side hybrid offered by the server, but this collection has no sparse key; "
            "fused client-side"
        )
    if local_problem is not None:
        return "client", (
            f"server-side hybrid offered by the server, but {local_problem}; fused client-side"
        )
    return "server", (
        f"server-side hybrid: Rrf(k={rrf_k + 1}, 0-based ranks, as k={rrf_k} here) over the "
        f"dense embedding and the sparse key {sparse_key!r}"
    )


def default_cache_dir(location: sl.ServerLocation) -> Path:
    """``<host>_<port>_<collection>`` in the ``server-bm25`` cache
    (:func:`thresher.paths.cache_dir`)."""
    name = f"{location.host}_{location.port}_{location.collection}"
    return cache_dir("server-bm25") / name


@dataclass(frozen=True, slots=True)
class _State:
    fingerprint: str
    header: sl.ServerHeader
    view: IndexView
    collection: Any  # the guarded chunk collection (its server-side search)
    folder: Path  # where this state's BM25 side index is cached


def open_server_store(location: str, config: Config | None = None) -> ServerStore:
    """Open the server index at ``http(s)://host:port[/collection]`` (see :class:`ServerStore`)."""
    return ServerStore(location, config=config)


class ServerStore(ViewStore):
    """The ``Store`` protocol over one collection on a Chroma server.

    Args:
        url_or_host: ``http(s)://host:port[/collection]``, or a host name.
        port: the port when ``url_or_host`` is a host (default 8000).
        collection: the collection, unless the URL names one.
        config: retrieval and grep settings (defaults: ``Config()``).
        embedder: the query embedder; defaults to the one the index was built with.
        cache_dir: the folder of the local BM25 side index (default
            :func:`default_cache_dir`).
        refresh_s: how often (seconds) to look for a newer index state.

    Raises:
        BackendUnavailableError: no server answers there (says how to start one).
        IndexNotFoundError: the server has no thresher index in that collection.
        IndexVersionError: the index was written by a newer thresher.
        ConfigError: ``embedder`` is not the one the index was built with.
    """

    backend = "server"

    def __init__(
        self,
        url_or_host: str,
        port: int | None = None,
        collection: str = sl.DEFAULT_COLLECTION,
        config: Config | None = None,
        embedder: Embedder | None = None,
        cache_dir: str | Path | None = None,
        refresh_s: float = 2.0,
    ) -> None:
        if "://" in url_or_host:
            self.location = sl.parse_location(url_or_host, collection)
        else:
            self.location = sl.ServerLocation(url_or_host, port or sl.DEFAULT_PORT, collection)
        self.url = self.location.url
        self.cache_dir = Path(cache_dir) if cache_dir else default_cache_dir(self.location)
        self.refresh_s = refresh_s
        self._client = sl.connect(self.location)
        try:
            raw, header = self._header()
            if header is None:
                raise IndexNotFoundError(
                    f"collection {self.location.collection!r} at {self.url} holds no thresher "
                    f"index; build one with `thresher index PATH --index {self.url}`"
                )
            emb = embedder or get_embedder(header.embedder)
            check_built_with(emb, header.embedder, header.dimension, self.url)
            super().__init__(config or Config(), emb)
            self._state = self._load(raw, header)
            self._checked = time.monotonic()
            #: the server's refusal of a minimal search (None: it runs search), probed once
            self.search_refusal = probe_search(
                self._state.collection, header.dimension, self.config.retrieval.rrf_k
            )
        except BaseException:
            self._client.close()
            raise

    # -- the index state ----------------------------------------------------------------------

    def _header(self) -> tuple[Any, sl.ServerHeader | None]:
        """The chunk collection (guarded) and its header."""
        from chromadb.errors import NotFoundError

        try:
            raw = self._client.get_collection(self.location.collection, embedding_function=None)
        except NotFoundError as exc:
            raise IndexNotFoundError(
                f"no collection {self.location.collection!r} at {self.url}; build it with "
                f"`thresher index PATH --index {self.url}`"
            ) from exc
        except sl.transport_errors() as exc:
            raise sl.unavailable(self.location, exc) from exc
        return sl.Guarded(raw, self.location), sl.ServerHeader.from_metadata(raw.metadata, self.url)

    def _fingerprint(self, collection: sl.Guarded, header: sl.ServerHeader) -> str:
        count = collection.count()
        return f"{collection.inner.id}:{header.version}:{count}:{header.state}"

    def _load(self, collection: sl.Guarded, header: sl.ServerHeader) -> _State:
        """The view for the collection's current state: BM25 from the cache or rebuilt."""
        fingerprint = self._fingerprint(collection, header)
        folder = self.cache_dir / hashlib.sha256(fingerprint.encode()).hexdigest()[:16]
        bm25: Bm25Index | None = None
        if (folder / "fingerprint.json").is_file():
            with contextlib.suppress(OSError, ValueError, KeyError):
                stamp = json.loads((folder / "fingerprint.json").read_text(encoding="utf-8"))
                if stamp["fingerprint"] == fingerprint and stamp["format"] == _CACHE_FORMAT:
                    bm25 = Bm25Index.load(folder / "bm25")
        if bm25 is None:
            bm25 = self._build_bm25(collection)
            self._save(folder, fingerprint, bm25)
        return _State(
            fingerprint, header, IndexView.of(ChromaSource(collection), bm25), collection, folder
        )

    def _build_bm25(self, collection: sl.Guarded) -> Bm25Index:
        """BM25 over every chunk on the server, in corpus order (manifest order, position)."""
        entries = self._entries()
        order = {doc_id: o for doc_id, (_, o) in entries.items()}
        tail = len(order)
        rows: list[tuple[int, str, int, str, str]] = []
        for got in sl.pages(collection, ["documents", "metadatas"]):
            for cid, text, meta in zip(got["ids"], got["documents"], got["metadatas"], strict=True):
                doc_id = str(meta["doc_id"])
                rows.append((order.get(doc_id, tail), doc_id, int(meta["position"]), cid,
                             indexed_text(str(meta.get("title", "")), text or "")))  # fmt: skip
        rows.sort(key=lambda r: r[:3])
        return Bm25Index.build([r[3] for r in rows], [r[4] for r in rows])

    def _entries(self) -> dict[str, tuple[Any, int]]:
        from chromadb.errors import NotFoundError

        name = sl.manifest_name(self.location.collection)
        try:
            manifest = self._client.get_collection(name, embedding_function=None)
        except NotFoundError:
            return {}
        except sl.transport_errors() as exc:
            raise sl.unavailable(self.location, exc) from exc
        return sl.read_entries(sl.Guarded(manifest, self.location))

    def _save(self, folder: Path, fingerprint: str, bm25: Bm25Index) -> None:
        """Write the BM25 cache atomically (build aside, rename); drop older states."""
        temp = folder.with_name(f"{folder.name}.tmp-{os.getpid()}-{threading.get_ident()}")
        try:
            bm25.save(temp / "bm25")
            stamp = {"format": _CACHE_FORMAT, "fingerprint": fingerprint, "url": self.url}
            (temp / "fingerprint.json").write_text(json.dumps(stamp), encoding="utf-8")
            shutil.rmtree(folder, ignore_errors=True)
            os.replace(temp, folder)
        except OSError:  # an unwritable cache only costs a rebuild next time
            shutil.rmtree(temp, ignore_errors=True)
            return
        for other in self.cache_dir.iterdir():
            if other.is_dir() and other.name != folder.name and ".tmp-" not in other.name:
                shutil.rmtree(other, ignore_errors=True)

    def _view(self) -> IndexView:
        return self._current().view

    def searches_inline(self) -> bool:
        """Never: a search asks the server over HTTP, a wait that belongs on a worker
        (:class:`~thresher.index.store.SearchesInline`). Answered without the server, so
        it cannot fail when the server is gone."""
        return False

    def _current(self) -> _State:
        """The live state, switched when an ingest has finished since the last look."""
        self._check_open(self.url)
        if time.monotonic() - self._checked < self.refresh_s:
            return self._state
        with self._lock:
            if time.monotonic() - self._checked >= self.refresh_s:
                self.refresh()
            return self._state

    def refresh(self) -> bool:
        """Look for a newer index state now; returns True when it switched to one.

        A state being written (``state == "writing"``) is never switched to.
        """
        collection, header = self._header()
        self._checked = time.monotonic()
        if header is None or header.state == "writing":
            return False
        if self._fingerprint(collection, header) == self._state.fingerprint:
            return False
        self._state = self._load(collection, header)
        return True

    # -- hybrid search: on the server when it can ----------------------------------------------

    @property
    def fusion(self) -> str:
        """Where hybrid search is fused for the live state: ``server`` or ``client``."""
        return self._fusion(self._current())[0]

    @property
    def fusion_reason(self) -> str:
        """Why hybrid search takes that path (the server's refusal, word for word)."""
        return self._fusion(self._current())[1]

    def _fusion(self, state: _State) -> tuple[str, str]:
        key = state.header.sparse_key
        local = sparse_unavailable() if key and self.search_refusal is None else None
        return fusion_path(self.search_refusal, key, self.config.retrieval.rrf_k, local)

    def hybrid_search(
        self,
        query: str,
        k: int = 50,
        exclude: Collection[str] = (),
        *,
        where: DocFilter | None = None,
        fitted: bool = True,
    ) -> list[Hit]:
        """BM25 and dense fused by RRF: on the server when it offers ``search`` and the
        collection has a sparse key, else here (always here under a ``where`` filter);
        see ``Store.hybrid_search``. A server index keeps no fitted weights: ``fitted``
        changes nothing."""
        state = self._current()
        if where is not None or self._fusion(state)[0] != "server":
            return super().hybrid_search(query, k, exclude, where=where, fitted=fitted)
        check_query(query, k)
        r = self.config.retrieval
        vector = self._queries.embed_query(query)
        searches = hybrid_searches(
            vector, query, state.header.sparse_key, r.rrf_k, max(r.per_retriever, k), k, exclude
        )
        fused = read_hybrid(state.collection.search(searches), k)
        chunks = self._chunks(state.view, [f.key for f in fused])
        return [
            Hit(chunk, f.score, "hybrid", f.bm25_rank, f.dense_rank, f.bm25_score, f.dense_score)
            for f, chunk in zip(fused, chunks, strict=True)
        ]

    # -- the rest of the protocol -------------------------------------------------------------

    def delete_documents(self, doc_ids: Sequence[str]) -> IngestReport:
        """Delete whole documents from the collection (see
        :func:`thresher.index.server.delete.delete_server`); this store switches to the result."""
        from thresher.index.server.delete import delete_server

        self._check_open(self.url)
        report = delete_server(self.url, doc_ids)
        self.refresh()
        return report

    def stats(self) -> StoreStats:
        """Counts, embedder and format of the live state; ``extra`` names the fusion path."""
        state = self._current()
        h = state.header
        fusion, reason = self._fusion(state)
        return StoreStats(
            backend=self.backend,
            location=self.url,
            documents=h.documents,
            chunks=len(state.view.bm25),
            embedder=h.embedder,
            dimension=h.dimension,
            format_version=h.format_version,
            extra={
                "fusion": fusion,
                "fusion_reason": reason,
                "sparse_key": h.sparse_key,
                "collection": self.location.collection,
                "index_version": h.version,
                "state": h.state,
                "thresher_version": h.thresher_version,
                "chunking": dict(h.chunking),
                "created_at": h.created_at,
                "updated_at": h.updated_at,
                "bm25_cache": str(state.folder),
            },
        )

    def _release(self) -> None:
        """Close the HTTP client."""
        self._client.close()
