"""What thresher keeps on a Chroma server, and how to reach it.

A server index named ``NAME`` (default ``chunks``) is two collections::

    NAME              the chunks (records as in :mod:`thresher.index.records`), cosine
                      space; its collection metadata is the index header (keys
                      ``thresher:*``, :class:`ServerHeader`)
    NAME__manifest    one record per document: id = doc_id, a 1-d placeholder
                      embedding, metadata {content_hash, chunk_ids (JSON), order,
                      ingested_at, sanitized (JSON), origin}; ``order`` is the corpus order

The header carries a version marker that the ingester replaces last, once every
chunk and manifest record of a run is written, and a ``state`` that is
``writing`` while a run is in progress. Readers key their local BM25 side index
on (collection id, version marker, chunk count).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from thresher.errors import BackendUnavailableError, ConfigError, IndexVersionError, InputError
from thresher.index.manifest import COLLECTION, SERVER_FORMAT, DocEntry

__all__ = [
    "DEFAULT_COLLECTION",
    "DEFAULT_PORT",
    "ServerLocation",
    "ServerHeader",
    "parse_location",
    "connect",
    "unavailable",
    "Guarded",
    "manifest_name",
    "read_entries",
    "entry_metadata",
    "pages",
    "transport_errors",
]

DEFAULT_COLLECTION = COLLECTION
DEFAULT_PORT = 8000
_PREFIX = "thresher:"
_PAGE = 5000


@dataclass(frozen=True, slots=True)
class ServerLocation:
    """Where a server index lives: ``http(s)://host:port/collection``."""

    host: str
    port: int
    collection: str = DEFAULT_COLLECTION
    ssl: bool = False

    @property
    def url(self) -> str:
        scheme = "https" if self.ssl else "http"
        return f"{scheme}://{self.host}:{self.port}/{self.collection}"

    @property
    def start_hint(self) -> str:
        """How to start a local server for this location."""
        return f"chroma run --host {self.host} --port {self.port} --path DIR"


def parse_location(text: str, collection: str = DEFAULT_COLLECTION) -> ServerLocation:
    """Parse ``http(s)://host[:port][/collection]`` (port 8000 and ``collection`` by default).

    Raises:
        InputError: not such a URL, or a collection name chromadb would refuse.
    """
    try:
        parts = urlsplit(text)
        hostname = parts.hostname
    except ValueError as exc:  # e.g. an unclosed IPv6 bracket: http://[::1
        raise InputError(
            f"{text!r} is not a server location ({exc}); write http://HOST:PORT[/COLLECTION]"
            " (an IPv6 host in brackets: http://[::1]:8000)"
        ) from exc
    if parts.scheme not in ("http", "https") or not hostname:
        raise InputError(f"{text!r} is not a server location; write http://HOST:PORT[/COLLECTION]")
    try:
        port = parts.port or DEFAULT_PORT
    except ValueError as exc:
        raise InputError(f"bad port in {text!r}; write http://HOST:PORT[/COLLECTION]") from exc
    name = parts.path.strip("/") or collection
    if len(name) < 3 or "/" in name:
        raise InputError(
            f"bad collection name {name!r} in {text!r}: one path segment of 3+ characters"
        )
    return ServerLocation(hostname, port, name, parts.scheme == "https")


def unavailable(location: ServerLocation, exc: BaseException | str) -> BackendUnavailableError:
    """The one-line error for a server that cannot be reached."""
    why = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return BackendUnavailableError(
        f"no Chroma server answers at {location.url} ({why}); start one with "
        f"`{location.start_hint}` or fix the URL"
    )


def connect(location: ServerLocation) -> Any:
    """A chromadb client on ``location`` (telemetry off), checked with a heartbeat.

    An ``HttpClient``; with ``CHROMA_API_KEY`` in the environment, one that
    authenticates as ``chromadb.CloudClient`` does (the key in the
    ``x-chroma-token`` header; tenant and database from ``CHROMA_TENANT`` and
    ``CHROMA_DATABASE``, else those of the key), for Chroma Cloud
    (``https://api.trychroma.com:443/COLLECTION``) or a server behind token auth.

    Raises:
        BackendUnavailableError: nothing answers there.
        ConfigError: the server refused the ``CHROMA_*`` credentials.
    """
    import os

    import chromadb
    import httpx
    from chromadb.config import Settings
    from chromadb.errors import ChromaError

    settings = Settings(anonymized_telemetry=False)
    try:
        if os.environ.get("CHROMA_API_KEY"):
            try:  # passed explicitly: chromadb 1.5.9 sends "None" for a key it read itself
                client = chromadb.CloudClient(
                    tenant=os.environ.get("CHROMA_TENANT") or None,
                    database=os.environ.get("CHROMA_DATABASE") or None,
                    api_key=os.environ["CHROMA_API_KEY"],
                    settings=settings,
                    cloud_host=location.host,
                    cloud_port=location.port,
                    enable_ssl=location.ssl,
                )
            except ChromaError as exc:
                raise ConfigError(
                    f"the Chroma server at {location.url} refused the credentials ({exc}); "
                    "check CHROMA_API_KEY, CHROMA_TENANT and CHROMA_DATABASE"
                ) from exc
        else:
            client = chromadb.HttpClient(
                host=location.host, port=location.port, ssl=location.ssl, settings=settings
            )
        client.heartbeat()
    except (ValueError, httpx.HTTPError, OSError) as exc:
        raise unavailable(location, exc) from exc
    return client


def transport_errors() -> tuple[type[BaseException], ...]:
    import httpx

    return (httpx.TransportError, ConnectionError)


