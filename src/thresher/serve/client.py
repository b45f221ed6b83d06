"""A small client of a running thresher API (``thresher serve``): one question, one JSON Result.

For programs that call thresher over HTTP rather than in-process (the
adapters' ``url=`` mode, scripts on another process). It asks
``POST /search`` with ``Accept: application/json`` and returns the Result
object the server sends; streaming clients read the SSE events directly (see
``docs/serving.md``).
"""

from __future__ import annotations

from typing import Any

from thresher.errors import BackendUnavailableError, InputError

__all__ = ["ThresherClient"]


class ThresherClient:
    """Calls ``POST /search`` on a thresher server.

    Args:
        url: the server's base URL (``http://127.0.0.1:8080``).
        api_key: the server's key (``THRESHER_API_KEY``), when it has one.
        timeout_s: how long to wait for an episode (the server bounds it too).
    """

    def __init__(self, url: str, api_key: str | None = None, timeout_s: float = 600.0) -> None:
        self.url = url.rstrip("/")
        self.api_key = api_key
        self.timeout_s = timeout_s

    def search(
        self,
        question: str,
        *,
        collection_name: str | None = None,
        policy: str | None = None,
        config: dict[str, Any] | None = None,
        k: int | None = None,
    ) -> dict[str, Any]:
        """One episode's Result as the server returns it (``documents``, ``exit_reason``, ...);
        ``k``: how many documents (the request's ``"k"``; None: the policy's own number).

        Raises:
            InputError: the server refused the request (4xx), with its message.
            BackendUnavailableError: the server cannot be reached, is busy (429) or failed.
        """
        import httpx

        body: dict[str, Any] = {"query": question}
        for key, value in (("collection_name", collection_name), ("policy", policy)):
            if value is not None:
                body[key] = value
        if config:
            body["config"] = config
        if k is not None:
            body["k"] = k
        headers = {"Accept": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        try:
            reply = httpx.post(
                f"{self.url}/search", json=body, headers=headers, timeout=self.timeout_s
            )
        except httpx.HTTPError as exc:
            raise BackendUnavailableError(
                f"cannot reach the thresher server at {self.url} ({exc}); start it with "
                "`thresher serve --index DIR`"
            ) from exc
        if reply.status_code == 200:
            data: dict[str, Any] = reply.json()
            return data
        message = _message(reply)
        if reply.status_code == 429 or reply.status_code >= 500:
            wait = reply.headers.get("Retry-After")
            hint = f"; retry in {wait} s" if wait else ""
            raise BackendUnavailableError(
                f"thresher server {self.url}: {reply.status_code} {message}{hint}"
            )
        raise InputError(f"thresher server {self.url}: {reply.status_code} {message}")


def _message(reply: Any) -> str:
    try:
        return str(reply.json().get("message", reply.text))
    except ValueError:
        return str(reply.text)[:500]
