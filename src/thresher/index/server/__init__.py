"""The Chroma server backend: ``store`` (:class:`ServerStore` over
``chromadb.HttpClient``), ``layout`` (what thresher keeps on a server, how to reach
it), ``search`` (server-side hybrid search), ``ingest`` and ``delete``. It reuses
the embedded backend's collection store (:mod:`thresher.index.embedded.collection`)."""
