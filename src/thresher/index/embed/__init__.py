"""Text to vectors: the ``Embedder`` protocol and its implementations (``embedder``),
the fused MiniLM graph (``minilm_graph``), its int8 quantization (``minilm_quant``)
and their cached model files (``minilm_cache``). Used by both backends and by ingestion."""
