"""The OpenAI-compatible endpoint: settings from config or environment, and retried requests.

What is retried, and what is not:

* retried: HTTP 408, 429 and 5xx, timeouts, and connections dropped before
  or during the response. The wait is exponential with jitter,
  ``backoff_s · 2^attempt · U(0.5, 1)``, never shorter than the server's
  ``Retry-After`` and never longer than :data:`MAX_WAIT_S`. When every attempt
  fails the request raises :class:`EndpointUnavailableError`.
* failing at once with :class:`EndpointUnavailableError`: a refused connection
  or an unknown host (no server at ``base_url``; waiting does not start one).
* failing at once with :class:`EndpointResponseError`: a 2xx body that is not
  a chat completion (an HTML page, JSON without ``choices``, garbage), which
  means ``base_url`` points at something that is not an OpenAI-compatible
  ``/v1``; a retry would get the same page.
* failing at once with :class:`EndpointRequestError`: any other 4xx (retrying
  cannot fix the request).

Why the retry loop is ours and not the ``openai`` client's ``max_retries``
(the client is built with ``max_retries=0``): every retry must be counted
per request and reported back (``ChatResponse.retries``, which the policy
writes into the trace); the openai loop retries every connection error alike,
refused connections included; it ignores ``llm.backoff_s`` (fixed 0.5 s
start, 8 s cap) and gives up on a ``Retry-After`` over two minutes; and its
sleep cannot be replaced, so tests would wait for real. httpx transport
retries cover only failed connects, the one case that must not be retried.

The API key is read from the environment variable the config names and is
kept out of every repr, log line and trace.
"""

from __future__ import annotations

import json
import logging
import os
import random
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from thresher.config import LLMConfig
from thresher.errors import BackendUnavailableError, ThresherError
from thresher.llm.context import ContextSize, context_from_listing, context_from_props
from thresher.llm.retry import (
    MAX_WAIT_S,
    backoff_delay,
    error_text,
    no_connection,
    parse_retry_after,
)

_no_connection = no_connection  # the name the tests import

__all__ = [
    "DEFAULT_BASE_URL",
    "MAX_WAIT_S",
    "EndpointSettings",
    "EndpointUnavailableError",
    "EndpointTimeoutError",
    "EndpointCancelledError",
    "EndpointResponseError",
    "EndpointRequestError",
    "RetryRecord",
    "ChatResponse",
    "ChatClient",
    "backoff_delay",
    "parse_retry_after",
]

log = logging.getLogger("thresher.llm")

DEFAULT_BASE_URL = "http://localhost:8000/v1"
#: sent when no key is configured (vLLM and Ollama ignore it; the client needs one)
PLACEHOLDER_KEY = "not-needed"


#: characters of an unexpected body quoted in :class:`EndpointResponseError`
BODY_SNIPPET_CHARS = 100


class EndpointUnavailableError(BackendUnavailableError):
    """No usable LLM endpoint: no server at ``base_url``, or no answer after every retry.

    The episode ends ``endpoint_unavailable``.
    """


class EndpointTimeoutError(EndpointUnavailableError):
    """Every attempt timed out: the server took the request and did not answer in time.

    The episode ends ``endpoint_unavailable``; the message names ``llm.timeout_s``.
    """


class EndpointCancelledError(ThresherError):
    """The model call was cancelled (its client closed) because its episode ended."""


class EndpointResponseError(EndpointUnavailableError):
    """The endpoint answered with a body that is not a chat completion: not retried.

    ``base_url`` most likely points at something other than the ``/v1`` root of
    an OpenAI-compatible server (a web page, a proxy, the server's root). The
    model never replied, so the episode ends ``endpoint_unavailable``, like an
    endpoint that is down, and not ``policy_error``, which blames the policy.
    """


class EndpointRequestError(ThresherError):
    """The LLM endpoint refused the request itself (HTTP 4xx other than 408/429): not retried."""


