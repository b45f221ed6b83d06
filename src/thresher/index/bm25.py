"""The BM25 side index: lexical scores over every chunk.

Backend-agnostic: it knows chunk ids and texts, nothing about chromadb. Built
in one go with ``bm25s``, which has no incremental add: ingestion rebuilds it
whole (what that costs: ``docs/ingestion.md``, "The BM25 side index is rebuilt
whole"), and saved next to the dense index. A saved index is memory-mapped when
loaded (its score matrix, and the chunk ids through
:mod:`thresher.index.id_table`), so opening one reads little and several
processes share the pages.

Analyzer (documented so that queries and documents are cut alike): lowercase,
split on Unicode word characters (``\\w+``), drop the English stopwords of
``bm25s`` (Lucene's list), then stem with the Snowball English stemmer
(PyStemmer). Scores are Lucene's BM25 (k1=1.5, b=0.75); each distinct query
term counts once.
"""

from __future__ import annotations

import json
import re
import threading
from collections import OrderedDict
from collections.abc import Collection, Iterable, Mapping, Sequence
from operator import itemgetter
from pathlib import Path

import numpy as np

from thresher.errors import IndexVersionError, ModelMissingError, UnknownIdError
from thresher.index.id_table import load_ids, names_at, positions_of, save_ids

__all__ = ["Analyzer", "Bm25Index"]

_FORMAT = 1
_TINY = float(np.nextafter(np.float32(0), np.float32(1)))  # the smallest positive score
_SAMPLE_STEP = 16
_RECENT = 8  # score vectors kept (4 MB each at 1M chunks)
#: query texts whose term ids an index keeps (a few hundred bytes each)
_KEYS_KEPT = 4096
_WORD = re.compile(r"\w+")
#: word -> stem pairs an analyzer keeps: a corpus repeats its words (Zipf), so most
#: words of an ingest are stemmed once, and their terms share one string each
_STEMS_KEPT = 500_000


def _stopwords_en() -> frozenset[str]:
    """``bm25s``'s English stopwords, read from its ``stopwords`` module alone: importing
    the ``bm25s`` package imports ``scipy.sparse``, which a reader of a saved index does
    not need (what that saves: ``docs/startup.md``)."""
    global _STOPWORDS
    if _STOPWORDS is None:
        import importlib.util

        package = importlib.util.find_spec("bm25s")
        where = list(package.submodule_search_locations or ()) if package else []
        spec = importlib.util.spec_from_file_location(
            "thresher.index._bm25s_stopwords", Path(where[0]) / "stopwords.py"
        ) if where else None  # fmt: skip
        if spec is None or spec.loader is None:
            from bm25s.stopwords import STOPWORDS_EN
        else:
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            STOPWORDS_EN = module.STOPWORDS_EN
        _STOPWORDS = frozenset(STOPWORDS_EN)
    return _STOPWORDS


_STOPWORDS: frozenset[str] | None = None


