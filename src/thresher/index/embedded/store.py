"""The embedded store: one local index folder, no services.

Opens the generation that ``INDEX_DIR/CURRENT`` names (see
:mod:`thresher.index.embedded.layout`): its files, read in place
(:mod:`thresher.index.embedded.source`). Before each call it checks ``CURRENT``
and, when an ingest has committed a new generation since, switches to it, so a
long-running process always answers from the latest complete index.
:meth:`EmbeddedStore.pinned` hands out the live generation fixed
(:class:`~thresher.index.store.PinsGeneration`): the harness reads one generation
for a whole episode.

It never writes to the index folder. Each generation it reads is held against
removal by an ingest (:mod:`thresher.index.embedded.holds`) until nothing reads it
any more: at the switch when no pinned store holds it, else when the last pinned
store on it is dropped. What holds a generation is a reference to its view (the
store's live generation, a pinned store, a call still running on it), and a
``weakref.finalize`` on the view drops the hold, so no count is kept, a read never
takes a lock, and nothing is released while something still reads it.
:meth:`EmbeddedStore.close` releases every generation still open, pinned or not.

Each generation opened is checked against the fusion weights fitted to the index
(``INDEX_DIR/fusion.json``, :mod:`thresher.index.embedded.fitted`): when they still fit
it (and ``retrieval.fitted_fusion`` is on), its hybrid searches fuse with them.
"""

from __future__ import annotations

import itertools
import os
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from thresher.config import Config
from thresher.index.embed.embedder import Embedder, check_built_with, get_embedder
from thresher.index.embedded import fitted, holds, layout
from thresher.index.embedded.source import open_generation
from thresher.index.fusion import FusionWeights
from thresher.index.store import IngestReport, Store, StoreStats
from thresher.index.view import IndexView
from thresher.index.view_store import ViewStore

__all__ = ["EmbeddedStore"]


@dataclass(frozen=True, slots=True)
class _Generation:
    path: Path
    summary: layout.Summary
    view: IndexView
    #: the index's fitted fusion weights when they fit this generation and the config
    #: asks for them (:func:`fitted.load_fusion`), else None: plain RRF
    fusion: FusionWeights | None = None


#: the generations a store holds open, by the order it opened them: each one's name and
#: its release (a ``weakref.finalize`` on its view: runs once, then does nothing)
_Held = dict[int, tuple[str, Callable[[], object]]]


def _release_generation(hold: int | None, held: _Held, key: int) -> None:
    """Release one generation: no longer held, its folder left for the next ingest to
    remove (:func:`holds.hold_generation`).

    Runs where the last reference to its view goes (a store switching, a pinned store
    dropped, a call ending) or at the store's close; takes no lock (a dict's ``pop``
    is atomic), so it may run from the collector on any thread."""
    held.pop(key, None)
    holds.drop_hold(hold)


def _hold_live(index_dir: Path) -> tuple[Path, layout.Summary, int | None]:
    """The live generation of ``index_dir``, its summary and its hold
    (:func:`holds.hold_current`; dropped here if the summary cannot be read)."""
    path, hold = holds.hold_current(index_dir)
    try:
        return path, layout.read_summary(path), hold
    except BaseException:
        holds.drop_hold(hold)
        raise


