"""What a thresher server serves and the limits it holds: one typed settings object.

The HTTP API and the MCP server read the same :class:`ServeSettings`: which
indexes (collections) and policies a request may name, how many episodes run
at once and how many wait, how large a request and a question may be, and the
per-episode wall time. A request may tighten the server's episode settings
(:func:`request_config`), never loosen them: its config overrides are limited
to the budget, the episode caps and the retrieval mode, and every cap is at
most the server's own.
"""

from __future__ import annotations

import ipaddress
import os
import re
from collections.abc import Mapping
from dataclasses import field
from typing import Annotated, Any

from pydantic import ConfigDict, Field, InstanceOf, ValidationError, model_validator
from pydantic import dataclasses as validated

from thresher.config import Amount, Config, Count, config_error
from thresher.errors import ConfigError, InputError

__all__ = [
    "API_KEY_ENV",
    "ServeSettings",
    "UnknownCollection",
    "request_config",
    "is_loopback",
    "collection_name_for",
    "REQUEST_SECTIONS",
    "request_extras",
]

#: the environment variable holding the API key (unset: no key required)
API_KEY_ENV = "THRESHER_API_KEY"

#: dotted settings a request may override; ``section.*`` allows the whole section
REQUEST_SECTIONS = (
    "budget.*",
    "episode.*",
    "retrieval.mode",
    "retrieval.candidates",
    "retrieval.rrf_k",
    "retrieval.where",
    "retrieval.path",
    "grep.limit",
)
#: settings a request may lower but not raise above the server's value (caps, and the
#: shares and refusal counts past which the harness steps in)
_CAPPED = (
    "budget.total",
    "budget.per_call_tokens",
    "episode.max_turns",
    "episode.max_calls_per_turn",
    "episode.max_calls",
    "episode.wall_time_s",
    "episode.tool_timeout_s",
    "episode.search_results",
    "episode.max_final_documents",
    "retrieval.candidates",
    "grep.limit",
    "budget.soft_fraction",
    "budget.hard_fraction",
    "episode.max_refused_in_a_row",
    "episode.max_hard_refused_turns",
)
#: settings a request may raise but not lower below the server's value
_FLOORED = ("budget.reply_reserve",)
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


class UnknownCollection(InputError):
    """A request names a collection this server does not serve (HTTP 404)."""

    http_status = 404
    code = "unknown_collection"


#: a limit that must let something through
_AtLeastOne = Annotated[Count, Field(ge=1)]
#: a wait that must be longer than nothing
_Seconds = Annotated[Amount, Field(gt=0)]


@validated.dataclass(frozen=True, config=ConfigDict(extra="forbid"))
class ServeSettings:
    """Everything a server needs to answer requests.

    Attributes:
        collections: collection name -> index location (folder or Chroma server URL);
            the first is the default for requests that name none.
        policy: the default policy (a registered name or ``module:Factory``).
        policies: policy names a request may choose (``policy`` or ``model`` field);
            the default is always allowed. Only names listed here run: a request
            cannot load code by naming ``module:Factory``.
        config: the server's settings; its episode caps bound every request.
        max_concurrent: episodes running at once.
        max_queued: requests waiting for a slot; past that, 429 at once.
        queue_timeout_s: longest wait for a slot before 429.
        max_body_bytes: largest request body (413 past it).
        max_question_chars: longest question (413 past it).
        api_key: required on every request but ``/healthz`` and the schema when set.
        max_traces: finished traces kept in memory for ``GET /traces/{id}``.
        trace_dir: also write every trace there as ``<id>.jsonl`` (None: memory only).
        body_timeout_s: longest time a request body may take to arrive (408 past it).
        max_connections: open connections (and requests) at once; past it uvicorn
            answers 503 (its ``limit_concurrency``), but a connection with no request in
            progress is closed first to make room (:mod:`thresher.serve.connections`).
        max_connections_per_client: open connections from one client address; past it
            that client's oldest connection with no request in progress is closed.
        header_timeout_s: longest time a request head (request line and headers) may
            take to arrive once its first byte has (the connection is closed past it).
        idle_timeout_s: longest time a connection may stay open with nothing received
            of a request, fresh or kept alive after a response (closed past it).
        trace_dir_max_files, trace_dir_max_bytes: the most traces (files, bytes) kept
            in ``trace_dir``; the oldest are deleted past either.
        max_retrieve_queries, max_retrieve_topk: the most queries in one ``POST /retrieve``
            and documents per query (413 past either).
        allowed_hosts: ``Host`` names the HTTP API answers besides its bound address
            (``NAME`` or ``NAME:PORT``; ``*``: any); see :mod:`thresher.serve.hosts`.
    """

    collections: Mapping[str, str]
    policy: str = "local"
    policies: tuple[str, ...] = ()
    config: InstanceOf[Config] = field(default_factory=Config)
    max_concurrent: _AtLeastOne = 4
    max_queued: Count = 16
    queue_timeout_s: Amount = 30.0
    max_body_bytes: _AtLeastOne = 64 * 1024
    max_question_chars: _AtLeastOne = 4000
    api_key: str | None = None
    max_traces: _AtLeastOne = 256
    trace_dir: str | None = None
    allowed_hosts: tuple[str, ...] = ()
    body_timeout_s: _Seconds = 10.0
    max_connections: _AtLeastOne = 128
    max_connections_per_client: _AtLeastOne = 32
    header_timeout_s: _Seconds = 5.0
    idle_timeout_s: _Seconds = 5.0
    trace_dir_max_files: _AtLeastOne = 10_000
    trace_dir_max_bytes: _AtLeastOne = 1 << 30
    max_retrieve_queries: _AtLeastOne = 64
    max_retrieve_topk: _AtLeastOne = 50

    @model_validator(mode="wrap")
    @classmethod
    def _as_config_error(cls, data: Any, handler: Any) -> Any:
        try:
            return handler(data)
        except ValidationError as exc:  # one line naming the setting and what it takes
            raise config_error(exc, cls, label="serve setting") from None

    def __post_init__(self) -> None:
        if not self.collections:
            raise ConfigError("a server needs an index: give --index DIR|URL")
        for name in self.collections:
            if not _NAME.match(name):
                raise ConfigError(
                    f"collection name {name!r} must be 1-128 letters, digits, '.', '_' or '-'"
                )

    @property
    def default_collection(self) -> str:
        """The collection a request without ``collection_name`` searches."""
        return next(iter(self.collections))

    @property
    def allowed_policies(self) -> tuple[str, ...]:
        """The default policy first, then the others a request may name."""
        return (self.policy, *[p for p in self.policies if p != self.policy])

    @classmethod
    def key_from_env(cls) -> str | None:
        """The API key from ``THRESHER_API_KEY`` (None when unset or empty)."""
        return os.environ.get(API_KEY_ENV) or None

    def choose_policy(self, requested: str | None) -> str:
        """The policy a request runs: its ``policy``/``model`` field if allowed, else the default.

        Raises ``InputError`` naming the allowed policies for any other name.
        """
        if not requested:
            return self.policy
        if requested in self.allowed_policies:
            return requested
        raise InputError(
            f"policy {requested!r} is not served here; choose one of "
            f"{', '.join(self.allowed_policies)} (start the server with --policies to add more)"
        )

    def choose_collection(self, requested: str | None) -> tuple[str, str]:
        """``(name, location)`` of the collection a request names (None: the default).

        Raises ``UnknownCollection`` naming the served collections otherwise.
        """
        name = requested or self.default_collection
        location = self.collections.get(name)
        if location is None:
            raise UnknownCollection(
                f"collection {name!r} is not served here; served: {', '.join(self.collections)}"
                " (start the server with --collection NAME=DIR|URL to add one)"
            )
        return name, location


