"""Settings fitted to one index folder, kept with it, and whether they still fit it.

::

    INDEX_DIR/
      CURRENT, gen-000007/, ...
      fusion.json        the hybrid search's fusion weights, fit on this index's own tasks

A fitted file is JSON: what was fitted (``weights``), the fingerprint of the
generation it was fit on (``fitted_on``) and what the fit measured (``fit``). It
sits beside the generations, not in one, so an ingest keeps it; each generation
a store opens is checked against it (:func:`load_fusion`):

* the same generation, or one whose documents changed little since: used;
* the documents changed a lot (more than :data:`STALE_SHARE` of them added,
  removed or edited), or another embedder: stale, ignored with a warning until the
  weights are fitted again (``thresher fit-fusion``);
* absent: nothing fitted, the configured plain RRF; unreadable: ignored with a warning.

The fingerprint holds a bottom-k sketch of the documents (the :data:`SKETCH`
smallest hashes of ``doc id + content hash``), so the changed share is exact up to
that many documents and a close estimate above (Broder's bottom-k Jaccard), without
keeping every document id. Writes are atomic (temporary file, ``os.replace``);
readers never write.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import logging
import os
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from thresher.errors import ThresherError
from thresher.index.embedded.layout import MANIFEST, read_manifest
from thresher.index.fusion import FusionWeights

__all__ = [
    "FUSION_FILE",
    "SKETCH",
    "STALE_SHARE",
    "Fingerprint",
    "fingerprint",
    "changed_share",
    "save_fusion",
    "load_fusion",
    "read_fitted",
]

_log = logging.getLogger(__name__)

#: the fusion weights' file, in the index folder
FUSION_FILE = "fusion.json"
#: what a fitted file says it is (``kind``) and its format
_KIND = "thresher-fitted"
_VERSION = 1
#: hashes kept per fingerprint
SKETCH = 1024
#: a fitted file is stale above this share of documents added, removed or changed
STALE_SHARE = 0.2


@dataclass(frozen=True, slots=True)
class Fingerprint:
    """What a fitted file remembers of the generation it was fit on.

    ``sketch``: the :data:`SKETCH` smallest hashes (hex) of ``doc_id + content hash``
    over its documents, ascending.
    """

    generation: str
    documents: int
    chunks: int
    embedder: str
    sketch: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "generation": self.generation,
            "documents": self.documents,
            "chunks": self.chunks,
            "embedder": self.embedder,
            "sketch": list(self.sketch),
        }

    @classmethod
    def from_dict(cls, data: Any) -> Fingerprint:
        """Read :meth:`to_dict`'s form. Raises ``ValueError``/``KeyError``/``TypeError``."""
        sketch = data["sketch"]
        if not isinstance(sketch, list) or not all(isinstance(h, str) for h in sketch):
            raise ValueError("fitted_on.sketch must be a list of hashes")
        return cls(
            str(data["generation"]),
            int(data["documents"]),
            int(data["chunks"]),
            str(data["embedder"]),
            tuple(sorted(sketch)),
        )


def fingerprint(generation: Path) -> Fingerprint:
    """The fingerprint of one committed generation (reads its whole manifest, once per
    process: a committed generation never changes, and the last few are kept).

    Raises:
        IndexNotFoundError / IndexVersionError: as :func:`~.layout.read_manifest`.
    """
    try:
        stamp = (generation / MANIFEST).stat().st_mtime_ns
    except OSError:
        stamp = 0  # read_manifest says what is wrong
    return _fingerprint(str(generation.resolve()), stamp)


@functools.lru_cache(maxsize=8)
def _fingerprint(generation: str, stamp: int) -> Fingerprint:
    """:func:`fingerprint` of the generation at ``generation`` whose manifest's mtime is
    ``stamp`` (part of the key: a rewritten folder is read again)."""
    manifest = read_manifest(Path(generation))
    hashes = sorted(
        hashlib.blake2b(f"{doc}\0{entry.content_hash}".encode(), digest_size=8).hexdigest()
        for doc, entry in manifest.documents.items()
    )
    return Fingerprint(
        Path(generation).name,
        len(manifest.documents),
        manifest.chunk_count,
        manifest.embedder,
        tuple(hashes[:SKETCH]),
    )


