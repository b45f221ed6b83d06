"""Lazy re-exports: a package names its public objects without importing their modules.

``thresher``, ``thresher.index``, ``thresher.harness`` and ``thresher.tasks.generate``
re-export names from their modules; :func:`lazy_getattr` builds the module-level
``__getattr__`` (PEP 562) that imports a name's module on first use, so importing
a package stays cheap (``import thresher.index`` does not load chromadb), and
:func:`lazy_dir` a ``__dir__`` that lists the public names, imported or not.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = ["lazy_getattr", "lazy_dir"]


def lazy_getattr(package: str, where: Mapping[str, str]) -> Callable[[str], Any]:
    """The ``__getattr__`` of ``package`` that imports each name of ``where`` on first use.

    Args:
        package: the package's ``__name__``.
        where: ``{name: module}``; a module starting with ``.`` is relative to ``package``.

    Returns:
        A function that imports ``name`` from its module, keeps it in the package's
        namespace (later lookups do not come back here) and returns it.

    Raises:
        AttributeError: (from the returned function) ``name`` is not in ``where``.
    """

    def __getattr__(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module, package), name)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__


def lazy_dir(names: Sequence[str]) -> Callable[[], list[str]]:
    """The ``__dir__`` of a package with lazy names: its public ``names`` (``__all__``), sorted."""

    def __dir__() -> list[str]:
        return sorted(names)

    return __dir__