def _allowed(key: str) -> bool:
    section = key.partition(".")[0]
    return key in REQUEST_SECTIONS or f"{section}.*" in REQUEST_SECTIONS


def _flatten(overrides: Mapping[str, Any]) -> dict[str, Any]:
    """``{"budget": {"total": 1}}`` and ``{"budget.total": 1}`` alike, as dotted keys."""
    flat: dict[str, Any] = {}
    for key, value in overrides.items():
        if isinstance(value, Mapping):
            for inner, v in value.items():
                flat[f"{key}.{inner}"] = v
        else:
            flat[str(key)] = value
    return flat


def request_config(base: Config, overrides: Mapping[str, Any] | None) -> Config:
    """The config one request runs with: ``base`` plus the request's allowed overrides.

    Args:
        base: the server's config.
        overrides: dotted (``{"budget.total": 8192}``) or nested settings from the request.

    Returns:
        ``base`` with the overrides applied.

    Raises:
        InputError: a setting a request may not change (the LLM endpoint, the
            embedder, ...), or a cap raised above the server's value.
        ConfigError: an unknown or ill-typed setting.
    """
    if not overrides:
        return base
    flat = _flatten(overrides)
    refused = sorted(k for k in flat if not _allowed(k))
    if refused:
        raise InputError(
            f"a request may not set {', '.join(refused)}; it may set "
            f"{', '.join(REQUEST_SECTIONS)} (the server's own config sets the rest)"
        )
    config = base.override(flat)
    for key in _CAPPED:
        section, _, name = key.partition(".")
        mine = getattr(getattr(base, section), name)
        theirs = getattr(getattr(config, section), name)
        if theirs > mine:
            raise InputError(
                f"{key}={theirs} is over this server's limit of {mine}; a request may only "
                "tighten the server's settings"
            )
    for key in _FLOORED:
        section, _, name = key.partition(".")
        mine = getattr(getattr(base, section), name)
        theirs = getattr(getattr(config, section), name)
        if theirs < mine:
            raise InputError(
                f"{key}={theirs} is under this server's {mine}; a request may only tighten "
                "the server's settings"
            )
    return config


def is_loopback(host: str) -> bool:
    """Whether ``host`` is a loopback address or ``localhost`` (what a server binds by default)."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def collection_name_for(location: str) -> str:
    """A collection name for an index location: the folder's or the URL path's last part."""
    tail = location.rstrip("/").rsplit("/", 1)[-1]
    cleaned = re.sub(r"[^A-Za-z0-9._-]+", "-", tail).strip("-.")
    return cleaned[:128] or "default"


def request_extras(
    k: int | None, where: Mapping[str, Any] | None, path: str | None
) -> dict[str, Any]:
    """A request's ``k``, ``where`` and ``path`` as config overrides (``episode.k``,
    ``retrieval.where`` as JSON text, ``retrieval.path``); only those given.

    Raises:
        InputError: a ``where`` that is not of Chroma's form.
    """
    import json

    from thresher.index.filters import DocFilter

    out: dict[str, Any] = {}
    if k is not None:
        out["episode.k"] = k
    checked = DocFilter.parse(where, path)
    if checked is not None and checked.where is not None:
        out["retrieval.where"] = json.dumps(checked.where)
    if checked is not None and checked.path is not None:
        out["retrieval.path"] = checked.path
    return out
