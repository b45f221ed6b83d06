"""The embedded backend: one local index folder, no services.

``store`` (:class:`EmbeddedStore`), ``collection`` (the ``Store`` protocol over
one chromadb collection, also used by the server backend), ``lazy_collection``
(chromadb opened on first need), ``exact_dense``, ``saved_records`` (chunk records
read without chromadb), ``layout`` (generations, ``CURRENT``, the manifest),
``read_copy`` (shared read copies of a generation), ``ingest`` and ``delete`` (new
generations, committed atomically)."""
