"""Reading a completion's token ids and log-probabilities (vLLM's shape) into a Sample."""

from __future__ import annotations

from typing import Any

import pytest

from thresher.config import Config
from thresher.harness.actions import Sample
from thresher.policies.llm import LLMPolicy
from thresher.policies.llm.samples import read_sample, token_request


def vllm_body(prompt: Any = (1, 2, 3), ids: Any = (7, 8), logprobs: Any = (-0.5, -1.5)) -> dict:
    """A chat completion as vLLM returns it with return_token_ids and logprobs."""
    choice: dict[str, Any] = {
        "index": 0,
        "message": {"role": "assistant", "content": "hi"},
        "finish_reason": "stop",
        "token_ids": None if ids is None else list(ids),
    }
    if logprobs is not None:
        choice["logprobs"] = {
            "content": [
                {"token": "x", "logprob": lp, "bytes": None, "top_logprobs": []} for lp in logprobs
            ]
        }
    body: dict[str, Any] = {"model": "m", "choices": [choice], "usage": {"prompt_tokens": 3}}
    if prompt is not None:
        body["prompt_token_ids"] = list(prompt)
    return body


def test_a_vllm_completion_gives_its_ids_and_logprobs():
    assert read_sample(vllm_body()) == Sample((1, 2, 3), (7, 8), (-0.5, -1.5))


@pytest.mark.parametrize(
    "logprobs", [None, (-0.5,), (-0.5, "x"), (-0.5, None)], ids=["none", "short", "text", "null"]
)
def test_logprobs_that_do_not_fit_are_dropped_and_the_ids_kept(logprobs):
    assert read_sample(vllm_body(logprobs=logprobs)) == Sample((1, 2, 3), (7, 8), None)


@pytest.mark.parametrize(
    "body",
    [
        vllm_body(prompt=None),
        vllm_body(ids=None),
        vllm_body(ids=["a"]),
        vllm_body(prompt=[1.5]),
        {"choices": []},
        {"choices": "x"},
        {},
    ],
    ids=["no-prompt-ids", "no-ids", "text-ids", "float-ids", "no-choice", "bad-choices", "empty"],
)
def test_a_completion_without_usable_ids_gives_no_sample(body):
    assert read_sample(body) is None


def test_the_request_asks_for_tokens_only_when_the_setting_says_so():
    policy = LLMPolicy(Config(), env={}, base_url="http://127.0.0.1:9/v1")
    assert "logprobs" not in policy.request_params() and "extra_body" not in policy.request_params()
    asking = LLMPolicy(Config(), env={}, base_url="http://127.0.0.1:9/v1", return_tokens=True)
    params = asking.request_params()
    assert params["logprobs"] is True and params["extra_body"] == {"return_token_ids": True}
    assert token_request() == {"logprobs": True, "extra_body": {"return_token_ids": True}}
