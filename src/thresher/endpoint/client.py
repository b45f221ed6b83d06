"""Requests to an OpenAI-compatible endpoint: one retry policy, one mapping of failures.

What is retried, and what is not:

* retried: HTTP 408, 429 and 5xx, timeouts, and connections dropped before
  or during the response. The wait is exponential with jitter,
  ``backoff_s · 2^attempt · U(0.5, 1)``, never shorter than the server's
  ``Retry-After`` and never longer than :data:`~thresher.endpoint.retry.MAX_WAIT_S`. When every attempt
  fails the request raises :class:`EndpointUnavailableError`
  (:class:`EndpointTimeoutError` when every attempt timed out).
* failing at once with :class:`EndpointUnavailableError`: a refused connection
  or an unknown host (no server at ``base_url``; waiting does not start one).
* failing at once with :class:`EndpointResponseError`: a 2xx body that is not
  what was asked for (an HTML page, JSON of another shape, garbage), which
  means ``base_url`` points at something that is not an OpenAI-compatible
  ``/v1``; a retry would get the same page.
* failing at once with :class:`EndpointRequestError`: any other 4xx (retrying
  cannot fix the request).

The loop is tenacity's (:meth:`EndpointClient.call`), not the ``openai``
client's ``max_retries`` (the client is built with ``max_retries=0``): every
retry must be counted per request and reported back (:class:`RetryRecord`,
which the LLM policy writes into the trace), and the openai loop retries
refused connections too, keeps its own backoff instead of ``backoff_s``, and
sleeps for real in tests. Every message ends with what to check, in the
caller's words (:class:`Advice`).
"""

from __future__ import annotations

import json
import logging
import random
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

import tenacity

from thresher.endpoint.retry import backoff_delay, error_text, no_connection, parse_retry_after
from thresher.endpoint.settings import EndpointSettings
from thresher.errors import BackendUnavailableError, ThresherError

__all__ = [
    "Advice",
    "EndpointUnavailableError",
    "EndpointTimeoutError",
    "EndpointCancelledError",
    "EndpointResponseError",
    "EndpointRequestError",
    "RetryRecord",
    "Attempted",
    "RawResponse",
    "EndpointClient",
    "decode_json",
    "not_a",
]

T = TypeVar("T")
log = logging.getLogger("thresher.endpoint")

#: characters of an unexpected body quoted in :class:`EndpointResponseError`
BODY_SNIPPET_CHARS = 100


class EndpointUnavailableError(BackendUnavailableError):
    """No usable endpoint: no server at ``base_url``, or no answer after every retry.

    An LLM episode ends ``endpoint_unavailable``.
    """


class EndpointTimeoutError(EndpointUnavailableError):
    """Every attempt timed out: the server took the request and did not answer in time."""


class EndpointCancelledError(ThresherError):
    """The call was cancelled (its client closed), e.g. because its episode ended."""


class EndpointResponseError(EndpointUnavailableError):
    """The endpoint answered with a body that is not what was asked for: not retried.

    ``base_url`` most likely points at something other than the ``/v1`` root of
    an OpenAI-compatible server (a web page, a proxy, the server's root). The
    model never replied, so an LLM episode ends ``endpoint_unavailable``, like an
    endpoint that is down, and not ``policy_error``, which blames the policy.
    """


class EndpointRequestError(ThresherError):
    """The endpoint refused the request itself (HTTP 4xx other than 408/429): not retried."""


@dataclass(frozen=True, slots=True)
class Advice:
    """What each error tells the user to do, in the words of the caller's settings.

    Attributes:
        endpoint: how messages name the endpoint (``LLM endpoint``).
        no_server: no connection could be made (refused, unknown host).
        unavailable: every attempt failed.
        refused: the server refused the request (4xx).
        not_api: a body that is not what was asked for.
        timeout_setting: the setting that bounds a request, as ``name={timeout_s:g}``
            with any note (formatted with ``timeout_s``).
        slow: every attempt timed out.
    """

    endpoint: str
    no_server: str
    unavailable: str
    refused: str
    not_api: str
    timeout_setting: str
    slow: str


@dataclass(frozen=True, slots=True)
class RetryRecord:
    """One failed attempt that was retried: 1-based attempt, why, and the wait before the next."""

    attempt: int
    reason: str
    wait_s: float


@dataclass(frozen=True, slots=True)
class Attempted(Generic[T]):
    """A call's value and what it took to get it."""

    value: T
    attempts: int
    retries: tuple[RetryRecord, ...] = ()


class RawResponse(Protocol):
    """What is read of an undecoded response (``openai``'s ``with_raw_response`` results)."""

    @property
    def status_code(self) -> int: ...

    @property
    def headers(self) -> Mapping[str, str]: ...

    @property
    def text(self) -> str: ...


def not_a(
    raw: RawResponse, expected: str, problem: str, base_url: str, advice: Advice
) -> EndpointResponseError:
    """The error for a 2xx body that is not ``expected``: what came back and what to check."""
    snippet = " ".join(raw.text.split())[:BODY_SNIPPET_CHARS]
    ctype = raw.headers.get("content-type") or "none"
    return EndpointResponseError(
        f"{base_url} answered with something that is not {expected} ({problem}): "
        f"HTTP {raw.status_code}, content-type {ctype}, body {snippet!r}; {advice.not_api}"
    )


def decode_json(raw: RawResponse, expected: str, base_url: str, advice: Advice) -> dict[str, Any]:
    """The body as a JSON object. Raises EndpointResponseError when it is not one."""
    try:
        body = json.loads(raw.text)
    except ValueError:
        raise not_a(raw, expected, "the body is not JSON", base_url, advice) from None
    if not isinstance(body, dict):
        raise not_a(raw, expected, "the body is not a JSON object", base_url, advice)
    return body


