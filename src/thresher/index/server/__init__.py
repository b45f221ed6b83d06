"""The Chroma server backend: ``store`` (:class:`ServerStore` over
``chromadb.HttpClient``), ``layout`` (what thresher keeps on a server, how to reach
it), ``search`` (server-side hybrid search), ``source`` (the collection as an index
state's chunk source, under the shared :mod:`thresher.index.view_store`), ``ingest``
and ``delete``. The server backend is the only part of thresher that uses chromadb."""