@dataclass(frozen=True)
class EndpointSettings:
    """Where and how to reach the endpoint. ``api_key`` never appears in a repr.

    Attributes:
        base_url: the ``/v1`` root of the server.
        model: the model name ('' until discovered from ``/v1/models``).
        api_key: the key sent as a bearer token (excluded from repr).
        api_key_source: the environment variable it came from ('' when none was set).
    """

    base_url: str
    model: str
    api_key: str = field(repr=False)
    api_key_source: str
    timeout_s: float
    max_retries: int
    backoff_s: float

    @classmethod
    def resolve(cls, config: LLMConfig, env: Mapping[str, str] | None = None) -> EndpointSettings:
        """Settings from ``config``, falling back to the environment.

        base_url: ``config.base_url``, ``THRESHER_LLM_BASE_URL``, ``OPENAI_BASE_URL``,
        then :data:`DEFAULT_BASE_URL`. model: ``config.model``, ``THRESHER_LLM_MODEL``,
        else '' (discovered later). key: ``$<config.api_key_env>``, ``OPENAI_API_KEY``,
        else a placeholder for keyless local servers.
        """
        env = os.environ if env is None else env
        base_url = (
            config.base_url
            or env.get("THRESHER_LLM_BASE_URL", "")
            or env.get("OPENAI_BASE_URL", "")
            or DEFAULT_BASE_URL
        )
        model = config.model or env.get("THRESHER_LLM_MODEL", "")
        key, source = PLACEHOLDER_KEY, ""
        for name in (config.api_key_env, "OPENAI_API_KEY"):
            if name and env.get(name):
                key, source = env[name], name
                break
        return cls(
            base_url=base_url.rstrip("/"),
            model=model,
            api_key=key,
            api_key_source=source,
            timeout_s=config.timeout_s,
            max_retries=config.max_retries,
            backoff_s=config.backoff_s,
        )


@dataclass(frozen=True, slots=True)
class RetryRecord:
    """One failed attempt that was retried: 1-based attempt, why, and the wait before the next."""

    attempt: int
    reason: str
    wait_s: float


@dataclass(frozen=True, slots=True)
class ChatResponse:
    """A decoded chat completion and what it took to get it (``model``: the one asked for)."""

    body: dict[str, Any]
    attempts: int
    retries: tuple[RetryRecord, ...] = ()
    model: str = ""


class _RawResponse(Protocol):
    """What is read of an undecoded response (``openai``'s ``with_raw_response`` results)."""

    @property
    def status_code(self) -> int: ...

    @property
    def headers(self) -> Mapping[str, str]: ...

    @property
    def text(self) -> str: ...


def _not_a(raw: _RawResponse, expected: str, problem: str, base_url: str) -> EndpointResponseError:
    """The error for a 2xx body that is not ``expected``: what came back and what to check."""
    snippet = " ".join(raw.text.split())[:BODY_SNIPPET_CHARS]
    ctype = raw.headers.get("content-type") or "none"
    return EndpointResponseError(
        f"{base_url} answered with something that is not {expected} ({problem}): "
        f"HTTP {raw.status_code}, content-type {ctype}, body {snippet!r}; check that "
        "llm.base_url (or THRESHER_LLM_BASE_URL) is the /v1 root of an OpenAI-compatible "
        "server, e.g. http://127.0.0.1:8000/v1 for vLLM (see docs/serving.md)"
    )


def _decode(raw: _RawResponse, expected: str, base_url: str) -> dict[str, Any]:
    """The body as a JSON object. Raises EndpointResponseError when it is not one."""
    try:
        body = json.loads(raw.text)
    except ValueError:
        raise _not_a(raw, expected, "the body is not JSON", base_url) from None
    if not isinstance(body, dict):
        raise _not_a(raw, expected, "the body is not a JSON object", base_url)
    return body