class Guarded:
    """A chromadb collection whose transport failures become ``BackendUnavailableError``.

    Only the calls the stores make are forwarded (``get``, ``query``, ``count``,
    ``search``); chromadb's own errors (a bad regex, say) pass through unchanged.
    """

    def __init__(self, collection: Any, location: ServerLocation) -> None:
        self.inner = collection
        self.location = location
        self._errors = transport_errors()

    def _call(self, name: str, *args: Any, **kwargs: Any) -> Any:
        try:
            return getattr(self.inner, name)(*args, **kwargs)
        except self._errors as exc:
            raise unavailable(self.location, exc) from exc

    def get(self, *args: Any, **kwargs: Any) -> Any:
        return self._call("get", *args, **kwargs)

    def query(self, *args: Any, **kwargs: Any) -> Any:
        return self._call("query", *args, **kwargs)

    def count(self) -> int:
        return int(self._call("count"))

    def search(self, *args: Any, **kwargs: Any) -> Any:
        return self._call("search", *args, **kwargs)


def manifest_name(collection: str) -> str:
    """The name of the document-manifest collection beside ``collection``."""
    return f"{collection}__manifest"


@dataclass(slots=True)
class ServerHeader:
    """The index header kept in the chunk collection's metadata (keys ``thresher:*``)."""

    format_version: int
    embedder: str
    dimension: int
    chunking: dict[str, Any]
    version: str = ""
    state: str = "ready"
    thresher_version: str = "?"
    documents: int = 0
    chunks: int = 0
    created_at: str = ""
    updated_at: str = ""
    sparse_key: str = ""
    roots: dict[str, str] | None = None  # label -> real path (thresher.index.ingest.roots)

    def to_metadata(self) -> dict[str, str | int]:
        """Flat chromadb metadata (chunking as JSON; empty sparse key left out)."""
        meta: dict[str, str | int] = {
            "format_version": self.format_version,
            "embedder": self.embedder,
            "dimension": self.dimension,
            "chunking": json.dumps(self.chunking, sort_keys=True),
            "version": self.version,
            "state": self.state,
            "thresher_version": self.thresher_version,
            "documents": self.documents,
            "chunks": self.chunks,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
        }
        if self.sparse_key:
            meta["sparse_key"] = self.sparse_key
        if self.roots is not None:
            meta["roots"] = json.dumps(self.roots, sort_keys=True)
        return {_PREFIX + k: v for k, v in meta.items()}

    @classmethod
    def from_metadata(cls, meta: Mapping[str, Any] | None, where: str) -> ServerHeader | None:
        """The header in a collection's metadata; None when thresher never wrote one.

        Raises:
            IndexVersionError: written in a newer format than this thresher reads.
        """
        got = {k[len(_PREFIX) :]: v for k, v in (meta or {}).items() if k.startswith(_PREFIX)}
        if "format_version" not in got:
            return None
        version = int(got["format_version"])
        if version > SERVER_FORMAT:
            raise IndexVersionError(
                f"index at {where} was written by thresher {got.get('thresher_version', '?')} "
                f"(format {version}); this thresher reads format {SERVER_FORMAT}: "
                "upgrade thresher"
            )
        return cls(
            format_version=version,
            embedder=str(got.get("embedder", "")),
            dimension=int(got.get("dimension", 0)),
            chunking=json.loads(str(got.get("chunking", "{}"))),
            version=str(got.get("version", "")),
            state=str(got.get("state", "ready")),
            thresher_version=str(got.get("thresher_version", "?")),
            documents=int(got.get("documents", 0)),
            chunks=int(got.get("chunks", 0)),
            created_at=str(got.get("created_at", "")),
            updated_at=str(got.get("updated_at", "")),
            sparse_key=str(got.get("sparse_key", "")),
            roots=dict(json.loads(str(got["roots"]))) if "roots" in got else None,
        )


def pages(collection: Any, include: list[str], page: int = _PAGE) -> Iterator[dict[str, Any]]:
    """Every record of ``collection``, ``page`` at a time (``get`` with limit/offset)."""
    offset = 0
    while True:
        got = collection.get(limit=page, offset=offset, include=include)
        if not got["ids"]:
            return
        yield got
        offset += len(got["ids"])
        if len(got["ids"]) < page:
            return


def entry_metadata(entry: DocEntry, order: int) -> dict[str, str | int]:
    """The manifest record metadata of one document."""
    return {
        "content_hash": entry.content_hash,
        "chunk_ids": json.dumps(entry.chunk_ids),
        "order": order,
        "ingested_at": entry.ingested_at,
        "sanitized": json.dumps(entry.sanitized, sort_keys=True),
        "origin": entry.origin,
    }


def read_entries(manifest: Any) -> dict[str, tuple[DocEntry, int]]:
    """Every document of a manifest collection, in corpus order: doc_id -> (entry, order)."""
    out: list[tuple[int, str, DocEntry]] = []
    for got in pages(manifest, ["metadatas"]):
        for doc_id, meta in zip(got["ids"], got["metadatas"], strict=True):
            entry = DocEntry(
                str(meta["content_hash"]),
                list(json.loads(str(meta["chunk_ids"]))),
                str(meta.get("ingested_at", "")),
                dict(json.loads(str(meta.get("sanitized", "{}")))),
                str(meta.get("origin", "")),
            )
            out.append((int(meta.get("order", 0)), doc_id, entry))
    out.sort(key=lambda t: (t[0], t[1]))
    return {doc_id: (entry, order) for order, doc_id, entry in out}
