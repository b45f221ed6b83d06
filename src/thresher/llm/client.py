"""The chat-completions client: an OpenAI-compatible endpoint's chat and model listing.

The endpoint itself (settings from config or environment, the retry policy,
what is retried and what fails at once, the typed errors) is
:mod:`thresher.endpoint`, shared with the embeddings client; this module adds
what is particular to chat: the model name (configured or discovered), the
context size, a completion's shape, and the advice in the words of the
``llm.*`` settings. Every retry is counted per request and reported back
(``ChatResponse.retries``, which the policy writes into the trace).

The API key is read from the environment variable the config names and is
kept out of every repr, log line and trace.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from thresher.endpoint.client import (
    Advice,
    EndpointClient,
    EndpointRequestError,
    EndpointResponseError,
    RawResponse,
    RetryRecord,
    decode_json,
    not_a,
)
from thresher.endpoint.settings import EndpointSettings
from thresher.llm.context import ContextSize, context_from_listing, context_from_props

__all__ = ["ChatResponse", "ChatClient", "LLM_ADVICE"]

#: what the chat client's errors tell the user to check
LLM_ADVICE = Advice(
    endpoint="LLM endpoint",
    no_server="start the model server (see docs/serving.md) "
    "or set llm.base_url / THRESHER_LLM_BASE_URL",
    unavailable="start the server (see docs/serving.md), check llm.base_url, "
    "or raise llm.max_retries",
    refused="check llm.model, llm.api_key_env and the server log (a server that does "
    "not take a json_schema response_format: set llm.first_response_format=none; one "
    'that does not take tool_choice "required": set llm.first_tool_choice=auto)',
    not_api="check that llm.base_url (or THRESHER_LLM_BASE_URL) is the /v1 root of an "
    "OpenAI-compatible server, e.g. http://127.0.0.1:8000/v1 for vLLM (see docs/serving.md)",
    timeout_setting="llm.timeout_s={timeout_s:g}, capped by the episode's wall time left",
    slow="the server is up and slow (a CPU model can take minutes per reply); raise "
    "llm.timeout_s, lower llm.max_tokens, or serve a faster model",
)


@dataclass(frozen=True, slots=True)
class ChatResponse:
    """A decoded chat completion and what it took to get it (``model``: the one asked for)."""

    body: dict[str, Any]
    attempts: int
    retries: tuple[RetryRecord, ...] = ()
    model: str = ""


def _decode(raw: RawResponse, expected: str, base_url: str) -> dict[str, Any]:
    """The body as a JSON object. Raises EndpointResponseError when it is not one."""
    return decode_json(raw, expected, base_url, LLM_ADVICE)


def _decode_completion(raw: RawResponse, base_url: str) -> dict[str, Any]:
    """The body as a chat completion. Raises EndpointResponseError when it is not one."""
    expected = "a chat completion"
    body = _decode(raw, expected, base_url)
    choices = body.get("choices")
    if not isinstance(choices, list) or not choices:
        raise not_a(raw, expected, "no choices", base_url, LLM_ADVICE)
    first = choices[0]
    if not isinstance(first, dict) or not isinstance(first.get("message"), dict):
        raise not_a(raw, expected, "the first choice has no message", base_url, LLM_ADVICE)
    return body


class ChatClient:
    """Chat completions over the ``openai`` client, with counted retries.

    Args:
        settings: endpoint settings (see :meth:`EndpointSettings.resolve`).
        sleep: waits between attempts (tests pass a recorder).
        rng: jitter source.
    """

    def __init__(
        self,
        settings: EndpointSettings,
        *,
        sleep: Callable[[float], None] = time.sleep,
        rng: random.Random | None = None,
    ) -> None:
        self.settings = settings
        self._endpoint = EndpointClient(settings, LLM_ADVICE, sleep=sleep, rng=rng)
        self._client = self._endpoint.openai
        self._lock = threading.Lock()
        self._model = settings.model
        self._closed = False

    def fork(self) -> ChatClient:
        """A client with the same settings and its own connections, to close on its own.

        The policy makes one per model call, so that :meth:`close` ends that call
        (its connection closed, which makes llama.cpp and vLLM stop generating) and
        no other episode's.
        """
        twin = ChatClient(self.settings, sleep=self._endpoint.sleep, rng=self._endpoint.rng)
        with self._lock:
            twin._model = self._model
        return twin

    def close(self) -> None:
        """Close this client's connections: a request in flight fails at once and is not
        retried (:class:`EndpointCancelledError`). Idempotent; safe from another thread."""
        self._closed = True
        self._endpoint.close()

    def model(self) -> str:
        """The model name: configured, else the first one ``/v1/models`` lists (cached).

        Raises:
            EndpointUnavailableError: as :meth:`complete` (``EndpointResponseError``
                when the listing is not JSON).
            EndpointRequestError: the server refused the listing, or it names no model.
        """
        with self._lock:
            if self._model:
                return self._model
        base_url = self.settings.base_url

        def attempt() -> dict[str, Any]:
            raw = self._client.models.with_raw_response.list()
            return _decode(raw, "a model list", base_url)

        response = self._retrying(attempt, "models")
        data = response.body.get("data")
        listed = (
            [m.get("id") for m in data if isinstance(m, dict)] if isinstance(data, list) else []
        )
        ids = [i for i in listed if isinstance(i, str) and i]
        if not ids:
            raise EndpointRequestError(
                f"{base_url}/models lists no model; set llm.model or THRESHER_LLM_MODEL"
            )
        with self._lock:
            self._model = ids[0]
        return ids[0]

    def context_size(self) -> ContextSize | None:
        """The context the server gives a request (see :mod:`thresher.llm.context`), or None.

        Reads ``/v1/models`` (vLLM, llama.cpp), then llama.cpp's ``/props``; a server
        that says neither gives None (no check can be made).

        Raises:
            EndpointUnavailableError: as :meth:`complete` (a server that is down).
        """
        model = self.model()
        base_url = self.settings.base_url

        def listing() -> dict[str, Any]:
            raw = self._client.models.with_raw_response.list()
            return _decode(raw, "a model list", base_url)

        try:
            found = context_from_listing(self._retrying(listing, "models").body, model)
        except (EndpointRequestError, EndpointResponseError):
            found = None
        return found or self._props_context()

    def _props_context(self) -> ContextSize | None:
        """llama.cpp's ``/props`` at the server root (None when absent or unreadable)."""
        import httpx  # the openai client's transport

        root = self.settings.base_url.removesuffix("/v1")
        try:
            response = httpx.get(f"{root}/props", timeout=self.settings.timeout_s)
            body = response.json() if response.status_code == 200 else None
        except (httpx.HTTPError, ValueError):
            return None
        return context_from_props(body) if isinstance(body, dict) else None

    def complete(
        self,
        messages: Sequence[dict[str, Any]],
        tools: Sequence[dict[str, Any]],
        params: Mapping[str, Any],
        *,
        timeout_s: float | None = None,
    ) -> ChatResponse:
        """One chat completion, retried on transient failures.

        Args:
            messages: the chat messages, sent as is.
            tools: tool schemas (may be empty).
            params: further request fields (``temperature``, ``max_tokens``, …).
            timeout_s: this request's timeout, when shorter than ``llm.timeout_s`` (the
                episode's wall time left).

        Returns:
            The decoded completion with its attempt count and retry records.

        Raises:
            EndpointUnavailableError: no server at ``base_url`` (at once), or every
                attempt failed transiently.
            EndpointResponseError: the body is not a chat completion (at once).
            EndpointRequestError: the server refused the request (4xx).
            EndpointCancelledError: :meth:`close` was called (the episode ended).
        """
        model = self.model()
        request: dict[str, Any] = {"model": model, "messages": list(messages), **params}
        if tools:
            request["tools"] = list(tools)
        base_url = self.settings.base_url

        limit = self.settings.timeout_s
        client = self._client
        if timeout_s is not None and timeout_s < limit:
            limit = max(timeout_s, 0.001)
            client = self._client.with_options(timeout=limit)

        def attempt() -> dict[str, Any]:
            raw = client.chat.completions.with_raw_response.create(**request)
            return _decode_completion(raw, base_url)

        return replace(self._retrying(attempt, "chat completion", limit), model=model)

    def _retrying(
        self, fn: Callable[[], dict[str, Any]], what: str, timeout_s: float | None = None
    ) -> ChatResponse:
        """``fn()`` with its transient failures retried (:meth:`EndpointClient.call`)."""
        done = self._endpoint.call(fn, what, timeout_s)
        return ChatResponse(done.value, done.attempts, done.retries)
