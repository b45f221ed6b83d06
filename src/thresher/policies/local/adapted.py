"""Local-policy weights adapted to one index, kept in that index's folder.

``thresher adapt --index IDX`` (:mod:`thresher.train.local.adapt`) writes::

    IDX/adapted/
      local_policy.json   the adapted weights (a weights file like the shipped one)
      fingerprint.json    the index as it was adapted to: the fingerprint fitted
                          files share (:class:`~thresher.index.embedded.fitted.Fingerprint`:
                          generation, counts, embedder, a sketch of its documents)

An ingest never touches ``IDX/adapted`` (it replaces generation folders only).
When the local policy runs on an embedded index with no weights given, it asks
:func:`choose_weights` which weights to run: the adapted ones while the index is
much as it was (:data:`~thresher.index.embedded.fitted.STALE_SHARE`, measured by
:func:`~thresher.index.embedded.fitted.changed_share`, as for fitted fusion weights), else the shipped ones with a warning (the
adapted weights are *stale*: ``thresher adapt`` again refreshes them; adapted weights
whose fingerprint is missing or unreadable warn the same way). The answer
is kept per index folder, generation and weights file, so an episode pays a stat
and a look-up; the manifest of a new generation is read once.
"""

from __future__ import annotations

import json
import os
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from thresher.errors import ThresherError
from thresher.index.embedded.fitted import STALE_SHARE, Fingerprint, changed_share, fingerprint
from thresher.index.embedded.layout import current_generation
from thresher.index.view_store import ViewStore

__all__ = [
    "ADAPTED_DIR",
    "WeightsChoice",
    "StaleAdaptedWeightsWarning",
    "adapted_dir",
    "fingerprint_of",
    "read_fingerprint",
    "write_fingerprint",
    "choose_weights",
    "index_folder",
]

#: the folder of an index that holds its adapted weights
ADAPTED_DIR = "adapted"
WEIGHTS_FILE = "local_policy.json"
FINGERPRINT_FILE = "fingerprint.json"


class StaleAdaptedWeightsWarning(UserWarning):
    """The adapted weights cannot be trusted for the index as it is (it changed much
    since ``thresher adapt``, or their fingerprint is missing or unreadable): the
    shipped weights run instead."""


@dataclass(frozen=True, slots=True)
class WeightsChoice:
    """Which weights the local policy runs on an index, and why (recorded in traces).

    Attributes:
        path: the weights file to load; None: the shipped weights.
        info: what an episode's ``episode_start.policy_info`` records, e.g.
            ``{"weights": "adapted", "path": ..., "adapted_generation": ...}`` or
            ``{"weights": "shipped", "adapted": "stale", "changed_share": 0.31}``.
        stamp: the weights file's modification time (ns) when chosen (0: none), so a
            file rewritten by ``thresher adapt`` is a new choice.
    """

    path: Path | None
    info: Mapping[str, Any]
    stamp: int = 0


def adapted_dir(index: str | Path) -> Path:
    """``index``'s folder of adapted weights (it may not exist)."""
    return Path(index) / ADAPTED_DIR


def index_folder(store: object) -> Path | None:
    """The folder of the embedded index ``store`` reads (the store or a view pinned on
    it: :attr:`ViewStore.index_dir <thresher.index.view_store.ViewStore>`); None for any
    other store (a server, a filtered view)."""
    return store.index_dir if isinstance(store, ViewStore) else None


def fingerprint_of(index: str | Path) -> Fingerprint:
    """The fingerprint of ``index``'s live generation (reads its manifest once per
    generation and process).

    Raises ``IndexNotFoundError`` when there is no index there.
    """
    return fingerprint(current_generation(Path(index)))


def write_fingerprint(index: str | Path, fingerprint: Fingerprint) -> Path:
    """Write ``fingerprint`` as ``index``'s adapted fingerprint; returns its path."""
    path = adapted_dir(index) / FINGERPRINT_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(fingerprint.to_dict(), indent=1) + "\n", encoding="utf-8")
    return path


def read_fingerprint(index: str | Path) -> Fingerprint | None:
    """``index``'s adapted fingerprint; None when absent or unreadable."""
    path = adapted_dir(index) / FINGERPRINT_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return Fingerprint.from_dict(data)
    except (OSError, ValueError, KeyError, TypeError):
        return None


_SHIPPED = WeightsChoice(None, {"weights": "shipped"})


def choose_weights(index: Path, generation: Callable[[], str]) -> WeightsChoice:
    """The weights the local policy runs on ``index`` when none are given: its adapted
    weights unless absent or stale (then the shipped ones; stale warns once per index
    generation with :class:`StaleAdaptedWeightsWarning`). ``generation()`` names the
    generation the episode reads (asked only when adapted weights exist).

    Never raises: an unreadable fingerprint or manifest counts as no adapted weights.
    """
    where = os.path.join(index, ADAPTED_DIR, WEIGHTS_FILE)
    try:
        st = os.stat(where)
        live = generation()
    except (OSError, ThresherError):
        return _SHIPPED
    return _chosen(str(index), live, st.st_mtime_ns, st.st_size)


@lru_cache(maxsize=64)
def _chosen(index: str, generation: str, mtime_ns: int, size: int) -> WeightsChoice:
    """The choice for ``index`` at ``generation`` with its weights file as it is now
    (keyed by its size and modification time: a rewritten file is chosen again). A
    function of files alone; nothing of an episode is kept."""
    return _choose(Path(index), generation, adapted_dir(index) / WEIGHTS_FILE, mtime_ns)


def _choose(index: Path, generation: str, weights: Path, stamp: int) -> WeightsChoice:
    kept = read_fingerprint(index)
    if kept is None:  # weights kept without a readable record of the index they fit
        warnings.warn(
            f"the adapted local-policy weights of {index} cannot be checked against the "
            f"index: {adapted_dir(index) / FINGERPRINT_FILE} is missing or unreadable "
            f"(written by another version?); running the shipped weights. Run "
            f"`thresher adapt --index {index}` to adapt again",
            StaleAdaptedWeightsWarning,
            stacklevel=3,
        )
        return WeightsChoice(None, {"weights": "shipped", "adapted": "no fingerprint"})
    adapted = {"weights": "adapted", "path": str(weights), "adapted_generation": kept.generation}
    if kept.generation == generation:
        return WeightsChoice(weights, adapted, stamp)
    try:
        share = changed_share(kept, fingerprint_of(index))
    except ThresherError:
        return WeightsChoice(None, {"weights": "shipped", "adapted": "index unreadable"})
    if share <= STALE_SHARE:
        return WeightsChoice(weights, {**adapted, "changed_share": round(share, 4)}, stamp)
    warnings.warn(
        f"the adapted local-policy weights of {index} are stale: {share:.0%} of its "
        f"documents changed since `thresher adapt` (more than {STALE_SHARE:.0%}); "
        f"running the shipped weights. Run `thresher adapt --index {index}` to refresh them",
        StaleAdaptedWeightsWarning,
        stacklevel=3,
    )
    return WeightsChoice(
        None, {"weights": "shipped", "adapted": "stale", "changed_share": round(share, 4)}
    )
