"""Reading the server's context size where vLLM and llama.cpp report it."""

from __future__ import annotations

from thresher.llm.context import ContextSize, context_from_listing, context_from_props


def test_vllm_max_model_len_wins_for_the_named_model():
    body = {"data": [{"id": "a", "max_model_len": 8192}, {"id": "b", "max_model_len": 4096}]}
    assert context_from_listing(body, "b") == ContextSize(4096, "/v1/models max_model_len")
    assert context_from_listing(body, "unknown").tokens == 8192


def test_llama_cpp_n_ctx_before_n_ctx_train():
    body = {"data": [{"id": "m", "meta": {"n_ctx": 4096, "n_ctx_train": 32768}}]}
    assert context_from_listing(body, "m") == ContextSize(4096, "/v1/models meta.n_ctx")
    body = {"data": [{"id": "m", "meta": {"n_ctx_train": 32768}}]}
    assert context_from_listing(body, "m").source == "/v1/models meta.n_ctx_train"


def test_nothing_said_is_none():
    assert context_from_listing({"data": [{"id": "m"}]}, "m") is None
    assert context_from_listing({}, "m") is None
    assert context_from_props({"default_generation_settings": {"n_ctx": True}}) is None
    assert context_from_props({"default_generation_settings": {"n_ctx": 2048}}).tokens == 2048
