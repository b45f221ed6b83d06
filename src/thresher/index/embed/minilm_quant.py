"""Dynamic int8 quantization of the fused MiniLM graph, exact on every x86 CPU.

onnxruntime's ``quantize_dynamic`` stores the weights as signed int8 and
quantizes activations to unsigned int8 at run time. Multiplying unsigned by
signed bytes is exact on CPUs with VNNI (``vpdpbusd`` sums into 32 bits), but on
AVX2 without VNNI onnxruntime's kernel uses ``vpmaddubsw``, which adds pairs of
products into 16 bits and saturates, so the same text would get other vectors
on such a machine (the measurement: ``docs/embedding.md``, "The same int8
vectors on every CPU").

:func:`quantize` therefore shifts every signed weight by 128 into an unsigned
byte and its zero point by the same 128: ``(a - za)(w - zw)`` is unchanged, so the
integer products are the ones a VNNI machine computes, and onnxruntime's
unsigned-by-unsigned kernel widens to 16 bits before it multiplies (exact on
AVX2 too). No library offers this (the quantizer's ``reduce_range`` avoids the
saturation by dropping a bit of weight precision instead, which changes the
vectors everywhere).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

__all__ = ["quantize", "unsigned_weights", "WEIGHT_INPUTS"]

#: For each quantized node type: (weight input, weight zero-point input).
WEIGHT_INPUTS = {"MatMulInteger": (1, 3), "QAttention": (1, 7)}


def quantize(fused: Path, out: Path) -> None:
    """Write ``fused`` with dynamic int8 matrix products (per-channel weights) to ``out``."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    signed = out.with_name(out.stem + "-signed.onnx")
    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.ERROR)  # the quantizer's advice on pre-processing goes to root
    try:
        quantize_dynamic(
            fused,
            signed,
            weight_type=QuantType.QInt8,
            per_channel=True,
            op_types_to_quantize=["MatMul", "Attention"],
        )
    finally:
        root.setLevel(level)
    unsigned_weights(signed, out)
    signed.unlink()


def unsigned_weights(src: Path, out: Path) -> None:
    """Rewrite ``src``'s signed int8 weights (and zero points) as unsigned, same products.

    Raises:
        ValueError: a quantized node's weight or zero point is not a stored constant
            (not the graph ``quantize_dynamic`` writes).
    """
    import numpy as np
    import onnx
    from onnx import numpy_helper

    model = onnx.load(str(src))
    inits: dict[str, Any] = {t.name: t for t in model.graph.initializer}
    shifted: set[str] = set()
    for node in model.graph.node:
        slots = WEIGHT_INPUTS.get(node.op_type)
        if slots is None:
            continue
        for slot in slots:
            name = node.input[slot] if slot < len(node.input) else ""
            if name in shifted:
                continue
            if name not in inits:
                raise ValueError(f"{node.op_type} {node.name}: input {slot} is not a constant")
            tensor = inits[name]
            if tensor.data_type != onnx.TensorProto.INT8:
                continue
            values = numpy_helper.to_array(tensor).astype(np.int16) + 128
            tensor.CopyFrom(numpy_helper.from_array(values.astype(np.uint8), name))
            shifted.add(name)
    onnx.save(model, str(out))
