"""Text to vectors: the ``Embedder`` protocol and its implementations (``embedder``),
and the fused MiniLM graph (``minilm_graph``) with its cached model files
(``minilm_cache``). Used by both backends and by ingestion."""
