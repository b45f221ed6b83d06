"""What ingestion into either backend shares: planning, hashing, chunking and
writing chunks (``common``), document ids per indexed folder (``roots``) and the
progress display (``progress``). Each backend's own ingest is in its package
(:mod:`thresher.index.embedded.ingest`, :mod:`thresher.index.server.ingest`)."""
