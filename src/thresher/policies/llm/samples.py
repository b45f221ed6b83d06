"""A reply's tokens, as vLLM reports them: what a request asks and what a completion says.

vLLM's OpenAI-compatible server answers a chat request that sets
``return_token_ids: true`` with the prompt's token ids at the top of the body
(``prompt_token_ids``, the prompt as its chat template rendered it) and the
reply's token ids on the choice (``choices[0].token_ids``); with ``logprobs: true``
each generated token's log-probability is in ``choices[0].logprobs.content[i].logprob``.
:func:`token_request` is what the LLM policy adds to a request to ask for them
(``llm.return_tokens``); :func:`read_sample` reads them, whether asked or not, into
a :class:`~thresher.harness.actions.Sample` the harness records as a ``sample`` event.

A completion that reports no ids, or ids of another shape, gives no sample: the
reply is taken as ever (the tokens are a record for training, never a reason to
refuse a reply). Log-probabilities that are absent, not one per completion token,
or not finite numbers are dropped (the sample keeps its ids, ``logprobs`` None).
"""

from __future__ import annotations

from typing import Any

from thresher.harness.actions import Sample

__all__ = ["token_request", "read_sample"]


def token_request() -> dict[str, Any]:
    """The request fields that ask for a reply's token ids and log-probabilities, to merge
    into a request's parameters: ``logprobs`` (OpenAI's field) and vLLM's own
    ``return_token_ids``, sent in the ``openai`` client's ``extra_body`` (it lands at the
    top of the JSON body)."""
    return {"logprobs": True, "extra_body": {"return_token_ids": True}}


def read_sample(body: dict[str, Any]) -> Sample | None:
    """The tokens the chat completion ``body`` reports for its first choice, or None when
    it reports no prompt and completion ids (or ids that are not lists of token ids).
    Pure."""
    choices = body.get("choices")
    first = choices[0] if isinstance(choices, list) and choices else None
    if not isinstance(first, dict):
        return None
    prompt, completion = body.get("prompt_token_ids"), first.get("token_ids")
    if not isinstance(prompt, list) or not isinstance(completion, list):
        return None
    try:
        return Sample.of(prompt, completion, _logprobs(first.get("logprobs"), len(completion)))
    except ValueError:
        try:
            return Sample.of(prompt, completion)  # the ids hold, the log-probabilities do not
        except ValueError:
            return None


def _logprobs(data: Any, n: int) -> list[float] | None:
    """``choices[0].logprobs.content[i].logprob`` when there is one per completion token."""
    content = data.get("content") if isinstance(data, dict) else None
    if not isinstance(content, list) or len(content) != n:
        return None
    values: list[float] = []
    for entry in content:
        value = entry.get("logprob") if isinstance(entry, dict) else None
        if not isinstance(value, int | float):
            return None
        values.append(value)
    return values