def _decode_completion(raw: _RawResponse, base_url: str) -> dict[str, Any]:
    """The body as a chat completion. Raises EndpointResponseError when it is not one."""
    expected = "a chat completion"
    body = _decode(raw, expected, base_url)
    choices = body.get("choices")
    if not isinstance(choices, list) or not choices:
        raise _not_a(raw, expected, "no choices", base_url)
    first = choices[0]
    if not isinstance(first, dict) or not isinstance(first.get("message"), dict):
        raise _not_a(raw, expected, "the first choice has no message", base_url)
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
        import openai  # imported here so that importing the policy package stays cheap

        self.settings = settings
        self._openai = openai
        self._client = openai.OpenAI(
            base_url=settings.base_url,
            api_key=settings.api_key,
            max_retries=0,
            timeout=settings.timeout_s,
        )
        self._sleep = sleep
        self._rng = rng or random.Random()
        self._lock = threading.Lock()
        self._model = settings.model
        self._closed = False

    def fork(self) -> ChatClient:
        """A client with the same settings and its own connections, to close on its own.

        The policy makes one per model call, so that :meth:`close` ends that call
        (its connection closed, which makes llama.cpp and vLLM stop generating) and
        no other episode's.
        """
        twin = ChatClient(self.settings, sleep=self._sleep, rng=self._rng)
        with self._lock:
            twin._model = self._model
        return twin

    def close(self) -> None:
        """Close this client's connections: a request in flight fails at once and is not
        retried (:class:`EndpointCancelledError`). Idempotent; safe from another thread."""
        self._closed = True
        self._client.close()

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
        """``fn()`` with its transient failures retried (see the module docstring)."""
        s = self.settings
        limit = s.timeout_s if timeout_s is None else timeout_s
        retries: list[RetryRecord] = []
        reason = ""
        timeouts = 0
        for n in range(s.max_retries + 1):
            try:
                if self._closed:
                    raise EndpointCancelledError(f"the {what} request was cancelled")
                return ChatResponse(fn(), n + 1, tuple(retries))
            except (self._openai.APIStatusError, self._openai.APIConnectionError) as exc:
                if self._closed:  # closed under the request: the episode ended
                    raise EndpointCancelledError(f"the {what} request was cancelled") from exc
                reason, retry_after = self._transient(exc, what, limit)
                timeouts += isinstance(exc, self._openai.APITimeoutError)
            if n == s.max_retries:
                break
            wait = backoff_delay(n, s.backoff_s, retry_after, self._rng)
            retries.append(RetryRecord(n + 1, reason, round(wait, 3)))
            log.warning(
                "LLM %s attempt %d failed (%s); retrying in %.2fs", what, n + 1, reason, wait
            )
            self._sleep(wait)
        if timeouts == s.max_retries + 1:
            raise EndpointTimeoutError(
                f"LLM endpoint {s.base_url} accepted the {what} request but did not answer "
                f"within {limit:g}s (llm.timeout_s={s.timeout_s:g}, capped by the episode's "
                f"wall time left), {timeouts} time(s): the server is up "
                "and slow (a CPU model can take minutes per reply); raise llm.timeout_s, "
                "lower llm.max_tokens, or serve a faster model"
            )
        raise EndpointUnavailableError(
            f"LLM endpoint {s.base_url} did not answer the {what} request after "
            f"{s.max_retries + 1} attempt(s) (last: {reason}); start the server "
            "(see docs/serving.md), check llm.base_url, or raise llm.max_retries"
        )

    def _transient(self, exc: Exception, what: str, limit: float) -> tuple[str, float | None]:
        """A retryable failure's reason and ``Retry-After``; raises for the others.

        Raises:
            EndpointUnavailableError: no connection could be made (refused, unknown host).
            EndpointRequestError: an HTTP 4xx other than 408 and 429.
        """
        openai = self._openai
        s = self.settings
        if isinstance(exc, openai.APIStatusError):
            status = exc.status_code
            if status not in (408, 429) and status < 500:
                raise EndpointRequestError(
                    f"{s.base_url} refused the {what} request: HTTP {status}: "
                    f"{error_text(exc)}; check llm.model, llm.api_key_env and the server log"
                ) from exc
            return f"HTTP {status}", parse_retry_after(exc.response.headers.get("retry-after"))
        if isinstance(exc, openai.APITimeoutError):
            return f"no answer within {limit:g}s", None
        why = no_connection(exc)
        if why is not None:
            raise EndpointUnavailableError(
                f"no server at {s.base_url}: start the model server (see docs/serving.md) "
                f"or set llm.base_url / THRESHER_LLM_BASE_URL ({why})"
            ) from exc
        cause = exc.__cause__ or exc
        return f"connection failed ({type(cause).__name__})", None