def changed_share(before: Fingerprint, now: Fingerprint) -> float:
    """The share of documents added, removed or changed from ``before`` to ``now``:
    1 - the Jaccard similarity of their ``(doc id, content hash)`` sets, estimated on
    the bottom-k of the union of the two sketches (exact when both indexes hold at most
    :data:`SKETCH` documents). 0.0 when both are empty."""
    a, b = set(before.sketch), set(now.sketch)
    union = sorted(a | b)[:SKETCH]
    if not union:
        return 0.0
    both = sum(1 for h in union if h in a and h in b)
    return 1.0 - both / len(union)


def _write_json(path: Path, body: dict[str, Any]) -> None:
    """Write ``body`` to ``path`` atomically (a temporary file beside it, replaced)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(json.dumps(body, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        os.replace(tmp, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()


def save_fusion(
    index_dir: str | Path,
    weights: FusionWeights,
    fitted_on: Fingerprint,
    fit: dict[str, Any] | None = None,
) -> Path:
    """Keep ``weights`` with the index in ``index_dir`` (:data:`FUSION_FILE`), fitted on
    the generation ``fitted_on``; ``fit``: what the fit measured (JSON-safe). Replaces
    an earlier file. Returns its path."""
    path = Path(index_dir) / FUSION_FILE
    body = {
        "kind": _KIND,
        "version": _VERSION,
        "what": "fusion",
        "weights": weights.to_dict(),
        "fitted_on": fitted_on.to_dict(),
        "fit": fit or {},
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    _write_json(path, body)
    return path


def read_fitted(index_dir: str | Path, name: str = FUSION_FILE) -> dict[str, Any] | None:
    """The fitted file ``name`` of ``index_dir`` as written, or None when there is none.

    Raises:
        ValueError: the file is not a fitted file this thresher reads (the message says
            what to do).
    """
    path = Path(index_dir) / name
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ValueError(f"{path} is unreadable ({exc}); fit it again or delete it") from exc
    try:
        body = json.loads(text)
    except ValueError as exc:
        raise ValueError(f"{path} is not JSON ({exc}); fit it again or delete it") from exc
    if not isinstance(body, dict) or body.get("kind") != _KIND:
        raise ValueError(f"{path} is not a thresher fitted file; fit it again or delete it")
    if body.get("version") != _VERSION:
        raise ValueError(
            f"{path} has format {body.get('version')!r}, this thresher reads {_VERSION}; "
            "fit it again"
        )
    return body


def load_fusion(index_dir: str | Path, generation: Path) -> FusionWeights | None:
    """The fitted fusion weights of ``index_dir`` when they fit its generation
    ``generation``, else None (absent, unreadable or stale: the last two with a warning
    on the ``thresher.index.embedded.fitted`` logger). Never raises for the file's sake.
    """
    try:
        body = read_fitted(index_dir)
        if body is None:
            return None
        weights = FusionWeights.from_dict(body["weights"])
        fitted_on = Fingerprint.from_dict(body["fitted_on"])
    except (ValueError, KeyError, TypeError) as exc:
        _log.warning("fusion weights ignored: %s", exc)
        return None
    if fitted_on.generation == generation.name:
        return weights
    try:
        now = fingerprint(generation)
    except (ThresherError, OSError, ValueError, KeyError) as exc:  # the store reports it
        _log.warning("fusion weights ignored: %s cannot be compared (%s)", generation, exc)
        return None
    if now.embedder != fitted_on.embedder:
        _log.warning(
            "fusion weights in %s ignored: fit with embedder %s, the index now uses %s; "
            "run `thresher fit-fusion --index %s` again",
            Path(index_dir) / FUSION_FILE, fitted_on.embedder, now.embedder, index_dir,
        )  # fmt: skip
        return None
    share = changed_share(fitted_on, now)
    if share > STALE_SHARE:
        _log.warning(
            "fusion weights in %s ignored: %.0f%% of the documents changed since they were "
            "fit (on %s); run `thresher fit-fusion --index %s` again",
            Path(index_dir) / FUSION_FILE, 100 * share, fitted_on.generation, index_dir,
        )  # fmt: skip
        return None
    return weights