class EmbeddedStore(ViewStore):
    """The ``Store`` protocol over a local index folder built by :func:`ingest`.

    Args:
        index_dir: the index folder.
        config: retrieval and grep settings (defaults: ``Config()``).
        embedder: the query embedder; defaults to the one the index was built
            with (its name is in the manifest).

    Raises:
        IndexNotFoundError: no index in ``index_dir``.
        IndexVersionError: the index was written by a newer thresher, or by an older
            one in a format this one no longer reads (rebuild it).
        IndexDamagedError: a file of the live generation is missing or damaged.
        ConfigError: ``embedder`` is not the one the index was built with.
    """

    backend = "embedded"
    index_dir: Path

    def __init__(
        self, index_dir: str | Path, config: Config | None = None, embedder: Embedder | None = None
    ) -> None:
        self.index_dir = Path(index_dir)
        path, summary, hold = _hold_live(self.index_dir)
        try:
            emb = embedder or get_embedder(summary.embedder)
        except BaseException:
            holds.drop_hold(hold)
            raise
        super().__init__(config or Config(), emb)
        #: every generation opened and not yet released: the live one, and each retired
        #: one something still reads (written by :meth:`_open` and :func:`_release_generation`)
        self._held: _Held = {}
        self._serial = itertools.count()
        self._pointer_key: tuple[int, int, int] | None = None  # the CURRENT file's last stat
        self._pointer_name = path.name
        # the CURRENT file, as a path string (stat on every call: no Path built each time)
        self._pointer = str(self.index_dir / layout.CURRENT)
        self._generation = self._open(path, summary, hold)

    def _open(self, path: Path, summary: layout.Summary, hold: int | None) -> _Generation:
        """Open ``path``, held by ``hold`` (:func:`holds.hold_current`; released with the
        generation, or here if opening fails)."""
        try:
            check_built_with(
                self.embedder, summary.embedder, summary.dimension, str(self.index_dir)
            )
            view = open_generation(path)
            use_fitted = self.config.retrieval.fitted_fusion
            fusion = fitted.load_fusion(self.index_dir, path) if use_fitted else None
        except BaseException:
            holds.drop_hold(hold)
            raise
        key = next(self._serial)
        # released when nothing holds the view any more (see the module docstring)
        release = weakref.finalize(view, _release_generation, hold, self._held, key)
        self._held[key] = (path.name, release)
        return _Generation(path, summary, view, fusion)

    def _view(self) -> IndexView:
        return self._current().view

    def _live(self) -> tuple[IndexView, FusionWeights | None]:
        generation = self._current()
        return generation.view, generation.fusion

    def _current(self) -> _Generation:
        """The live generation, reopened if an ingest committed a newer one."""
        self._check_open(self.index_dir)
        generation = self._generation
        try:
            # a commit replaces the pointer file: re-read it only when its stat changes
            st = os.stat(self._pointer)
            key = (st.st_ino, st.st_mtime_ns, st.st_size)
            if key != self._pointer_key:
                self._pointer_name = Path(self._pointer).read_text(encoding="utf-8").strip()
                self._pointer_key = key
            name = self._pointer_name
        except OSError:
            return generation
        if name == generation.path.name:
            return generation
        with self._lock:
            if self._generation.path.name != name:
                path, summary, hold = _hold_live(self.index_dir)
                # the retired one is released once nothing reads it: at this call's
                # return (``generation`` goes) unless a pinned store or a call holds it
                self._generation = self._open(path, summary, hold)
            return self._generation

    def open_generations(self) -> list[str]:
        """The names of the generations this store holds open, oldest first: the live one
        and each retired one that a pinned store (or a call still running) reads; none
        once closed."""
        return [name for _, (name, _) in sorted(self._held.copy().items())]

    def delete_documents(self, doc_ids: Sequence[str]) -> IngestReport:
        """Delete whole documents as one committed generation (see
        :func:`thresher.index.embedded.delete.delete_embedded`); this store switches to it."""
        from thresher.index.embedded.delete import delete_embedded

        self._check_open(self.index_dir)
        return delete_embedded(self.index_dir, doc_ids)

    def pinned(self) -> Store:
        """The live generation, fixed: every call through the returned store reads it,
        whatever an ingest commits meanwhile (:class:`~thresher.index.store.PinsGeneration`).
        It holds that generation open until it is dropped. It shares this store's query
        vectors and filters; closing this store closes it.

        Raises:
            BackendUnavailableError: this store is closed.
        """
        return _PinnedStore(self, self._current())

    def stats(self) -> StoreStats:
        """Counts, embedder and format of the live generation."""
        return self._stats(self._current())

    def _stats(self, generation: _Generation) -> StoreStats:
        m = generation.summary
        return StoreStats(
            backend=self.backend,
            location=str(self.index_dir),
            documents=m.documents,
            chunks=m.chunks,
            embedder=m.embedder,
            dimension=m.dimension,
            format_version=m.format_version,
            extra={
                "generation": generation.path.name,
                "thresher_version": m.thresher_version,
                "chunking": dict(m.chunking),
                "sanitized": dict(m.sanitized),
                "created_at": m.created_at,
                "updated_at": m.updated_at,
                "fusion_weights": self._fusion_shown(generation),
            },
        )

    def _fusion_shown(self, generation: _Generation) -> dict[str, object]:
        """The fusion :meth:`hybrid_search` uses on ``generation``, and where it is from."""
        if generation.fusion is not None:
            return {**generation.fusion.to_dict(), "source": fitted.FUSION_FILE}
        return {"bm25": 1.0, "dense": 1.0, "rrf_k": self.config.retrieval.rrf_k, "source": "config"}

    def _release(self) -> None:
        """Release every generation still open: the live one and the retired ones pinned
        stores read (they raise ``BackendUnavailableError`` from here on)."""
        for _, release in list(self._held.copy().values()):
            release()


class _PinnedStore(ViewStore):
    """One generation of an :class:`EmbeddedStore`, fixed (see :meth:`EmbeddedStore.pinned`).

    It holds its generation open: reads through it keep working after an ingest commits
    a newer one, and a retired generation is released once the last pinned store on it
    is dropped (or its store closes). Writes (deleting documents) go to the store, which
    switches to the generation they commit; this view does not.
    """

    backend = "embedded"
    index_dir: Path

    def __init__(self, owner: EmbeddedStore, generation: _Generation) -> None:
        super().__init__(owner.config, owner.embedder)
        # one cache of query vectors and filters per store, whatever view reads it (the
        # filter memo is keyed by the view, and guarded by the owner's lock)
        self._queries = owner._queries
        self._filtered = owner._filtered
        self._lock = owner._lock
        self.index_dir = owner.index_dir
        self._owner = owner
        self._generation = generation

    def _view(self) -> IndexView:
        self._owner._check_open(self.index_dir)
        return self._generation.view

    def _live(self) -> tuple[IndexView, FusionWeights | None]:
        return self._view(), self._generation.fusion

    def pinned(self) -> Store:
        """Itself: already fixed."""
        return self

    def stats(self) -> StoreStats:
        """Counts, embedder and format of the pinned generation."""
        self._owner._check_open(self.index_dir)
        return self._owner._stats(self._generation)

    def delete_documents(self, doc_ids: Sequence[str]) -> IngestReport:
        """Delete through the store (this view keeps reading its generation)."""
        return self._owner.delete_documents(doc_ids)

    def close(self) -> None:
        """Nothing: the store it came from owns the generation (closing that closes this;
        dropping this view lets a retired generation go)."""

    def _release(self) -> None:  # never called: close does nothing
        raise AssertionError("a pinned store is released by the store it came from")
