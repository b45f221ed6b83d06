"""The embedded backend: one local index folder, no services.

``store`` (:class:`EmbeddedStore`), ``collection`` (the ``Store`` protocol over
one chromadb collection, also used by the server backend), ``exact_dense``,
``layout`` (generations, ``CURRENT``, the manifest), ``read_copy`` (shared read
copies of a generation), ``ingest`` and ``delete`` (new generations, committed
atomically)."""
