"""thresher: a harness for self-editing search agents.

The public surface, imported lazily so that ``import thresher`` (and the CLI's
``--help``) stay fast:

- :func:`search` — run one search episode (``thresher.search(question, index=...)``);
  :func:`searching` — the same episode as a stream of its trace events (a ``with`` block);
  :func:`close_indexes` closes the indexes it keeps open for the next call;
- :class:`Config` — every setting, defaults from the Context-1 report;
- :class:`Result`, :class:`ResultDocument`, :class:`ExitReason` — what an episode returns;
- :func:`open_store`, :func:`ingest` — open an index (a folder or a Chroma server URL)
  and add documents to it;
- :class:`BasePolicy` — the class a policy subclasses, every hook with its default;
  :class:`Policy` — the least the harness drives (any object with ``name``,
  ``system_prompt``, ``tool_schemas()`` and ``propose()``); :class:`SearchReranker` —
  what ``search(reranker=...)`` takes;
- :mod:`thresher.errors` — the typed errors.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from thresher import errors
from thresher._lazy import lazy_dir, lazy_getattr
from thresher._version import __version__

#: lazily imported top-level names -> their module
_LAZY = {
    "search": "thresher.api",
    "searching": "thresher.api",
    "close_indexes": "thresher.api",
    "Config": "thresher.config",
    "Result": "thresher.harness.result",
    "ResultDocument": "thresher.harness.result",
    "ExitReason": "thresher.harness.result",
    "open_store": "thresher.index.backends",
    "ingest": "thresher.index.backends",
    "BasePolicy": "thresher.harness.policy",
    "Policy": "thresher.harness.policy",
    "SearchReranker": "thresher.harness.policy",
}

__all__ = [
    "__version__",
    "errors",
    "search",
    "searching",
    "close_indexes",
    "Config",
    "Result",
    "ResultDocument",
    "ExitReason",
    "open_store",
    "ingest",
    "BasePolicy",
    "Policy",
    "SearchReranker",
]

if TYPE_CHECKING:
    from thresher.api import close_indexes, search, searching
    from thresher.config import Config
    from thresher.harness.policy import BasePolicy, Policy, SearchReranker
    from thresher.harness.result import ExitReason, Result, ResultDocument
    from thresher.index.backends import ingest, open_store


__getattr__ = lazy_getattr(__name__, _LAZY)
__dir__ = lazy_dir(__all__)
