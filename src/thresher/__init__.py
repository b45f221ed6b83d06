"""thresher: a harness for self-editing search agents.

The public surface, imported lazily so that ``import thresher`` (and the CLI's
``--help``) stay fast:

- :func:`search` — run one search episode (``thresher.search(question, index=...)``);
- :class:`Config` — every setting, defaults from the Context-1 report;
- :class:`Result`, :class:`ResultDocument`, :class:`ExitReason` — what an episode returns;
- :func:`open_store`, :func:`ingest` — open an index (a folder or a Chroma server URL)
  and add documents to it;
- :class:`Policy` — the protocol a policy implements (with its optional capabilities
  :class:`SearchReranker` and :class:`ChoosesRetrievalMode`);
- :mod:`thresher.errors` — the typed errors.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from thresher import errors

__version__ = "0.1.0"

#: lazily imported top-level names -> (module, attribute)
_LAZY = {
    "search": ("thresher.api", "search"),
    "Config": ("thresher.config", "Config"),
    "Result": ("thresher.harness.result", "Result"),
    "ResultDocument": ("thresher.harness.result", "ResultDocument"),
    "ExitReason": ("thresher.harness.result", "ExitReason"),
    "open_store": ("thresher.index.backends", "open_store"),
    "ingest": ("thresher.index.backends", "ingest"),
    "Policy": ("thresher.harness.policy", "Policy"),
    "SearchReranker": ("thresher.harness.policy", "SearchReranker"),
    "ChoosesRetrievalMode": ("thresher.harness.policy", "ChoosesRetrievalMode"),
}

__all__ = [
    "__version__",
    "errors",
    "search",
    "Config",
    "Result",
    "ResultDocument",
    "ExitReason",
    "open_store",
    "ingest",
    "Policy",
    "SearchReranker",
    "ChoosesRetrievalMode",
]

if TYPE_CHECKING:
    from thresher.api import search
    from thresher.config import Config
    from thresher.harness.policy import ChoosesRetrievalMode, Policy, SearchReranker
    from thresher.harness.result import ExitReason, Result, ResultDocument
    from thresher.index.backends import ingest, open_store


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        module, attr = _LAZY[name]
        value = getattr(importlib.import_module(module), attr)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'thresher' has no attribute '{name}'")


def __dir__() -> list[str]:
    return sorted(__all__)
