"""Loading a benchmark's module by path (``bench/`` is scripts, not a package)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

BENCH = Path(__file__).resolve().parents[2] / "bench"


def load_bench_module(name: str, path: Path) -> ModuleType:
    """The module at ``path``, imported under ``name`` (registered in ``sys.modules``:
    dataclasses look their module up by name)."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module
