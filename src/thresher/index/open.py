"""Open a store from a location string: a folder, or a Chroma server URL."""

from __future__ import annotations

from pathlib import Path

from thresher.config import Config
from thresher.errors import BackendUnavailableError
from thresher.index.store import Store

__all__ = ["open_store"]


def open_store(location: str | Path, config: Config | None = None) -> Store:
    """The store at ``location``.

    Args:
        location: an index folder (the embedded store), or
            ``http(s)://host:port[/collection]`` (a Chroma server; handled by
            ``thresher.index.server.open_server_store``, imported only then).
        config: settings (defaults: ``Config()``).

    Returns:
        An open store; call ``close()`` when done.

    Raises:
        IndexNotFoundError: no index in the folder.
        BackendUnavailableError: the server backend is unavailable or unreachable.
    """
    text = str(location)
    if text.startswith(("http://", "https://")):
        try:
            from thresher.index.server import open_server_store
        except ImportError as exc:
            raise BackendUnavailableError(
                f"cannot open {text}: the Chroma server backend (thresher.index.server) is "
                "not available in this installation; use an index folder instead"
            ) from exc
        return open_server_store(text, config)
    from thresher.index.embedded import EmbeddedStore

    return EmbeddedStore(Path(text), config)