class _SavedScores:
    """A saved ``bm25s`` index (method ``lucene``: no non-occurrence scores) read without
    importing ``bm25s``: its vocabulary and its memory-mapped score matrix (CSC, one
    column per term). :meth:`get_scores_from_ids` sums as ``bm25s`` 0.3 does, so the
    scores are the same floats."""

    def __init__(self, folder: Path) -> None:
        params = json.loads((folder / "params.index.json").read_text(encoding="utf-8"))
        self.vocab_dict: dict[str, int] = json.loads(
            (folder / "vocab.index.json").read_text(encoding="utf-8")
        )
        self._dtype = np.dtype(params.get("dtype", "float32"))
        self._int_dtype = np.dtype(params.get("int_dtype", "int32"))
        self._num_docs = int(params["num_docs"])
        arrays = {}
        for name in ("data", "indices", "indptr"):
            loaded = np.load(folder / f"{name}.csc.index.npy", mmap_mode="r", allow_pickle=False)
            arrays[name] = np.asarray(loaded)  # a plain view: no memmap object per slice
        self._data, self._indices, self._indptr = (
            arrays["data"],
            arrays["indices"],
            arrays["indptr"],
        )

    @staticmethod
    def readable(folder: Path) -> bool:
        """Whether :class:`_SavedScores` reads this saved index (else ``bm25s`` does)."""
        try:
            params = json.loads((folder / "params.index.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return False
        return (
            params.get("method") == "lucene"
            and params.get("backend", "numpy") == "numpy"
            and "num_docs" in params
            and not (folder / "nonoccurrence_array.index.npy").exists()
        )

    def get_scores_from_ids(self, term_ids: Sequence[int]) -> np.ndarray:
        ids = np.asarray(term_ids, dtype=self._int_dtype)
        if int(ids.max(initial=0)) >= len(self._indptr) - 1:
            raise ValueError("a query term id past the index's vocabulary")
        starts, ends = self._indptr[ids], self._indptr[ids + 1]
        scores = np.zeros(self._num_docs, dtype=self._dtype)
        for start, end in zip(starts.tolist(), ends.tolist(), strict=True):
            np.add.at(scores, self._indices[start:end], self._data[start:end])
        return scores


class Analyzer:
    """Text to index terms: lowercase, ``\\w+`` words, no stopwords, optional stemming."""

    def __init__(self, stemmer: str | None = "english") -> None:
        self.stemmer = stemmer
        self._stopwords = _stopwords_en()
        self._local = threading.local()  # PyStemmer objects are not thread-safe
        self._stems: dict[str, str] = {}
        if stemmer is not None:
            self._stem_words(["check"])  # fail early if the stemmer is missing

    def _stem_words(self, words: list[str]) -> list[str]:
        stem = getattr(self._local, "stem", None)
        if stem is None:
            try:
                import Stemmer
            except ImportError as exc:
                raise ModelMissingError(
                    "the BM25 index stems English words with PyStemmer, which is not "
                    "installed; run `pip install PyStemmer` (or `make setup`)"
                ) from exc
            stem = self._local.stem = Stemmer.Stemmer(self.stemmer).stemWords
        stemmed: list[str] = stem(words)
        return stemmed

    def terms(self, text: str) -> list[str]:
        """The index terms of ``text``, in order (repeats kept)."""
        words = [w for w in _WORD.findall(text.lower()) if w not in self._stopwords]
        if self.stemmer is None or not words:
            return words
        cache = self._stems
        stems = {w: cache.get(w) for w in set(words)}
        missing = [w for w, s in stems.items() if s is None]
        if missing:
            if len(cache) > _STEMS_KEPT:
                cache.clear()
            for word, stem in zip(missing, self._stem_words(missing), strict=True):
                stems[word] = cache[word] = stem
        return [stems[w] for w in words]  # type: ignore[misc]

    def to_dict(self) -> dict[str, object]:
        return {
            "lowercase": True,
            "token_pattern": _WORD.pattern,
            "stopwords": "bm25s-en",
            "stemmer": self.stemmer,
        }


class Bm25Index:
    """BM25 scores of a query against every chunk, ids in corpus order.

    Build with :meth:`build`, persist with :meth:`save` / :meth:`load`.
    """

    def __init__(
        self,
        ids: Sequence[str],
        model: object | None,
        analyzer: Analyzer,
        positions: Mapping[str, int] | None = None,
    ) -> None:
        self._ids: Sequence[str] = ids if positions is not None else list(ids)
        self._position: Mapping[str, int] = (
            positions if positions is not None else {cid: i for i, cid in enumerate(self._ids)}
        )
        if len(self._position) != len(self._ids):
            raise ValueError("Bm25Index: chunk ids must be unique")
        self._model = model
        self.analyzer = analyzer
        # the score vectors of the last few analyzed queries (read-only): an episode
        # scores chunks against its question on every hop
        self._recent: OrderedDict[tuple[int, ...], np.ndarray] = OrderedDict()
        self._recent_lock = threading.Lock()
        # query text -> its sorted vocabulary term ids: an episode scores chunks against
        # its question on every search, and analyzing it costs more than the lookup
        # (a dict's get and set are atomic; emptied when full)
        self._keys: dict[str, tuple[int, ...]] = {}

    @classmethod
    def build(
        cls, ids: Sequence[str], texts: Iterable[str], stemmer: str | None = "english"
    ) -> Bm25Index:
        """Index ``texts`` (one per id, same order; the order is the corpus order).

        Args:
            ids: unique chunk ids.
            texts: the text indexed for each id.
            stemmer: a Snowball stemmer name, or None for no stemming.

        Returns:
            The index (empty when ``ids`` is empty).
        """
        import bm25s

        analyzer = Analyzer(stemmer)
        corpus = [analyzer.terms(t) for t in texts]
        if len(corpus) != len(ids):
            raise ValueError(f"Bm25Index.build: {len(ids)} ids but {len(corpus)} texts")
        model = None
        if corpus:
            model = bm25s.BM25()
            model.index(corpus, show_progress=False)
        return cls(ids, model, analyzer)

    @property
    def ids(self) -> list[str]:
        """Chunk ids in corpus order (a copy)."""
        return list(self._ids)

    @property
    def id_list(self) -> Sequence[str]:
        """Chunk ids in corpus order, not copied (``id_list[i]`` is the chunk at ``i``)."""
        return self._ids

    @property
    def positions(self) -> Mapping[str, int]:
        """Chunk id -> its place in corpus order."""
        return self._position

    def __len__(self) -> int:
        return len(self._ids)

    def __contains__(self, chunk_id: object) -> bool:
        return chunk_id in self._position

    def scores(self, query: str) -> np.ndarray:
        """BM25 score of ``query`` against every chunk (float32, corpus order; read-only)."""
        if self._model is None:
            return np.zeros(0, dtype=np.float32)
        key = self._keys.get(query)
        if key is None:
            vocab = self._model.vocab_dict  # type: ignore[attr-defined]
            key = tuple(sorted({vocab[t] for t in self.analyzer.terms(query) if t in vocab}))
            if len(self._keys) >= _KEYS_KEPT:
                self._keys.clear()
            self._keys[query] = key
        if not key:
            return np.zeros(len(self._ids), dtype=np.float32)
        term_ids = list(key)
        with self._recent_lock:
            cached = self._recent.get(key)
            if cached is not None:
                self._recent.move_to_end(key)
                return cached
        scores = np.asarray(self._model.get_scores_from_ids(term_ids), dtype=np.float32)  # type: ignore[attr-defined]
        scores.setflags(write=False)
        with self._recent_lock:
            self._recent[key] = scores
            while len(self._recent) > _RECENT:
                self._recent.popitem(last=False)
        return scores

    def search(
        self,
        query: str,
        k: int,
        exclude: Collection[str] = (),
        blocked: np.ndarray | None = None,
        only: np.ndarray | None = None,
    ) -> list[tuple[str, float]]:
        """The ``k`` best chunks for ``query``, excluded ids removed before the cut.

        ``blocked``: positions (in corpus order) excluded as well, for a large excluded
        set held as positions once (a filter) instead of ids looked up on every call.
        ``only``: the positions that may be returned, all others excluded (a narrow
        filter: only these are ranked; ``blocked`` is then ignored). The same list as
        excluding every other position through ``blocked``.

        Returns:
            ``(chunk_id, score)`` pairs, highest score first, ties by chunk id;
            chunks that share no term with the query (score 0) never appear.
        """
        if k <= 0 or not self._ids:
            return []
        scores = self.scores(query)
        if only is not None:
            return self._best_of(only, scores, k, exclude)
        if exclude:
            drop = [i for i in positions_of(self._position, exclude) if i is not None]
            if drop:
                scores = scores.copy()
                scores[drop] = 0.0
        if blocked is not None and len(blocked):
            scores = scores.copy() if not scores.flags.writeable else scores
            scores[blocked] = 0.0
        # Every chunk scoring at least the k-th best score (every tie at the cut; never a
        # zero score). The k-th best of every 16th chunk is a lower bound on it, so one
        # pass over the scores leaves a few hundred candidates to partition exactly.
        sample = scores[::_SAMPLE_STEP]
        low = _TINY
        if len(sample) > k:
            low = max(float(np.partition(sample, len(sample) - k)[len(sample) - k]), _TINY)
        candidates = np.flatnonzero(scores >= low)
        if len(candidates) > k:
            values = scores[candidates]
            kth = float(np.partition(values, len(values) - k)[len(values) - k])
            candidates = candidates[values >= max(kth, _TINY)]
        return self._best(candidates, scores, k)

    def _best_of(
        self, only: np.ndarray, scores: np.ndarray, k: int, exclude: Collection[str]
    ) -> list[tuple[str, float]]:
        """The ``k`` best of the positions ``only`` not in ``exclude`` (ids), as
        :meth:`search` ranks them: every one scoring at least the ``k``-th best kept."""
        candidates = only[scores[only] >= _TINY]
        if exclude and len(candidates):
            drop = [i for i in positions_of(self._position, exclude) if i is not None]
            if drop:
                candidates = candidates[~np.isin(candidates, drop)]
        if len(candidates) > k:
            values = scores[candidates]
            kth = float(np.partition(values, len(values) - k)[len(values) - k])
            candidates = candidates[values >= kth]
        return self._best(candidates, scores, k)

    def _best(self, candidates: np.ndarray, scores: np.ndarray, k: int) -> list[tuple[str, float]]:
        """The ``k`` best of ``candidates`` by (score descending, chunk id): ids are read only
        for the score groups that reach the top ``k`` (a corpus of repeats ties a lot)."""
        order = candidates[np.argsort(-scores[candidates], kind="stable")]
        values = scores[order]
        end = len(order)
        if end > k > 0:  # to the end of the group of the k-th score (sorted: ties follow it)
            end = k + int(np.count_nonzero(values[k:] == values[k - 1]))
        elif k <= 0:
            end = 0
        names = names_at(self._ids, order[:end].tolist())
        pairs = list(zip(names, values[:end].tolist(), strict=True))
        if end > 1 and (values[1:end] == values[: end - 1]).any():  # ties: by id
            pairs.sort(key=itemgetter(0))
            pairs.sort(key=itemgetter(1), reverse=True)  # stable: equal scores stay by id
        return pairs[:k]

    def scores_for(self, query: str, chunk_ids: Sequence[str]) -> list[float]:
        """BM25 score of ``query`` against each given chunk, in order.

        Raises:
            UnknownIdError: listing the ids the index does not hold.
        """
        return self.scores_at(query, self.positions_for(chunk_ids))

    def positions_for(self, chunk_ids: Sequence[str]) -> np.ndarray:
        """The corpus position of each of ``chunk_ids``, in order (int64).

        Raises:
            UnknownIdError: listing the ids the index does not hold.
        """
        found = positions_of(self._position, chunk_ids)
        if None in found:
            missing = [c for c, i in zip(chunk_ids, found, strict=True) if i is None]
            raise UnknownIdError(
                f"unknown chunk ids: {', '.join(missing[:10])}"
                + (f" (+{len(missing) - 10} more)" if len(missing) > 10 else ""),
                missing,
            )
        return np.asarray(found, dtype=np.int64)

    def scores_at(self, query: str, positions: np.ndarray) -> list[float]:
        """BM25 score of ``query`` against the chunk at each of ``positions``, in order."""
        if not len(positions):
            return []
        # float32 to float is exact: the same values as ``float(scores[i])`` one by one
        picked: list[float] = self.scores(query)[positions].tolist()
        return picked

    def save(self, directory: str | Path) -> None:
        """Write the index into ``directory`` (created if needed)."""
        out = Path(directory)
        out.mkdir(parents=True, exist_ok=True)
        meta = {"format": _FORMAT, "analyzer": self.analyzer.to_dict(), "count": len(self._ids)}
        save_ids(out, self._ids)
        if self._model is not None:
            self._model.save(str(out / "bm25s"), show_progress=False)  # type: ignore[attr-defined]
        (out / "bm25.json").write_text(json.dumps(meta, indent=1), encoding="utf-8")

    @classmethod
    def load(cls, directory: str | Path) -> Bm25Index:
        """Read an index written by :meth:`save`.

        Raises:
            IndexVersionError: the folder was written in a newer format.
            ModelMissingError: the index stems words and PyStemmer is missing.
        """
        src = Path(directory)
        meta = json.loads((src / "bm25.json").read_text(encoding="utf-8"))
        if meta.get("format", 0) > _FORMAT:
            raise IndexVersionError(
                f"BM25 index in {src} has format {meta['format']} (this thresher reads "
                f"{_FORMAT}); upgrade thresher"
            )
        analyzer = Analyzer(meta["analyzer"].get("stemmer"))
        table = load_ids(src)
        ids: Sequence[str]
        if table is not None:
            ids, positions = table, table.positions()
        else:  # written before the id table existed
            ids, positions = json.loads((src / "ids.json").read_text(encoding="utf-8")), None
        model: object | None = None
        if len(ids) and _SavedScores.readable(src / "bm25s"):
            model = _SavedScores(src / "bm25s")
        elif len(ids):
            import bm25s

            loaded = bm25s.BM25.load(
                str(src / "bm25s"), mmap=True, show_progress=False, verbosity=0
            )
            # plain ndarray views of the same mapped pages: numpy's memmap subclass costs
            # an object per slice, a third of a query's scoring time on a small index
            for key in ("data", "indices", "indptr"):
                if isinstance(loaded.scores.get(key), np.memmap):
                    loaded.scores[key] = np.asarray(loaded.scores[key])
            model = loaded
        return cls(ids, model, analyzer, positions)
