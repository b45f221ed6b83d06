"""The backend registry: which store a location names, for opening and for ingesting.

A location is either an index folder (the embedded store) or a URL whose
scheme names a backend (``http://`` and ``https://``: a Chroma server).
:func:`open_store` and :func:`ingest` are the entry points, and
:func:`backend_for` is the only place in thresher that looks at a location's
form to choose; every other module (the CLI, the API, evaluation, training, the
benches) goes through these two functions. A backend's modules are imported
only when it is used, so the embedded default never loads the server client.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from thresher.config import Config
from thresher.corpus.document import Document
from thresher.corpus.load_stats import LoadStats
from thresher.errors import BackendUnavailableError, IndexNotFoundError, InputError
from thresher.index.embed.embedder import Embedder
from thresher.index.store import IngestReport, Store

__all__ = ["Backend", "register_backend", "backend_for", "open_store", "preload", "ingest"]

#: open(location, config, embedder) -> an open store
Opener = Callable[[str, Config, Embedder | None], Store]
#: ingest(documents, location, config, embedder, progress, sources) -> what changed
#: (``sources``: the paths read, scoping deletion; None: the documents are the whole corpus)
Ingester = Callable[
    [Iterable[Document], str, Config, Embedder | None, bool, Sequence[str] | None], IngestReport
]


@dataclass(frozen=True, slots=True)
class Backend:
    """One kind of index location and how to open it and ingest into it.

    Attributes:
        name: what ``StoreStats.backend`` reports (``embedded``, ``server``).
        schemes: the URL schemes it serves; empty for the folder backend.
        open: opens the store at a location.
        ingest: makes the index at a location hold the documents given (deleting
            what is missing from them by :mod:`thresher.index.ingest.common`'s rule).
    """

    name: str
    schemes: tuple[str, ...]
    open: Opener
    ingest: Ingester


def _open_embedded(location: str, config: Config, embedder: Embedder | None) -> Store:
    from thresher.index.embedded.store import EmbeddedStore

    return EmbeddedStore(Path(location), config, embedder)


def _ingest_embedded(
    documents: Iterable[Document],
    location: str,
    config: Config,
    embedder: Embedder | None,
    progress: bool,
    sources: Sequence[str] | None,
) -> IngestReport:
    from thresher.index.embedded.ingest import ingest_embedded

    return ingest_embedded(documents, Path(location), config, embedder, progress, sources=sources)


def _server_unavailable(location: str, exc: ImportError) -> BackendUnavailableError:
    return BackendUnavailableError(
        f"cannot use {location}: the Chroma server backend is not available in this "
        f"installation ({exc}); use an index folder instead"
    )


def _open_server(location: str, config: Config, embedder: Embedder | None) -> Store:
    try:
        from thresher.index.server.store import ServerStore
    except ImportError as exc:
        raise _server_unavailable(location, exc) from exc
    return ServerStore(location, config=config, embedder=embedder)


def _ingest_server(
    documents: Iterable[Document],
    location: str,
    config: Config,
    embedder: Embedder | None,
    progress: bool,
    sources: Sequence[str] | None,
) -> IngestReport:
    try:
        from thresher.index.server.ingest import ingest_server
    except ImportError as exc:
        raise _server_unavailable(location, exc) from exc
    return ingest_server(documents, location, config, embedder, progress, sources=sources)


_FOLDER = Backend("embedded", (), _open_embedded, _ingest_embedded)
_BY_SCHEME: dict[str, Backend] = {}


def register_backend(backend: Backend) -> None:
    """Serve ``backend.schemes`` with ``backend`` (replacing any earlier one).

    Raises:
        InputError: the backend names no scheme (the folder backend is fixed).
    """
    if not backend.schemes:
        raise InputError(
            f"backend {backend.name!r} names no URL scheme; only the embedded store serves folders"
        )
    for scheme in backend.schemes:
        _BY_SCHEME[scheme.lower()] = backend


register_backend(Backend("server", ("http", "https"), _open_server, _ingest_server))


#: ``host:port[/path]`` (a name or IPv4 address, or ``[IPv6]``): a server address
#: written without its scheme, never a folder
_HOST_PORT = re.compile(
    r"^(?:[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?|\[[0-9A-Fa-f:.]+\]):\d{1,5}(?:/.*)?$"
)


def backend_for(location: str | Path) -> Backend:
    """The backend a location names: a registered URL scheme, else the folder backend.

    A string ``host:port[/path]`` without a scheme (``localhost:8000``,
    ``127.0.0.1:8000/chunks``) is refused with the URL to write, not taken for a
    folder (write ``./name`` for a folder whose name has that form).

    Args:
        location: an index folder, or ``SCHEME://...`` (``http(s)://host:port[/collection]``).

    Raises:
        InputError: a URL whose scheme no backend serves, or a server address without one.
    """
    text = str(location)
    scheme, sep, _ = text.partition("://")
    if not sep:
        if isinstance(location, str) and _HOST_PORT.match(text):
            raise InputError(
                f"'{text}' looks like a server address without its scheme; write "
                f"http://{text} (or https://{text}) for a Chroma server, or "
                f"./{text} for an index folder of that name"
            )
        return _FOLDER
    backend = _BY_SCHEME.get(scheme.lower())
    if backend is None:
        known = ", ".join(f"{s}://" for s in sorted(_BY_SCHEME))
        raise InputError(
            f"no index backend serves {scheme}:// locations ({text}); give an index folder "
            f"or one of {known}"
        )
    return backend


def check_location(location: str | Path) -> None:
    """Fail now, cheaply, when ``location`` can hold no index to read: an unknown
    scheme, a server address without one, or a folder with no committed index
    (a server is checked when it is opened). Commands call it before they print
    anything, so a bad ``--index`` is one error line.

    Raises:
        InputError: see :func:`backend_for`.
        IndexNotFoundError: no index in that folder.
    """
    if backend_for(location) is _FOLDER:
        from thresher.index.embedded.layout import current_generation

        folder = Path(location)
        try:
            current_generation(folder)
        except IndexNotFoundError as exc:
            raise IndexNotFoundError(
                f"no index at {folder}; build one with `thresher index PATH --index {folder}`"
            ) from exc


def open_store(
    location: str | Path, config: Config | None = None, *, embedder: Embedder | None = None
) -> Store:
    """The store at ``location``.

    Args:
        location: an index folder (the embedded store), or
            ``http(s)://host:port[/collection]`` (a Chroma server).
        config: settings (defaults: ``Config()``).
        embedder: the query embedder (default: the one the index was built with).

    Returns:
        An open store; call ``close()`` when done.

    Raises:
        IndexNotFoundError: no index there.
        InputError: a URL scheme no backend serves.
        BackendUnavailableError: the server backend is unavailable or unreachable.
        ConfigError: ``embedder`` is not the one the index was built with.
    """
    return backend_for(location).open(str(location), config or Config(), embedder)


def preload(location: str | Path) -> None:
    """Load, on the calling thread, what the first search of the index at ``location``
    will load anyway: the query embedder of an index folder (for MiniLM, its ONNX
    session and tokenizer, :class:`~thresher.index.embed.embedder.PreloadingEmbedder`).

    A command about to search runs it on another thread while it opens the index, so
    the two overlap. A server's embedder is left to its open (asking costs a request).
    Nothing is raised: whatever fails here, the open and the search report.
    """
    import contextlib

    from thresher.errors import ThresherError

    with contextlib.suppress(ThresherError, OSError, ValueError):
        if backend_for(location) is not _FOLDER:
            return
        from thresher.index.embed.embedder import PreloadingEmbedder, get_embedder
        from thresher.index.embedded import layout

        summary = layout.read_summary(layout.current_generation(Path(location)))
        embedder = get_embedder(summary.embedder)
        if isinstance(embedder, PreloadingEmbedder):
            embedder.preload()


def ingest(
    documents: Iterable[Document],
    location: str | Path,
    config: Config | None = None,
    embedder: Embedder | None = None,
    progress: bool = True,
    *,
    sources: Iterable[str | Path] | None = None,
    files: LoadStats | None = None,
) -> IngestReport:
    """Make the index at ``location`` hold ``documents`` (incremental).

    Args:
        documents: the whole corpus (each ``doc_id`` once; an exact repeat is skipped).
        location: an index folder (created if missing; see
            :func:`thresher.index.embedded.ingest.ingest_embedded`) or
            ``http(s)://host:port[/collection]`` (see
            :func:`thresher.index.server.ingest.ingest_server`).
        config: chunking and embedder settings (defaults: ``Config()``).
        embedder: overrides ``config.retrieval.embedder``.
        progress: show a progress bar while embedding (only on a terminal).
        sources: the paths ``documents`` were read from (``thresher index`` passes
            the paths named): an indexed document missing from the input is deleted
            only when it was read from under one of them. None (the default):
            ``documents`` are the whole corpus, and every other indexed document
            is deleted.
        files: the stats the loader fills while ``documents`` are read
            (:func:`thresher.corpus.iter_documents`): the report's ``files`` is
            their account once every document was read, on either backend.

    Returns:
        What changed, with sanitization counts summed over the documents seen
        (and the file account when ``files`` is given).

    Raises:
        InputError: the input holds no document (an index is never emptied by an
            empty input), a doc_id repeats with different content, or a URL scheme
            no backend serves.
        ConfigError: the index was built with another embedder.
        IndexVersionError: the index was written by a newer thresher.
        BackendUnavailableError: the server backend is unavailable or unreachable.
    """
    chosen = backend_for(location)
    paths = None if sources is None else [str(s) for s in sources]
    report = chosen.ingest(documents, str(location), config or Config(), embedder, progress, paths)
    if files is not None:
        report.files = files.to_dict()
    return report
