"""The embedded backend: one local index folder in thresher's own format, no services.

``layout`` (generations, ``CURRENT``, the manifest, the commit), ``holds``
(generations held against removal while read), ``checksums`` (what a commit
recorded, checked at open), ``records_file``, ``vectors`` and ``where`` (the
chunk records, the vectors and HNSW graph, filters on metadata), ``source`` (one
generation's files opened as a chunk source), ``store`` (:class:`EmbeddedStore`),
``writer`` (one generation's files written), ``ingest`` and ``delete`` (new
generations, committed atomically). No chromadb: that is the server backend's."""
