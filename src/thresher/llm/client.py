"""The OpenAI-compatible endpoint: settings from config or environment, and retried requests.

The ``openai`` client is built with ``max_retries=0``; retries are ours, so
each one is counted, logged and reported back (``ChatResponse.retries``).
Retried: HTTP 408, 429 and 5xx, timeouts, refused or dropped connections,
and a body that is not a chat completion. The wait is exponential with
jitter, ``backoff_s · 2^attempt · U(0.5, 1)``, never shorter than the
server's ``Retry-After`` and never longer than :data:`MAX_WAIT_S`. When every
attempt fails the request raises :class:`EndpointUnavailableError`; any
other 4xx raises :class:`EndpointRequestError` at once (retrying cannot fix it).

The API key is read from the environment variable the config names and is
kept out of every repr, log line and trace.
"""

from __future__ import annotations

import email.utils
import json
import logging
import math
import os
import random
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from thresher.config import LLMConfig
from thresher.errors import BackendUnavailableError, ThresherError

__all__ = [
    "DEFAULT_BASE_URL",
    "MAX_WAIT_S",
    "EndpointSettings",
    "EndpointUnavailableError",
    "EndpointRequestError",
    "RetryRecord",
    "ChatResponse",
    "ChatClient",
    "backoff_delay",
    "parse_retry_after",
]

log = logging.getLogger("thresher.policies.llm")

DEFAULT_BASE_URL = "http://localhost:8000/v1"
#: the longest single wait between attempts, in seconds
MAX_WAIT_S = 120.0
#: sent when no key is configured (vLLM and Ollama ignore it; the client needs one)
PLACEHOLDER_KEY = "not-needed"


class EndpointUnavailableError(BackendUnavailableError):
    """The LLM endpoint did not answer after every retry (the episode ends ``endpoint_unavailable``)."""


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
    """A decoded chat completion and what it took to get it."""

    body: dict[str, Any]
    attempts: int
    retries: tuple[RetryRecord, ...] = ()


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (delta-seconds or an HTTP date).

    Returns None when the header is absent or unreadable; never negative.
    """
    if value is None or not value.strip():
        return None
    try:
        seconds = float(value.strip())
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value.strip())
        except (TypeError, ValueError):
            return None
        seconds = when.timestamp() - (time.time() if now is None else now)
    if math.isnan(seconds) or math.isinf(seconds):
        return None
    return max(0.0, seconds)


def backoff_delay(
    attempt: int, base_s: float, retry_after: float | None, rng: random.Random
) -> float:
    """The wait before retry number ``attempt + 1`` (``attempt`` is 0-based).

    ``base_s · 2^attempt · U(0.5, 1)``, at least ``retry_after``, at most :data:`MAX_WAIT_S`.
    """
    jittered = base_s * (2.0**attempt) * (0.5 + 0.5 * rng.random())
    return min(MAX_WAIT_S, max(jittered, retry_after or 0.0))


class _BadBody(Exception):
    """The server answered 2xx with something that is not a chat completion."""


def _decode(text: str, what: str) -> dict[str, Any]:
    try:
        body = json.loads(text)
    except ValueError as exc:
        snippet = " ".join(text.split())[:80]
        raise _BadBody(f"the {what} body is not JSON ({snippet!r})") from exc
    if not isinstance(body, dict):
        raise _BadBody(f"the {what} body is not a JSON object")
    return body


def _check_completion(body: dict[str, Any]) -> dict[str, Any]:
    choices = body.get("choices")
    if not isinstance(choices, list) or not choices:
        raise _BadBody("the reply has no choices")
    first = choices[0]
    if not isinstance(first, dict) or not isinstance(first.get("message"), dict):
        raise _BadBody("the reply's first choice has no message")
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

    def model(self) -> str:
        """The model name: configured, else the first one ``/v1/models`` lists (cached).

        Raises ``EndpointUnavailableError`` / ``EndpointRequestError`` as :meth:`complete`.
        """
        with self._lock:
            if self._model:
                return self._model
        response = self._retrying(
            lambda: _decode(self._client.models.with_raw_response.list().text, "models"), "models"
        )
        data = response.body.get("data")
        ids = [m.get("id") for m in data if isinstance(m, dict)] if isinstance(data, list) else []
        ids = [i for i in ids if isinstance(i, str) and i]
        if not ids:
            raise EndpointRequestError(
                f"{self.settings.base_url}/models lists no model; set llm.model or THRESHER_LLM_MODEL"
            )
        with self._lock:
            self._model = ids[0]
        return ids[0]

    def complete(
        self,
        messages: Sequence[dict[str, Any]],
        tools: Sequence[dict[str, Any]],
        params: Mapping[str, Any],
    ) -> ChatResponse:
        """One chat completion, retried on transient failures.

        Args:
            messages: the chat messages, sent as is.
            tools: tool schemas (may be empty).
            params: further request fields (``temperature``, ``max_tokens``, …).

        Returns:
            The decoded completion with its attempt count and retry records.

        Raises:
            EndpointUnavailableError: every attempt failed transiently.
            EndpointRequestError: the server refused the request (4xx).
        """
        model = self.model()
        request: dict[str, Any] = {"model": model, "messages": list(messages), **params}
        if tools:
            request["tools"] = list(tools)

        def attempt() -> dict[str, Any]:
            raw = self._client.chat.completions.with_raw_response.create(**request)
            return _check_completion(_decode(raw.text, "chat completion"))

        return self._retrying(attempt, "chat completion")

    def _retrying(self, fn: Callable[[], dict[str, Any]], what: str) -> ChatResponse:
        openai = self._openai
        s = self.settings
        retries: list[RetryRecord] = []
        reason = ""
        for n in range(s.max_retries + 1):
            retry_after: float | None = None
            try:
                return ChatResponse(fn(), n + 1, tuple(retries))
            except openai.APIStatusError as exc:
                status = exc.status_code
                if status not in (408, 429) and status < 500:
                    raise EndpointRequestError(
                        f"{s.base_url} refused the {what} request: HTTP {status}: "
                        f"{_error_text(exc)}; check llm.model, llm.api_key_env and the server log"
                    ) from exc
                reason = f"HTTP {status}"
                retry_after = parse_retry_after(exc.response.headers.get("retry-after"))
            except openai.APITimeoutError:
                reason = f"no answer within {s.timeout_s}s"
            except openai.APIConnectionError as exc:
                cause = exc.__cause__ or exc
                reason = f"connection failed ({type(cause).__name__})"
            except _BadBody as exc:
                reason = str(exc)
            if n == s.max_retries:
                break
            wait = backoff_delay(n, s.backoff_s, retry_after, self._rng)
            retries.append(RetryRecord(n + 1, reason, round(wait, 3)))
            log.warning(
                "LLM %s attempt %d failed (%s); retrying in %.2fs", what, n + 1, reason, wait
            )
            self._sleep(wait)
        raise EndpointUnavailableError(
            f"LLM endpoint {s.base_url} did not answer the {what} request after "
            f"{s.max_retries + 1} attempt(s) (last: {reason}); start the server "
            "(see docs/serving.md), check llm.base_url, or raise llm.max_retries"
        )


def _error_text(exc: Any) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        message = inner.get("message") if isinstance(inner, dict) else inner
        if message:
            return " ".join(str(message).split())[:200]
    return " ".join(str(getattr(exc, "message", exc)).split())[:200]