class _Transient(Exception):
    """A failed attempt worth retrying (internal to :meth:`EndpointClient.call`)."""

    def __init__(self, reason: str, retry_after: float | None, timed_out: bool) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retry_after = retry_after
        self.timed_out = timed_out


class EndpointClient:
    """The ``openai`` client of one endpoint, and :meth:`call`, its retried requests.

    Args:
        settings: the endpoint (see :class:`~thresher.endpoint.settings.EndpointSettings`).
        advice: what the errors tell the user to check.
        sleep: waits between attempts (tests pass a recorder).
        rng: jitter source.
    """

    def __init__(
        self,
        settings: EndpointSettings,
        advice: Advice,
        *,
        sleep: Callable[[float], None] = time.sleep,
        rng: random.Random | None = None,
    ) -> None:
        import openai  # imported here so that importing a caller stays cheap

        self.settings = settings
        self.advice = advice
        self.sleep = sleep
        self.rng = rng or random.Random()
        self._openai = openai
        #: the ``openai`` client (no retries of its own)
        self.openai = openai.OpenAI(
            base_url=settings.base_url,
            api_key=settings.api_key,
            max_retries=0,
            timeout=settings.timeout_s,
        )
        self._closed = threading.Event()

    def close(self) -> None:
        """Close this client's connections: a request in flight fails at once and is not
        retried (:class:`EndpointCancelledError`). Idempotent; safe from another thread."""
        self._closed.set()
        self.openai.close()

    def call(self, fn: Callable[[], T], what: str, timeout_s: float | None = None) -> Attempted[T]:
        """``fn()`` (one request through :attr:`openai`) with its transient failures retried.

        Args:
            fn: makes the request and decodes its answer (raising ``openai``'s errors,
                or :class:`EndpointResponseError` for a body of the wrong shape).
            what: the request, as messages name it (``chat completion``).
            timeout_s: the timeout ``fn`` was given, when not ``settings.timeout_s``.

        Raises:
            EndpointUnavailableError: no server (at once), or every attempt failed.
            EndpointTimeoutError: every attempt timed out.
            EndpointResponseError: the body is not what was asked for (at once).
            EndpointRequestError: the server refused the request (4xx, at once).
            EndpointCancelledError: :meth:`close` was called.
        """
        s = self.settings
        limit = s.timeout_s if timeout_s is None else timeout_s
        retries: list[RetryRecord] = []
        timeouts = 0

        def attempt() -> T:
            nonlocal timeouts
            if self._closed.is_set():
                raise EndpointCancelledError(f"the {what} request was cancelled")
            try:
                return fn()
            except (self._openai.APIStatusError, self._openai.APIConnectionError) as exc:
                if self._closed.is_set():  # closed under the request
                    raise EndpointCancelledError(f"the {what} request was cancelled") from exc
                transient = self._transient(exc, what, limit)
                timeouts += transient.timed_out
                raise transient from exc

        def wait(state: tenacity.RetryCallState) -> float:
            failed = state.outcome.exception() if state.outcome else None
            after = failed.retry_after if isinstance(failed, _Transient) else None
            return backoff_delay(state.attempt_number - 1, s.backoff_s, after, self.rng)

        def record(state: tenacity.RetryCallState) -> None:
            failed = state.outcome.exception() if state.outcome else None
            reason = failed.reason if isinstance(failed, _Transient) else ""
            pause = state.next_action.sleep if state.next_action else 0.0
            retries.append(RetryRecord(state.attempt_number, reason, round(pause, 3)))
            log.warning(
                "%s %s attempt %d failed (%s); retrying in %.2fs",
                self.advice.endpoint, what, state.attempt_number, reason, pause,
            )  # fmt: skip

        retrying = tenacity.Retrying(
            stop=tenacity.stop_after_attempt(s.max_retries + 1),
            wait=wait,
            retry=tenacity.retry_if_exception_type(_Transient),
            before_sleep=record,
            sleep=self.sleep,
            reraise=True,
        )
        try:
            value = retrying(attempt)
        except _Transient as last:
            raise self._gave_up(what, limit, timeouts, last.reason) from last
        return Attempted(value, len(retries) + 1, tuple(retries))

    def _gave_up(self, what: str, limit: float, timeouts: int, reason: str) -> Exception:
        s, advice = self.settings, self.advice
        if timeouts == s.max_retries + 1:
            return EndpointTimeoutError(
                f"{advice.endpoint} {s.base_url} accepted the {what} request but did not answer "
                f"within {limit:g}s ({advice.timeout_setting.format(timeout_s=s.timeout_s)}), "
                f"{timeouts} time(s): {advice.slow}"
            )
        return EndpointUnavailableError(
            f"{advice.endpoint} {s.base_url} did not answer the {what} request after "
            f"{s.max_retries + 1} attempt(s) (last: {reason}); {advice.unavailable}"
        )

    def _transient(self, exc: Exception, what: str, limit: float) -> _Transient:
        """A retryable failure; raises the typed error of the others.

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
                    f"{error_text(exc)}; {self.advice.refused}"
                ) from exc
            after = parse_retry_after(exc.response.headers.get("retry-after"))
            return _Transient(f"HTTP {status}", after, False)
        if isinstance(exc, openai.APITimeoutError):
            return _Transient(f"no answer within {limit:g}s", None, True)
        why = no_connection(exc)
        if why is not None:
            raise EndpointUnavailableError(
                f"no server at {s.base_url}: {self.advice.no_server} ({why})"
            ) from exc
        cause = exc.__cause__ or exc
        return _Transient(f"connection failed ({type(cause).__name__})", None, False)
