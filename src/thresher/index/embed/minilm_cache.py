"""Derived MiniLM model files: built once from the packaged file, cached with a hash.

Two derived files, each made only from the registry package's ONNX file
(nothing is downloaded):

* ``fused``: the graph of :func:`thresher.index.embed.minilm_graph.fuse` (the
  packaged file's vectors up to float rounding);
* ``dq``: ``fused`` with dynamic int8 quantization of its matrix products
  (:mod:`thresher.index.embed.minilm_quant`: per-channel weights, products exact
  on every x86 CPU); its vectors differ, so it is a separate embedder,
  ``minilm-int8-dq``.

They live in the ``models`` cache (:func:`thresher.paths.cache_dir`), named by the packaged file's hash and
the onnxruntime version, each with a ``.sha256`` file written after it: a file
whose hash does not match is rebuilt. Building needs the ``onnx`` library (a
dependency) and is written atomically, so concurrent first uses are safe.
What each file costs and how far its vectors move: ``docs/embedding.md``.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path
from typing import Literal

from thresher.paths import cache_dir

__all__ = ["Variant", "derived_model"]

Variant = Literal["fused", "dq"]

#: Each variant's file name part; a new recipe gets a new tag, so no file built
#: by an older recipe is read (``dq-u8``: the unsigned weights of
#: :mod:`thresher.index.embed.minilm_quant`, exact on CPUs without VNNI).
_FILE_TAGS: dict[Variant, str] = {"fused": "fused", "dq": "dq-u8"}


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def derived_model(source: Path, source_sha256: str, variant: Variant) -> Path:
    """The ``variant`` file derived from ``source`` (built now if absent or corrupt).

    Args:
        source: the packaged ONNX file (already hash-checked by the caller).
        source_sha256: its sha256, part of the cached file's name.
        variant: ``fused`` or ``dq`` (see the module docstring).

    Raises:
        ImportError: the ``onnx`` library is missing (needed only to build).
        thresher.index.embed.minilm_graph.GraphShapeError: the packaged graph is not
            the export this rewrite knows.
    """
    import onnxruntime

    folder = cache_dir("models")  # created on first build
    tag = _FILE_TAGS[variant]
    path = folder / f"minilm-{source_sha256[:16]}-ort{onnxruntime.__version__}-{tag}.onnx"
    mark = path.with_name(path.name + ".sha256")
    if path.is_file() and mark.is_file() and mark.read_text().strip() == _sha256(path):
        return path
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=folder, prefix=".build-") as tmp:
        built = _build(source, Path(tmp), variant)
        digest = _sha256(built)
        os.replace(built, path)
        marker = Path(tmp) / "sha256"
        marker.write_text(digest + "\n")
        os.replace(marker, mark)
    return path


def _build(source: Path, tmp: Path, variant: Variant) -> Path:
    import onnx  # noqa: F401  (fail before any work when the library is missing)

    from thresher.index.embed.minilm_graph import dequantized, fuse

    dequantized(source, tmp / "dequantized.onnx")
    fuse(tmp / "dequantized.onnx", tmp / "fused.onnx")
    if variant == "fused":
        return tmp / "fused.onnx"
    from thresher.index.embed.minilm_quant import quantize

    quantize(tmp / "fused.onnx", tmp / "dq.onnx")
    return tmp / "dq.onnx"
